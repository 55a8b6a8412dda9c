// One Levenberg-Marquardt linearisation and one damped step (the Schur-complement solve of
// schur.h) for both backends: the order of the phases, the failure rules and the timing live
// here once; each backend supplies the phases on its own arrays (host vectors in OpenMP loops
// in cpu_backend.cc, device arrays in cuda_backend_impl.cuh). As Ceres serves its CPU and CUDA
// linear solvers from one loop, the CPU backend, the oracle, thereby covers the control flow of
// the CUDA backend, not only its per-observation math (observation.h, schur.h).
//
// The phases do not answer as they go: each leaves its scalar (a cost, a norm, a failure flag)
// for the host to read once after all of them (linearization(), stepChecks()). A step whose
// point elimination or Cholesky fails still runs its later phases on meaningless numbers and is
// then refused with the first failure's message, as before. So the CUDA backend can queue a
// whole step without waiting and read its scalars back in one transfer, or replay the step as
// one CUDA graph (cuda_backend_impl.cuh); the CPU runs the same sequence. Only conjugate
// gradients decide on the host as they go (their scalars steer the loop).
//
// Ops supplies, with B the number of reduced camera columns (Structure::nF):
//   void updateScaleE();           // image-column scaling from the folded column scaling
//   void evaluateAll();            // residuals and Jacobian records; the cost
//   void reduceImages();           // per-image gradient and column norms, folded
//   void reducePoints();           // per-point V = Jp'Jp and gradient
//   void setJacobiScaling();       // scaling = 1 / (1 + sqrt(diag J'J)) of columns and points
//   void rescaleRecords();         // the Jacobian records times the scaling
//   void gradientMax();            // max |x - Plus(x, -g)|
//   LinearizationScalars linearization();       // the cost and the gradient norm (waits)
//   void setDamping(double radius);            // D^2 = clamp(diag(J'J)) / radius
//   void eliminatePoints(double radius);       // (V + D^2)^-1, Jp V^-1; flags a failure
//   void reducedRhs();             // b - W V^-1 g per image, folded
//   void computeSegments();        // the image-pair blocks of the Schur complement
//   void endPhase();               // the phase's work is complete (a stream sync on CUDA when
//                                  // it times phases; nothing when it queues a whole step)
//   void zeroStep();               // y = 0
//   void buildExplicitSchur();     // S = fold(segments) + D^2, dense
//   void solveExplicit();          // Cholesky of S, y = S^-1 b; flags a failure
//   void buildPreconditioner();    // block Jacobi of S; flags a failure
//   bool conjugateGradients(StepResult* res);   // conjugate_gradients.h (decides on the host)
//   void checkStep();              // every entry of y finite?
//   void backSubstitute();         // point steps; flags one that is not finite
//   void modelCostChange();        // the linear model's predicted decrease
//   void scaleStep();              // delta = -y * scaling
//   StepChecks stepChecks();       // the flags and the model cost change (waits)
#pragma once

#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "vidmap/ba/backend.h"
#include "vidmap/ba/options.h"

