#include <cstdio>
#include <string>

#include "vidmap/ba/options.h"

namespace vidmap::ba {

const char* toString(LinearSolverType t) {
  switch (t) {
    case LinearSolverType::kAuto:
      return "AUTO";
    case LinearSolverType::kDenseSchur:
      return "DENSE_SCHUR";
    case LinearSolverType::kIterativeSchur:
      return "ITERATIVE_SCHUR";
  }
  return "?";
}

const char* toString(TerminationType t) {
  switch (t) {
    case TerminationType::kConvergence:
      return "CONVERGENCE";
    case TerminationType::kNoConvergence:
      return "NO_CONVERGENCE";
    case TerminationType::kFailure:
      return "FAILURE";
  }
  return "?";
}

const char* toString(BackendType t) { return t == BackendType::kCuda ? "CUDA" : "CPU"; }

const char* toString(LossType t) {
  switch (t) {
    case LossType::kTrivial:
      return "TRIVIAL";
    case LossType::kHuber:
      return "HUBER";
    case LossType::kCauchy:
      return "CAUCHY";
    case LossType::kSoftL1:
      return "SOFT_L1";
  }
  return "?";
}

std::string Summary::briefReport() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "vidmap BA: %s (%s on %s), initial cost %.9e, final cost %.9e, %d iterations "
                "(%d successful), %.3f s: %s",
                toString(termination), toString(linearSolver), toString(backend), initialCost,
                finalCost, numIterations(), numSuccessfulSteps, totalSeconds, message.c_str());
  return buf;
}

std::string Summary::fullReport() const {
  std::string s;
  char buf[256];
  auto line = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, args...);
    s += buf;
    s += '\n';
  };
  line("vidmap bundle adjustment summary");
  line("  images %d, cameras %d, points %d, observations %d", numImages, numCameras, numPoints,
       numObservations);
  line("  camera-side columns %d, point columns %d", numCameraColumns, numPointColumns);
  line("  held: %d single-view points, %d unobserved images, %d unobserved cameras", numPointsHeld,
       numImagesUnobserved, numCamerasUnobserved);
  if (!gauge.empty()) line("  gauge: %s", gauge.c_str());
  line("  linear solver %s, backend %s, threads %d", toString(linearSolver), toString(backend),
       numThreads);
  if (!launchMode.empty()) line("  launches: %s", launchMode.c_str());
  line("  cost: initial %.12e, final %.12e, fixed %.6e", initialCost, finalCost, fixedCost);
  line("  iterations %d (successful %d, unsuccessful %d), linear solver iterations %d",
       numIterations(), numSuccessfulSteps, numUnsuccessfulSteps, numLinearSolverIterations);
  line(
      "  time (s): preprocessor %.4f, jacobian %.4f, residual %.4f, schur %.4f, solve %.4f, "
      "back-substitution %.4f, minimizer %.4f, total %.4f",
      preprocessorSeconds, jacobianEvaluationSeconds, residualEvaluationSeconds, schurSeconds,
      linearSolveSeconds, backSubstitutionSeconds, minimizerSeconds, totalSeconds);
  line("  termination: %s (%s)", toString(termination), message.c_str());
  return s;
}

}  // namespace vidmap::ba
