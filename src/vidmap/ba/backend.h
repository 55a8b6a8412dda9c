// The interface between the Levenberg-Marquardt driver (solver.cc, Ceres' trust-region logic)
// and the backends that own the parameters and do the heavy work (cpu_backend.cc, the oracle,
// and cuda_backend.cu). Only scalars cross it per iteration. A backend may compute ahead: the
// CUDA backend's graph path evaluates the candidate with the step and returns it from
// evaluateCandidate.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vidmap/ba/options.h"
#include "vidmap/ba/problem.h"
#include "vidmap/ba/structure.h"

namespace vidmap::ba {

// Parameters as flat arrays: rotation 4 per image (angle-axis uses 3), translation 3 per image,
// intrinsics K per camera, 3 per point.
struct Parameters {
  std::vector<double> rotation, translation, intrinsics, points;
};
Parameters extractParameters(const Problem& p);
// Writes back the blocks that vary.
void storeParameters(const Parameters& x, const Structure& s, Problem& p);

struct StepResult {
  bool ok = false;  // false: the linear solver failed (not positive definite, not finite)
  double modelCostChange = 0.0;
  int linearIterations = 0;
  std::string message;
};

struct PhaseTimes {
  double jacobian = 0.0, residual = 0.0, schur = 0.0, linearSolve = 0.0, backSubstitution = 0.0;
  double graphCapture = 0.0;  // CUDA graphs' capture and instantiation (inside the phases above)
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Residuals and Jacobian at x. computeScaling: set the Jacobi scaling from this Jacobian (the
  // first evaluation). Returns false when anything is not finite. cost excludes fixedCost;
  // gradientMaxNorm is max |x - Plus(x, -g)| (Ceres' measure).
  virtual bool linearize(bool computeScaling, double* cost, double* gradientMaxNorm) = 0;
  // Solves the damped system with D^2 = clamp(diag(J'J)) / radius and forms
  // delta = -y * scaling.
  virtual StepResult computeStep(double radius) = 0;
  // candidate = Plus(x, delta); its cost (+inf when not finite) and |x - candidate|.
  virtual void evaluateCandidate(double* cost, double* stepNorm) = 0;
  virtual void acceptCandidate() = 0;
  virtual double parameterNorm() = 0;
  // Accepts the candidate and linearizes there: the new parameter norm, then linearize(false).
  // The CUDA backend does the three in one launch and one read-back.
  virtual bool acceptAndLinearize(double* parameterNorm, double* cost, double* gradientMaxNorm) {
    acceptCandidate();
    *parameterNorm = this->parameterNorm();
    return linearize(false, cost, gradientMaxNorm);
  }
  // How the backend launches its work (Summary::launchMode); empty on the CPU.
  virtual std::string launchMode() const { return {}; }
  virtual Parameters parameters() = 0;
  virtual int numThreads() const { return 1; }
  PhaseTimes times;
};

struct BackendInput {
  const Problem* problem = nullptr;
  const Structure* structure = nullptr;
  const Options* options = nullptr;
  bool explicitSchur = true;
};

std::unique_ptr<Backend> makeCpuBackend(const BackendInput& in);
// Throws vidmap::Error when the build has no CUDA or no device is present.
std::unique_ptr<Backend> makeCudaBackend(const BackendInput& in);
// True when this build has the CUDA backend and a device is present.
bool cudaBackendAvailable();

}  // namespace vidmap::ba
