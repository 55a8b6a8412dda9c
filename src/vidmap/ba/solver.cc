#include "vidmap/ba/solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "vidmap/ba/backend.h"
#include "vidmap/ba/structure.h"
#include "vidmap/core/check.h"
#include "vidmap/core/error.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace vidmap::ba {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Restores OpenMP's thread count on exit.
class ThreadScope {
 public:
  explicit ThreadScope(int n) {
#if defined(_OPENMP)
    saved_ = omp_get_max_threads();
    if (n > 0) omp_set_num_threads(n);
#endif
    (void)n;
  }
  ~ThreadScope() {
#if defined(_OPENMP)
    omp_set_num_threads(saved_);
#endif
  }

 private:
  int saved_ = 1;
};

// Ceres' LevenbergMarquardtStrategy radius bookkeeping.
struct Radius {
  double radius, maxRadius, decreaseFactor = 2.0;
  void accepted(double quality) {
    radius = radius / std::max(1.0 / 3.0, 1.0 - std::pow(2.0 * quality - 1.0, 3));
    radius = std::min(maxRadius, radius);
    decreaseFactor = 2.0;
  }
  void rejected() {
    radius = radius / decreaseFactor;
    decreaseFactor *= 2.0;
  }
};

}  // namespace

void Options::check() const {
  checkRange("ba.denseSchurMaxColumns", denseSchurMaxColumns, 0, 1 << 20);
  checkRange("ba.lossScale", lossScale, 1e-300, 1e300);
  checkRange("ba.maxNumIterations", maxNumIterations, 0, 1 << 30);
  checkRange("ba.maxSolverTimeSeconds", maxSolverTimeSeconds, 0.0, 1e300);
  checkRange("ba.functionTolerance", functionTolerance, 0.0, 1.0);
  checkRange("ba.riseTolerance", riseTolerance, 0.0, 1.0);
  checkRange("ba.riseBase", riseBase, 0.0, 1e300);
  checkRange("ba.gradientTolerance", gradientTolerance, 0.0, 1e300);
  checkRange("ba.parameterTolerance", parameterTolerance, 0.0, 1.0);
  checkRange("ba.initialTrustRegionRadius", initialTrustRegionRadius, 1e-300, 1e300);
  checkRange("ba.maxTrustRegionRadius", maxTrustRegionRadius, initialTrustRegionRadius, 1e300);
  checkRange("ba.minTrustRegionRadius", minTrustRegionRadius, 0.0, initialTrustRegionRadius);
  checkRange("ba.minRelativeDecrease", minRelativeDecrease, 0.0, 1.0);
  checkRange("ba.minLmDiagonal", minLmDiagonal, 1e-300, 1e300);
  checkRange("ba.maxLmDiagonal", maxLmDiagonal, minLmDiagonal, 1e300);
  checkRange("ba.maxNumConsecutiveInvalidSteps", maxNumConsecutiveInvalidSteps, 0, 1 << 30);
  checkRange("ba.eta", eta, 1e-300, 1.0);
  checkRange("ba.cudaOneBlockCholeskyMaxColumns", cudaOneBlockCholeskyMaxColumns, 0,
             kOneBlockCholeskyColumnsLimit);
  checkRange("ba.minLinearSolverIterations", minLinearSolverIterations, 0, 1 << 30);
  checkRange("ba.maxLinearSolverIterations", maxLinearSolverIterations,
             std::max(1, minLinearSolverIterations), 1 << 30);
  checkRange("ba.residualResetPeriod", residualResetPeriod, 1, 1 << 30);
  checkRange("ba.numThreads", numThreads, 0, 4096);
  checkRange("ba.minObservationsPerThread", minObservationsPerThread, 0, 1 << 30);
}

