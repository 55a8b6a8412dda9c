// The normalised eight-point algorithm (R. Hartley, "In defense of the eight-point algorithm",
// PAMI 19(6), 1997): linear least squares on Hartley-normalised points, then the nearest
// rank-2 matrix. Used for non-minimal fits (local optimisation) as well as 8-point samples.
#pragma once

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// n >= 8 correspondences in pixels. Writes F (unit Frobenius norm, rank 2); returns false when
// the points are degenerate (coincident, not finite).
bool fundamental8pt(const Vec2* p1, const Vec2* p2, int n, Mat3* F);

}  // namespace vidmap::geometry
