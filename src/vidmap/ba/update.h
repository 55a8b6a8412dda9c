// The Plus operation of each parameter block (host and device): additive for angle-axis,
// translation, intrinsics and points; Ceres' QuaternionManifold for quaternions.
#pragma once

#include "vidmap/ba/rotation.h"
#include "vidmap/ba/types.h"
#include "vidmap/core/hd.h"

namespace vidmap::ba {

// out = Plus(rot, d) for a rotation block (d: 3 local coordinates). Writes 4 values.
template <RotationType R>
VIDMAP_HD inline void plusRotation(const double* rot, const double* d, double* out) {
  if constexpr (R == RotationType::kAngleAxis) {
    out[0] = rot[0] + d[0], out[1] = rot[1] + d[1], out[2] = rot[2] + d[2], out[3] = rot[3];
  } else {
    quaternionPlus(rot, d, out);
  }
}

// Sum of squares and max abs of (rot - Plus(rot, d)) in ambient coordinates.
template <RotationType R>
VIDMAP_HD inline void rotationDifference(const double* rot, const double* d, double* sumSq,
                                         double* maxAbs) {
  double out[4];
  plusRotation<R>(rot, d, out);
  const int n = R == RotationType::kAngleAxis ? 3 : 4;
  for (int k = 0; k < n; ++k) {
    const double v = rot[k] - out[k];
    *sumSq += v * v;
    const double a = v < 0 ? -v : v;
    if (a > *maxAbs) *maxAbs = a;
  }
}

}  // namespace vidmap::ba
