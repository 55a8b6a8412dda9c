// One Levenberg-Marquardt linearisation and one damped step (the Schur-complement solve of
// schur.h) for both backends: the order of the phases, the failure rules and the timing live
// here once; each backend supplies the phases on its own arrays (host vectors in OpenMP loops
// in cpu_backend.cc, device arrays in cuda_backend_impl.cuh). As Ceres serves its CPU and CUDA
// linear solvers from one loop, the CPU backend, the oracle, thereby covers the control flow of
// the CUDA backend, not only its per-observation math (observation.h, schur.h).
//
// Ops supplies, with B the number of reduced camera columns (Structure::nF):
//   void updateScaleE();           // image-column scaling from the folded column scaling
//   double evaluateAll();          // residuals and Jacobian records; the cost
//   void reduceImages();           // per-image gradient and column norms, folded
//   void reducePoints();           // per-point V = Jp'Jp and gradient
//   void setJacobiScaling();       // scaling = 1 / (1 + sqrt(diag J'J)) of columns and points
//   void rescaleRecords();         // the Jacobian records times the scaling
//   double gradientMax();          // max |x - Plus(x, -g)|
//   void setDamping(double radius);            // D^2 = clamp(diag(J'J)) / radius
//   bool eliminatePoints(double radius, std::string* message);  // (V + D^2)^-1, Jp V^-1
//   void reducedRhs();             // b - W V^-1 g per image, folded
//   void computeSegments();        // the image-pair blocks of the Schur complement
//   void endPhase();               // the phase's work is complete (a stream sync on CUDA)
//   void zeroStep();               // y = 0
//   void buildExplicitSchur();     // S = fold(segments) + D^2, dense
//   bool solveExplicit(std::string* message);         // Cholesky of S, y = S^-1 b
//   bool buildPreconditioner(std::string* message);   // block Jacobi of S
//   bool conjugateGradients(StepResult* res);         // conjugate_gradients.h
//   bool stepFinite();             // every entry of y finite
//   bool backSubstitute();         // point steps; false when one is not finite
//   double modelCostChange();      // the linear model's predicted decrease
//   void scaleStep();              // delta = -y * scaling
#pragma once

#include <chrono>
#include <cmath>
#include <string>

#include "vidmap/ba/backend.h"
#include "vidmap/ba/options.h"

namespace vidmap::ba {

namespace detail {
inline double lmNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace detail

// Backend::linearize. computeScaling: the first evaluation, which sets the Jacobi scaling.
template <class Ops>
bool linearizeSteps(Ops& ops, const Options& o, bool computeScaling, double* cost,
                    double* gradientMaxNorm, PhaseTimes& times) {
  const double t0 = detail::lmNow();
  if (computeScaling) ops.updateScaleE();
  *cost = ops.evaluateAll();
  if (!std::isfinite(*cost)) {
    times.jacobian += detail::lmNow() - t0;
    return false;
  }
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
  *gradientMaxNorm = ops.gradientMax();
  times.jacobian += detail::lmNow() - t0;
  return true;
}

// Backend::computeStep: the damped reduced camera system, solved densely (explicitSchur) or by
// preconditioned conjugate gradients, then the points by back-substitution.
template <class Ops>
StepResult computeStepSteps(Ops& ops, bool explicitSchur, int numColumns, double radius,
                            PhaseTimes& times) {
  StepResult res;
  double t0 = detail::lmNow();
  ops.setDamping(radius);
  if (!ops.eliminatePoints(radius, &res.message)) {
    times.schur += detail::lmNow() - t0;
    return res;
  }
  ops.reducedRhs();
  ops.computeSegments();
  ops.endPhase();
  times.schur += detail::lmNow() - t0;

  ops.zeroStep();
  if (numColumns > 0) {
    t0 = detail::lmNow();
    if (explicitSchur) {
      ops.buildExplicitSchur();
      ops.endPhase();
      times.schur += detail::lmNow() - t0;
      t0 = detail::lmNow();
      const bool ok = ops.solveExplicit(&res.message);
      times.linearSolve += detail::lmNow() - t0;
      if (!ok) return res;
      res.linearIterations = 1;
    } else {
      const bool built = ops.buildPreconditioner(&res.message);
      ops.endPhase();
      times.schur += detail::lmNow() - t0;
      if (!built) return res;
      t0 = detail::lmNow();
      const bool ok = ops.conjugateGradients(&res);
      times.linearSolve += detail::lmNow() - t0;
      if (!ok) return res;
    }
  }
  t0 = detail::lmNow();
  if (!ops.stepFinite()) {
    res.message = "the reduced camera system gave a step that is not finite";
    times.backSubstitution += detail::lmNow() - t0;
    return res;
  }
  if (!ops.backSubstitute()) {
    res.message = "the back-substitution gave a point step that is not finite";
    times.backSubstitution += detail::lmNow() - t0;
    return res;
  }
  res.modelCostChange = ops.modelCostChange();
  ops.scaleStep();
  ops.endPhase();
  res.ok = true;
  times.backSubstitution += detail::lmNow() - t0;
  return res;
}

}  // namespace vidmap::ba
