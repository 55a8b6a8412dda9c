// Bundle adjustment by Levenberg-Marquardt with the Schur complement over the points.
//
// The trust-region loop is Ceres Solver's (internal/ceres/trust_region_minimizer.cc and
// levenberg_marquardt_strategy.cc): Jacobi column scaling fixed at the first Jacobian, the LM
// diagonal D^2 = clamp(diag(J'J), min, max) / radius, acceptance by the ratio of the actual to
// the model cost decrease, radius /= max(1/3, 1 - (2 rho - 1)^3) after a success and halving
// with a growing factor after a failure, and Ceres' function, gradient and parameter
// tolerances. The same problem with the same options therefore takes the same steps in both.
//
// The linear systems are solved by the explicit reduced camera system and a dense Cholesky
// (DENSE_SCHUR) or by conjugate gradients on implicit Schur products with a block-Jacobi
// preconditioner (ITERATIVE_SCHUR), chosen by the number of camera-side columns (schur.h has
// the derivation). Backends: CPU (OpenMP, the oracle) and CUDA.
#pragma once

#include "vidmap/ba/options.h"
#include "vidmap/ba/problem.h"

namespace vidmap::ba {

// Refines the problem's parameters in place. Bad input (see Problem::check, Options::check)
// throws vidmap::Error; a numerical failure during the solve is reported in the summary
// (termination kFailure) and leaves the best parameters found so far in the problem.
Summary solve(Problem& problem, const Options& options = {});

}  // namespace vidmap::ba
