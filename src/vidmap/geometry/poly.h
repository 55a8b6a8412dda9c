// Real roots of low-degree polynomials, for the minimal solvers. Closed forms (the numerically
// stable quadratic of Numerical Recipes 5.6, the trigonometric/Cardano cubic) polished by
// Newton steps, so that near-double roots and tiny leading coefficients do not lose accuracy.
#pragma once

namespace vidmap::geometry {

// Real roots of a x^2 + b x + c = 0 (a may be 0). Returns their number (0-2).
int solveQuadratic(double a, double b, double c, double roots[2]);

// Real roots of a x^3 + b x^2 + c x + d = 0 (a may be 0). Returns their number (0-3).
int solveCubic(double a, double b, double c, double d, double roots[3]);

}  // namespace vidmap::geometry
