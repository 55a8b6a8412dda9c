// Hartley's point normalisation (R. Hartley, "In defense of the eight-point algorithm", PAMI
// 19(6), 1997): translate the centroid to the origin and scale the mean distance to sqrt(2), so
// the linear systems of the 7-/8-point and DLT solvers are well conditioned.
#pragma once

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// T such that T * (p, 1) are the normalised points; false when all points coincide.
inline bool hartleyTransform(const Vec2* p, int n, Mat3* T) {
  Vec2 c = Vec2::Zero();
  for (int i = 0; i < n; ++i) c += p[i];
  c /= n;
  double d = 0;
  for (int i = 0; i < n; ++i) d += (p[i] - c).norm();
  d /= n;
  if (!(d > 0) || !std::isfinite(d)) return false;
  const double s = std::sqrt(2.0) / d;
  *T << s, 0, -s * c.x(), 0, s, -s * c.y(), 0, 0, 1;
  return true;
}

inline Vec2 applyTransform(const Mat3& T, const Vec2& p) {
  return {T(0, 0) * p.x() + T(0, 2), T(1, 1) * p.y() + T(1, 2)};
}

}  // namespace vidmap::geometry
