// A small dense Levenberg-Marquardt for the refiners (K. Levenberg 1944, D. Marquardt 1963;
// the damping of Nocedal and Wright, Numerical Optimization, 10.3, on the diagonal of J^T J).
// A problem provides, for a state on its manifold:
//   static constexpr int kDof;  using State;
//   double normalEquations(const State&, Matrix<kDof,kDof>* JtJ, Matrix<kDof,1>* Jtr) const;
//   double cost(const State&) const;            // 0.5 * sum of squared residuals
//   State retract(const State&, const Matrix<kDof,1>& delta) const;
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>

namespace vidmap::geometry {

struct LmOptions {
  int max_iterations = 30;
  double initial_lambda = 1e-4;
  double function_tolerance = 1e-6;  // stop at a relative cost decrease below this (Ceres)
  double step_tolerance = 1e-10;     // or at a step below this (parameter units)
  // Scale of the Cauchy loss rho(s) = c^2 log(1 + s / c^2) on squared residuals s, in the
  // residual's units; 0 for plain least squares. It keeps a few false inliers near the RANSAC
  // threshold from pulling the estimate (weights by iteratively reweighted least squares).
  double loss_scale = 0;
};

// The robust loss of LmOptions::loss_scale.
struct CauchyLoss {
  double c2 = 0;
  explicit CauchyLoss(double scale) : c2(scale * scale) {}
  double rho(double s) const { return c2 > 0 ? c2 * std::log1p(s / c2) : s; }
  double weight(double s) const { return c2 > 0 ? 1.0 / (1.0 + s / c2) : 1.0; }
};

struct LmSummary {
  double initial_cost = 0;
  double final_cost = 0;
  int iterations = 0;
  bool improved() const { return final_cost < initial_cost; }
};

template <class Problem>
LmSummary levenbergMarquardt(const Problem& problem, typename Problem::State* state,
                             const LmOptions& options = {}) {
  constexpr int N = Problem::kDof;
  using Mat = Eigen::Matrix<double, N, N>;
  using Vec = Eigen::Matrix<double, N, 1>;
  LmSummary s;
  Mat JtJ;
  Vec Jtr;
  double cost = problem.normalEquations(*state, &JtJ, &Jtr);
  s.initial_cost = s.final_cost = cost;
  if (!std::isfinite(cost)) return s;
  double lambda = options.initial_lambda;
  for (int it = 0; it < options.max_iterations; ++it) {
    s.iterations = it + 1;
    if (cost <= 0) break;
    Mat A = JtJ;
    for (int i = 0; i < N; ++i) A(i, i) += lambda * std::max(JtJ(i, i), 1e-12);
    const Vec delta = A.ldlt().solve(-Jtr);
    if (!delta.allFinite()) break;
    const typename Problem::State cand = problem.retract(*state, delta);
    const double c = problem.cost(cand);
    if (std::isfinite(c) && c < cost) {
      const double decrease = (cost - c) / cost;
      *state = cand;
      cost = problem.normalEquations(*state, &JtJ, &Jtr);
      lambda = std::max(lambda * 0.1, 1e-12);
      if (decrease < options.function_tolerance || delta.norm() < options.step_tolerance) break;
    } else {
      lambda *= 10;
      if (lambda > 1e12) break;
    }
  }
  s.final_cost = cost;
  return s;
}

}  // namespace vidmap::geometry