Summary solve(Problem& problem, const Options& options) {
  const double tStart = now();
  options.check();
  problem.check();
  Summary sum;
  int numThreads = options.numThreads;
#if defined(_OPENMP)
  if (numThreads == 0) numThreads = omp_get_max_threads();
#endif
  if (options.minObservationsPerThread > 0)
    numThreads = std::max<std::int64_t>(
        1,
        std::min<std::int64_t>(numThreads, static_cast<std::int64_t>(problem.observations.size()) /
                                               options.minObservationsPerThread));
  const ThreadScope threads(numThreads);

  // Preprocess: the structure (which depends on the linear solver), the fixed cost.
  // The pairs of every image pair are listed only for the explicit system.
  Structure s = buildStructure(problem, options, false);
  const bool explicitSchur =
      options.linearSolver == LinearSolverType::kDenseSchur ||
      (options.linearSolver == LinearSolverType::kAuto && s.nF <= options.denseSchurMaxColumns);
  const double tOneSided = now();
  if (explicitSchur) listSegments(s, true);
  sum.linearSolver =
      explicitSchur ? LinearSolverType::kDenseSchur : LinearSolverType::kIterativeSchur;
  sum.backend = options.backend;
  sum.numImages = s.numImages;
  sum.numCameras = s.numCameras;
  sum.numPoints = s.numPoints;
  sum.numObservations = static_cast<int>(problem.observations.size());
  sum.numCameraColumns = s.nF;
  sum.numPointColumns = s.nE;
  sum.numPointsHeld = s.numPointsHeld;
  sum.numImagesUnobserved = s.numImagesUnobserved;
  sum.numCamerasUnobserved = s.numCamerasUnobserved;
  sum.gauge = s.gaugeNote;
  const double tStructure = now();
  sum.fixedCost = fixedCost(problem, s, options);
  const double tFixed = now();

  BackendInput in{&problem, &s, &options, explicitSchur};
  std::unique_ptr<Backend> be =
      options.backend == BackendType::kCuda ? makeCudaBackend(in) : makeCpuBackend(in);
  sum.numThreads = be->numThreads();
  const double tMin = now();
  sum.preprocessorSeconds = tMin - tStart;
  sum.backendSeconds = tMin - tFixed;
  if (options.verbose)
    std::fprintf(stderr,
                 "ba preprocessor %.4fs: structure %.4fs (pair listing %.4fs, %zu observation "
                 "pairs), fixed cost %.4fs, backend %.4fs\n",
                 sum.preprocessorSeconds, tStructure - tStart, tStructure - tOneSided,
                 s.pairA.size(), tFixed - tStructure, tMin - tFixed);

  auto finish = [&](TerminationType t, const std::string& msg) {
    sum.termination = t;
    sum.message = msg;
    // Ceres' final cost: the least cost among the successful iterations.
    sum.finalCost = sum.initialCost;
    for (const auto& it : sum.iterations)
      if (it.stepIsSuccessful) sum.finalCost = std::min(sum.finalCost, it.cost);
    storeParameters(be->parameters(), s, problem);
    for (const auto& it : sum.iterations)
      sum.numLinearSolverIterations += it.linearSolverIterations;
    sum.jacobianEvaluationSeconds = be->times.jacobian;
    sum.residualEvaluationSeconds = be->times.residual;
    sum.schurSeconds = be->times.schur;
    sum.linearSolveSeconds = be->times.linearSolve;
    sum.backSubstitutionSeconds = be->times.backSubstitution;
    sum.graphCaptureSeconds = be->times.graphCapture;
    sum.launchMode = be->launchMode();
    sum.minimizerSeconds = now() - tMin;
    const double tTeardown = now();
    be.reset();
    sum.teardownSeconds = now() - tTeardown;
    sum.totalSeconds = now() - tStart;
    return sum;
  };

  // Iteration zero.
  double xCost = 0.0, gradMax = 0.0;
  if (!be->linearize(true, &xCost, &gradMax))
    throw Error(
        "bundle adjustment: the residuals or the Jacobian at the initial parameters are "
        "not finite (a point on a camera's plane, or behind a BAL camera at z = 0)");
  sum.initialCost = xCost + sum.fixedCost;
  Radius radius{options.initialTrustRegionRadius, options.maxTrustRegionRadius};
  double xNorm = -1.0;  // Ceres starts with an invalid norm: no parameter test before a success
  IterationSummary it;
  it.cost = sum.initialCost;
  it.gradientMaxNorm = gradMax;
  it.stepIsValid = it.stepIsSuccessful = true;
  it.trustRegionRadius = radius.radius;
  double iterStart = tMin;

  auto log = [&](const IterationSummary& i) {
    if (!options.verbose) return;
    std::fprintf(stderr,
                 "ba %4d cost %.9e change %+.3e |g| %.2e |step| %.2e ratio %.2e radius %.2e "
                 "li %d %.3fs\n",
                 i.iteration, i.cost, i.costChange, i.gradientMaxNorm, i.stepNorm,
                 i.relativeDecrease, i.trustRegionRadius, i.linearSolverIterations,
                 i.iterationTimeSeconds);
  };
  // Ceres' FinalizeIterationAndCheckIfMinimizerCanContinue.
  auto finalize = [&](IterationSummary& i, std::string* stop, TerminationType* type) {
    if (i.iteration > 0) {
      if (i.stepIsSuccessful)
        ++sum.numSuccessfulSteps;
      else
        ++sum.numUnsuccessfulSteps;
    }
    i.trustRegionRadius = radius.radius;
    i.iterationTimeSeconds = now() - iterStart;
    i.cumulativeTimeSeconds = now() - tStart;
    sum.iterations.push_back(i);
    log(i);
    if (now() - tStart >= options.maxSolverTimeSeconds) {
      *stop = "Maximum solver time reached.", *type = TerminationType::kNoConvergence;
      return false;
    }
    if (i.iteration >= options.maxNumIterations) {
      *stop = "Maximum number of iterations reached.", *type = TerminationType::kNoConvergence;
      return false;
    }
    if (i.stepIsSuccessful && i.gradientMaxNorm <= options.gradientTolerance) {
      *stop = "Gradient tolerance reached.", *type = TerminationType::kConvergence;
      return false;
    }
    if (i.trustRegionRadius <= options.minTrustRegionRadius) {
      *stop = "Minimum trust region radius reached.", *type = TerminationType::kConvergence;
      return false;
    }
    return true;
  };

  std::string stop;
  TerminationType type = TerminationType::kNoConvergence;
  int invalidSteps = 0;
  while (finalize(it, &stop, &type)) {
    iterStart = now();
    const IterationSummary prev = sum.iterations.back();
    it = IterationSummary();
    it.iteration = prev.iteration + 1;
    const StepResult step = be->computeStep(radius.radius);
    it.linearSolverIterations = step.linearIterations;
    it.stepIsValid = step.ok && step.modelCostChange > 0.0;
    if (!it.stepIsValid) {
      if (++invalidSteps >= options.maxNumConsecutiveInvalidSteps)
        return finish(TerminationType::kFailure,
                      "Number of consecutive invalid steps more than "
                      "maxNumConsecutiveInvalidSteps: " +
                          std::to_string(options.maxNumConsecutiveInvalidSteps) +
                          (step.message.empty() ? "" : " (" + step.message + ")"));
      radius.rejected();
      it.cost = xCost + sum.fixedCost;
      it.gradientMaxNorm = prev.gradientMaxNorm;
      continue;
    }
    invalidSteps = 0;
    double candCost = 0.0, stepNorm = 0.0;
    be->evaluateCandidate(&candCost, &stepNorm);
    if (!std::isfinite(candCost)) candCost = std::numeric_limits<double>::max();
    it.stepNorm = stepNorm;
    if (stepNorm <= options.parameterTolerance * (xNorm + options.parameterTolerance))
      return finish(TerminationType::kConvergence, "Parameter tolerance reached.");
    it.costChange = xCost - candCost;
    if (std::fabs(it.costChange) <= options.functionTolerance * xCost)
      return finish(TerminationType::kConvergence, "Function tolerance reached.");
    if (options.riseTolerance > 0.0 &&
        std::fabs(it.costChange) <=
            options.riseTolerance * std::max(0.0, candCost + sum.fixedCost - options.riseBase))
      return finish(TerminationType::kConvergence, "Rise tolerance reached.");
    it.relativeDecrease = candCost >= std::numeric_limits<double>::max()
                              ? std::numeric_limits<double>::lowest()
                              : (xCost - candCost) / step.modelCostChange;
    if (it.relativeDecrease > options.minRelativeDecrease) {
      if (!be->acceptAndLinearize(&xNorm, &xCost, &it.gradientMaxNorm))
        return finish(TerminationType::kFailure,
                      "Residual and Jacobian evaluation failed at an accepted point.");
      it.cost = xCost + sum.fixedCost;
      it.stepIsSuccessful = true;
      radius.accepted(it.relativeDecrease);
    } else {
      it.stepIsSuccessful = false;
      radius.rejected();
      it.cost = candCost + sum.fixedCost;
      it.gradientMaxNorm = prev.gradientMaxNorm;
    }
  }
  return finish(type, stop);
}

}  // namespace vidmap::ba
