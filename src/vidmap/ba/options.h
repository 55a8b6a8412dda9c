// Options and Summary of the bundle adjuster, after Ceres' Solver::Options and Solver::Summary:
// the trust-region defaults are Ceres' so that both solvers take the same steps.
#pragma once

#include <string>
#include <vector>

#include "vidmap/ba/types.h"

namespace vidmap::gpu {
class Context;
}

namespace vidmap::ba {

enum class LinearSolverType {
  kAuto,            // dense when the camera-side columns are at most denseSchurMaxColumns
  kDenseSchur,      // explicit reduced camera system, dense Cholesky (Ceres DENSE_SCHUR)
  kIterativeSchur,  // conjugate gradients on implicit Schur products (Ceres ITERATIVE_SCHUR)
};
enum class PreconditionerType {
  kSchurJacobi,  // block diagonal of the Schur complement (Ceres SCHUR_JACOBI)
  kJacobi,       // block diagonal of F'F + D^2 (Ceres JACOBI with ITERATIVE_SCHUR)
};
enum class BackendType { kCpu, kCuda };
enum class Gauge {
  kNone,                // only the constant blocks the problem sets (Ceres' behaviour)
  kFirstImageAndScale,  // also hold the first observed image's pose and one coordinate of the
                        // second observed image's translation (the one that scale moves most)
};
enum class TerminationType { kConvergence, kNoConvergence, kFailure };

struct Options {
  BackendType backend = BackendType::kCpu;
  LinearSolverType linearSolver = LinearSolverType::kAuto;
  int denseSchurMaxColumns = 2000;
  PreconditionerType preconditioner = PreconditionerType::kSchurJacobi;
  LossType loss = LossType::kTrivial;
  double lossScale = 1.0;
  Gauge gauge = Gauge::kNone;
  // A point with fewer than two observations has no depth; it is held constant (and counted
  // in Summary::numPointsHeld) instead of being left to the damping.
  bool holdSingleViewPoints = true;

  // Ceres' defaults (Solver::Options).
  int maxNumIterations = 50;
  double maxSolverTimeSeconds = 1e6;
  double functionTolerance = 1e-6;
  // Also stop when an iteration lowers the cost by no more than riseTolerance times the cost's
  // excess over riseBase (0: off). For a profile of the cost (pipeline/focal_check.h), whose
  // statistic is that excess: it is then known to about this fraction of itself, where a
  // tolerance relative to the whole cost asks the same absolute precision of a rise of
  // thousands of sigma^2 as of one near the decision.
  double riseTolerance = 0.0;
  double riseBase = 0.0;
  double gradientTolerance = 1e-10;
  double parameterTolerance = 1e-8;
  double initialTrustRegionRadius = 1e4;
  double maxTrustRegionRadius = 1e16;
  double minTrustRegionRadius = 1e-32;
  double minRelativeDecrease = 1e-3;
  double minLmDiagonal = 1e-6;
  double maxLmDiagonal = 1e32;
  int maxNumConsecutiveInvalidSteps = 5;
  bool jacobiScaling = true;
  double eta = 1e-1;  // conjugate gradients stop at Nash-Sofer's zeta < eta
  int minLinearSolverIterations = 0;
  int maxLinearSolverIterations = 500;
  int residualResetPeriod = 10;

  int numThreads = 0;  // CPU threads; 0: OpenMP's default
  // At most one thread per this many active observations (0: no limit). A thread's share of a
  // small problem is shorter than the wake-up and barrier of a parallel loop, which on a busy
  // machine waits for a descheduled thread (the mapper's local windows, a few thousand
  // observations, ran 2-5x longer in wall time than in CPU time on 2 shared cores).
  int minObservationsPerThread = 10000;
  // The CPU backend's Schur segment sums run four doubles at a time where the CPU has AVX2 (the
  // same results bit for bit, cpu_backend.cc); false: the baseline x86-64 code everywhere.
  bool cpuAvx2 = true;
  // The CUDA backend runs on this context (its kernels and memory are counted there, for the
  // run record) when given; otherwise on a context of its own on device 0. Not owned.
  gpu::Context* context = nullptr;
  // The CUDA backend replays each LM iteration's launches of the explicit system as two CUDA
  // graphs (the step with the candidate's cost; the acceptance with the linearisation there),
  // each followed by one read-back of its scalars, instead of launching and waiting for each
  // phase. Same kernels in the same order: the same results. Off: per-phase times in the
  // Summary.
  bool cudaGraphs = true;
  // The CUDA backend factors and solves a reduced system of at most this many columns in one
  // kernel (one block, the matrix in shared memory) instead of cuSOLVER's potrf and potrs
  // (three kernels, about 60 us on the H200 whatever the size); 0: cuSOLVER always. Another
  // order of rounding, so another model: off until measured on the mapper's sequences.
  int cudaOneBlockCholeskyMaxColumns = 0;
  // Its largest value: 64 columns and the right-hand side take 33 KiB, under the 48 KiB of
  // shared memory a block has without opting in.
  static constexpr int kOneBlockCholeskyColumnsLimit = 64;
  bool verbose = false;  // one line per iteration on stderr