namespace vidmap::ba {

namespace detail {
inline double lmNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace detail

// The scalars a linearisation leaves for the host.
struct LinearizationScalars {
  double cost = 0.0;             // excludes the fixed cost
  double gradientMaxNorm = 0.0;  // max |x - Plus(x, -g)|
};

// The scalars a step leaves for the host: its failure flags, in the order of the phases, and
// the linear model's predicted decrease.
struct StepChecks {
  bool pointsPositive = true;   // every point's damped 3x3 block positive definite
  std::string pointsMessage;    // which point, when the backend knows
  bool systemPositive = true;   // the reduced system's Cholesky, or the preconditioner's blocks
  bool stepFinite = true;       // every entry of the camera-side step finite
  bool pointStepFinite = true;  // every entry of the back-substituted point steps finite
  double modelCostChange = 0.0;
};

// The phases of Backend::linearize, queued without waiting. computeScaling: the first
// evaluation, which sets the Jacobi scaling.
template <class Ops>
void linearizePhases(Ops& ops, const Options& o, bool computeScaling) {
  if (computeScaling) ops.updateScaleE();
  ops.evaluateAll();
  if (computeScaling) {
    ops.reduceImages();
    ops.reducePoints();
    if (o.jacobiScaling) {
      ops.setJacobiScaling();
      ops.updateScaleE();
      ops.rescaleRecords();
    }
  }
  ops.reduceImages();
  ops.reducePoints();
  ops.gradientMax();
}

// Backend::linearize: false when the cost is not finite (the later phases then ran on
// meaningless records, which nothing reads).
template <class Ops>
bool linearizeSteps(Ops& ops, const Options& o, bool computeScaling, double* cost,
                    double* gradientMaxNorm, PhaseTimes& times) {
  const double t0 = detail::lmNow();
  linearizePhases(ops, o, computeScaling);
  const LinearizationScalars l = ops.linearization();
  times.jacobian += detail::lmNow() - t0;
  *cost = l.cost;
  *gradientMaxNorm = l.gradientMaxNorm;
  return std::isfinite(l.cost);
}

inline constexpr const char* kSystemNotPositive =
    "the reduced camera system is not positive definite";
inline constexpr const char* kPreconditionerNotPositive =
    "a block of the preconditioner is not positive definite";

// The phases of Backend::computeStep: the damped reduced camera system, solved densely
// (explicitSchur) or by preconditioned conjugate gradients, then the points by
// back-substitution; queued without waiting on the explicit path. Returns false when conjugate
// gradients failed (res->message says why) or did not run because an earlier phase failed.
template <class Ops>
bool stepPhases(Ops& ops, bool explicitSchur, int numColumns, double radius, PhaseTimes& times,
                StepResult* res) {
  double t0 = detail::lmNow();
  ops.setDamping(radius);
  ops.eliminatePoints(radius);
  ops.reducedRhs();
  ops.computeSegments();
  ops.endPhase();
  times.schur += detail::lmNow() - t0;

  ops.zeroStep();
  bool hostOk = true;
  if (numColumns > 0) {
    t0 = detail::lmNow();
    if (explicitSchur) {
      ops.buildExplicitSchur();
      ops.endPhase();
      times.schur += detail::lmNow() - t0;
      t0 = detail::lmNow();
      ops.solveExplicit();
      ops.endPhase();
      times.linearSolve += detail::lmNow() - t0;
    } else {
      ops.buildPreconditioner();
      ops.endPhase();
      times.schur += detail::lmNow() - t0;
      // Conjugate gradients decide on the host: read the flags so far first.
      const StepChecks c = ops.stepChecks();
      hostOk = c.pointsPositive && c.systemPositive;
      if (hostOk) {
        t0 = detail::lmNow();
        hostOk = ops.conjugateGradients(res);
        times.linearSolve += detail::lmNow() - t0;
      }
    }
  }
  t0 = detail::lmNow();
  ops.checkStep();
  ops.backSubstitute();
  ops.modelCostChange();
  ops.scaleStep();
  ops.endPhase();
  times.backSubstitution += detail::lmNow() - t0;
  return hostOk;
}

// The StepResult of a step from its checks, the first failure in the order of the phases.
inline StepResult stepResult(const StepChecks& c, bool explicitSchur, int numColumns, bool hostOk,
                             StepResult res) {
  res.ok = false;
  if (!c.pointsPositive) {
    res.message = c.pointsMessage.empty() ? "the 3x3 block of a point is not positive definite"
                                          : c.pointsMessage;
    res.linearIterations = 0;
    return res;
  }
  if (numColumns > 0) {
    if (!c.systemPositive) {
      res.message = explicitSchur ? kSystemNotPositive : kPreconditionerNotPositive;
      res.linearIterations = 0;
      return res;
    }
    if (explicitSchur) res.linearIterations = 1;
    if (!hostOk) return res;  // conjugate gradients failed: their message
  }
  if (!c.stepFinite) {
    res.message = "the reduced camera system gave a step that is not finite";
    return res;
  }
  if (!c.pointStepFinite) {
    res.message = "the back-substitution gave a point step that is not finite";
    return res;
  }
  res.modelCostChange = c.modelCostChange;
  res.ok = true;
  return res;
}

// Backend::computeStep.
template <class Ops>
StepResult computeStepSteps(Ops& ops, bool explicitSchur, int numColumns, double radius,
                            PhaseTimes& times) {
  StepResult res;
  const bool hostOk = stepPhases(ops, explicitSchur, numColumns, radius, times, &res);
  const double t0 = detail::lmNow();
  const StepChecks c = ops.stepChecks();
  times.backSubstitution += detail::lmNow() - t0;
  return stepResult(c, explicitSchur, numColumns, hostOk, std::move(res));
}

}  // namespace vidmap::ba
