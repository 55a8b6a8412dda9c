// Homography by the normalised direct linear transform (R. Hartley and A. Zisserman, Multiple
// View Geometry, 2nd ed., algorithm 4.2): four or more correspondences, Hartley-normalised.
#pragma once

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// n >= 4 correspondences with (p2, 1) ~ H (p1, 1). Writes H (unit Frobenius norm); returns
// false for degenerate input (coincident or collinear points, not finite).
bool homographyDlt(const Vec2* p1, const Vec2* p2, int n, Mat3* H);

}  // namespace vidmap::geometry
