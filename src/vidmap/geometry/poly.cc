#include "vidmap/geometry/poly.h"

#include <algorithm>
#include <cmath>

namespace vidmap::geometry {

int solveQuadratic(double a, double b, double c, double roots[2]) {
  const double scale = std::max({std::abs(a), std::abs(b), std::abs(c)});
  if (scale == 0) return 0;
  if (std::abs(a) <= 1e-14 * scale) {
    if (b == 0) return 0;
    roots[0] = -c / b;
    return 1;
  }
  const double disc = b * b - 4 * a * c;
  if (disc < 0) {
    // Keep a numerically double root that rounding pushed below zero.
    if (disc > -1e-14 * b * b) {
      roots[0] = -b / (2 * a);
      return 1;
    }
    return 0;
  }
  const double q = -0.5 * (b + std::copysign(std::sqrt(disc), b));
  if (q == 0) {
    roots[0] = 0;
    return 1;
  }
  roots[0] = q / a;
  roots[1] = c / q;
  return 2;
}

static double polish(double a, double b, double c, double d, double x) {
  for (int it = 0; it < 3; ++it) {
    const double f = ((a * x + b) * x + c) * x + d;
    const double df = (3 * a * x + 2 * b) * x + c;
    if (df == 0) break;
    const double nx = x - f / df;
    if (!std::isfinite(nx)) break;
    x = nx;
  }
  return x;
}

int solveCubic(double a, double b, double c, double d, double roots[3]) {
  const double scale = std::max({std::abs(b), std::abs(c), std::abs(d)});
  if (std::abs(a) <= 1e-14 * scale || a == 0) return solveQuadratic(b, c, d, roots);
  // Depressed cubic t^3 + p t + q with x = t - B/3.
  const double B = b / a, C = c / a, D = d / a;
  const double p = C - B * B / 3.0;
  const double q = 2.0 * B * B * B / 27.0 - B * C / 3.0 + D;
  const double shift = -B / 3.0;
  const double disc = q * q / 4.0 + p * p * p / 27.0;
  int n = 0;
  if (disc > 0) {
    const double s = std::sqrt(disc);
    roots[n++] = std::cbrt(-q / 2.0 + s) + std::cbrt(-q / 2.0 - s) + shift;
  } else if (p == 0) {
    roots[n++] = shift;
  } else {
    const double r = std::sqrt(-p / 3.0);
    const double arg = std::max(-1.0, std::min(1.0, -q / (2.0 * r * r * r)));
    const double phi = std::acos(arg) / 3.0;
    for (int k = 0; k < 3; ++k) roots[n++] = 2.0 * r * std::cos(phi - 2.0 * M_PI * k / 3.0) + shift;
  }
  for (int i = 0; i < n; ++i) roots[i] = polish(a, b, c, d, roots[i]);
  return n;
}

}  // namespace vidmap::geometry