  // Throws vidmap::Error naming the bad field and its range.
  void check() const;
};

struct IterationSummary {
  int iteration = 0;
  double cost = 0.0;
  double costChange = 0.0;
  double gradientMaxNorm = 0.0;
  double stepNorm = 0.0;
  double relativeDecrease = 0.0;
  double trustRegionRadius = 0.0;
  bool stepIsValid = false;
  bool stepIsSuccessful = false;
  int linearSolverIterations = 0;
  double iterationTimeSeconds = 0.0;
  double cumulativeTimeSeconds = 0.0;
};

struct Summary {
  TerminationType termination = TerminationType::kFailure;
  std::string message;
  double initialCost = 0.0;  // 0.5 sum rho(|r|^2) over all observations
  double finalCost = 0.0;
  double fixedCost = 0.0;  // of observations whose blocks are all constant
  // LM iterations (iteration 0, the initial evaluation, is not counted).
  int numSuccessfulSteps = 0;
  int numUnsuccessfulSteps = 0;
  int numLinearSolverIterations = 0;
  std::vector<IterationSummary> iterations;  // iterations[0] is the initial point

  LinearSolverType linearSolver = LinearSolverType::kDenseSchur;
  BackendType backend = BackendType::kCpu;
  int numThreads = 1;
  int numImages = 0, numCameras = 0, numPoints = 0, numObservations = 0;
  int numCameraColumns = 0, numPointColumns = 0;
  int numPointsHeld = 0;        // fewer than two observations: held constant
  int numImagesUnobserved = 0;  // no observations: held constant
  int numCamerasUnobserved = 0;
  std::string gauge;  // what the gauge option held, if anything

  // How the CUDA backend launched its work: "graphs" (Options::cudaGraphs), "graphs, cuSOLVER
  // outside (why)", "phases" (one launch and wait per phase, with why when graphs failed);
  // empty on the CPU.
  std::string launchMode;

  // Seconds. schur: point elimination, reduced system (or preconditioner) assembly;
  // linearSolve: Cholesky or conjugate gradients; minimizer: the whole LM loop. With CUDA
  // graphs the phases of a replay are not timed apart: schur holds the whole step (with the
  // solve, the back-substitution and the candidate's cost), jacobian the acceptance and the
  // linearisation.
  double preprocessorSeconds = 0.0;
  double jacobianEvaluationSeconds = 0.0;
  double residualEvaluationSeconds = 0.0;
  double schurSeconds = 0.0;
  double linearSolveSeconds = 0.0;
  double backSubstitutionSeconds = 0.0;
  double minimizerSeconds = 0.0;
  double totalSeconds = 0.0;
  // The fixed costs of a solve (parts of the above): the backend's construction (CUDA: device
  // arrays and uploads; in preprocessorSeconds), the CUDA graphs' capture and instantiation (in
  // minimizerSeconds), and the backend's destruction after the minimizer (in totalSeconds).
  double backendSeconds = 0.0;
  double graphCaptureSeconds = 0.0;
  double teardownSeconds = 0.0;

  int numIterations() const { return numSuccessfulSteps + numUnsuccessfulSteps; }
  bool isSolutionUsable() const { return termination != TerminationType::kFailure; }
  std::string briefReport() const;
  std::string fullReport() const;
};

const char* toString(LinearSolverType t);
const char* toString(TerminationType t);
const char* toString(BackendType t);
const char* toString(LossType t);

}  // namespace vidmap::ba
