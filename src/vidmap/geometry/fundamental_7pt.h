// The seven-point fundamental matrix solver (R. Hartley and A. Zisserman, Multiple View
// Geometry, 2nd ed., section 11.1.2): F = a F1 + (1 - a) F2 in the 2-dimensional null space of
// seven normalised epipolar constraints, with det(F) = 0 a cubic in a.
#pragma once

#include <vector>

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// p1, p2: seven corresponding image points (pixels) with (p2,1)^T F (p1,1) = 0. Appends up to
// three fundamental matrices (unit Frobenius norm) and returns their number.
int fundamental7pt(const Vec2 p1[7], const Vec2 p2[7], std::vector<Mat3>* F);

}  // namespace vidmap::geometry
