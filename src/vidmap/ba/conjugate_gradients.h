// Preconditioned conjugate gradients on the reduced camera system S y = b (Hestenes and Stiefel,
// "Methods of conjugate gradients for solving linear systems", J. Res. NBS 49, 1952): the one
// loop of both backends. The CPU backend runs it on host vectors; the CUDA backend on device
// arrays, with the scalar decisions (rho, beta, alpha, the stopping rule) on the host. As Ceres'
// ConjugateGradientsSolver, which also serves its CPU and CUDA vectors from one loop:
//   - y starts at 0; the residual r = b - S y is recomputed from S y every residualResetPeriod
//     iterations, against the drift of the recurrence r -= alpha q;
//   - the stopping rule is Nash and Sofer's ("Assessing a search direction within a truncated-
//     Newton method", Operations Research Letters 9, 1990) on the quadratic model
//     Q(y) = y'Sy/2 - b'y: stop when it * (Q_it - Q_it-1) / Q_it < eta. With S y = b - r,
//     Q(y) = -y'(b + r) / 2, so the backends return 2Q from the vectors they hold.
//   - a direction with p'Sp <= 0 (S indefinite in floating point) ends the loop with the y so
//     far; a zero or non-finite rho, beta or alpha is a failure with its message.
//
// Ops supplies, for its vector type V (std::vector<double> on the host, a device array on CUDA):
//   double dot(const V& a, const V& b);
//   void precondition(const V& r, V& z);            // z = M^-1 r (block Jacobi, schur.h)
//   void multiply(const V& p, V& q);                 // q = S p, implicit or explicit
//   void setZero(V& y);
//   void copy(const V& from, V& to);
//   void xpby(const V& z, double beta, V& p);        // p = z + beta p
//   void axpy(double alpha, const V& p, V& y);       // y += alpha p
//   void subtract(const V& b, const V& t, V& r);     // r = b - t
//   double twiceQuadratic(const V& y, const V& b, const V& r);  // -y'(b + r) = 2 Q(y)
// Each backend keeps its own order of summation inside dot and twiceQuadratic (a sequential sum
// on the host, a tree reduction on the device), so the loop adds no difference between them.
#pragma once

#include <cmath>

#include "vidmap/ba/backend.h"
#include "vidmap/ba/options.h"

namespace vidmap::ba {

// The vectors of one solve: y (the solution, out), b (the right-hand side) and the work vectors,
// each of the system's size.
template <class V>
struct CgVectors {
  V& y;
  const V& b;
  V& r;
  V& p;
  V& z;
  V& q;
  V& tmp;
};

template <class Ops, class V>
bool conjugateGradients(Ops& ops, CgVectors<V> v, const Options& o, StepResult* res) {
  ops.setZero(v.y);
  const double normB = std::sqrt(ops.dot(v.b, v.b));
  if (normB == 0.0) return true;
  ops.copy(v.b, v.r);
  double rho = 1.0, q0 = 0.0;
  for (int it = 1;; ++it) {
    res->linearIterations = it;
    ops.precondition(v.r, v.z);
    const double lastRho = rho;
    rho = ops.dot(v.r, v.z);
    if (rho == 0.0 || std::isinf(rho) || std::isnan(rho)) {
      res->message = "conjugate gradients: rho = r'z is zero or not finite";
      return false;
    }
    if (it == 1) {
      ops.copy(v.z, v.p);
    } else {
      const double beta = rho / lastRho;
      if (beta == 0.0 || std::isinf(beta)) {
        res->message = "conjugate gradients: beta is zero or infinite";
        return false;
      }
      ops.xpby(v.z, beta, v.p);
    }
    ops.multiply(v.p, v.q);
    const double pq = ops.dot(v.p, v.q);
    if (pq <= 0.0 || std::isinf(pq)) break;  // indefinite: keep y (no convergence)
    const double alpha = rho / pq;
    if (std::isinf(alpha)) {
      res->message = "conjugate gradients: alpha is infinite";
      return false;
    }
    ops.axpy(alpha, v.p, v.y);
    if (it % o.residualResetPeriod == 0) {
      ops.multiply(v.y, v.tmp);
      ops.subtract(v.b, v.tmp, v.r);
    } else {
      ops.axpy(-alpha, v.q, v.r);
    }
    const double q1 = ops.twiceQuadratic(v.y, v.b, v.r);
    const double zeta = it * (q1 - q0) / q1;
    if (zeta < o.eta && it >= o.minLinearSolverIterations) break;
    q0 = q1;
    if (it >= o.maxLinearSolverIterations) break;
  }
  return true;
}

}  // namespace vidmap::ba
