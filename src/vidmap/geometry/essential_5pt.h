// The five-point relative pose solver: H. Stewenius, C. Engels, D. Nister, "Recent developments
// on direct relative orientation", ISPRS J. Photogrammetry and Remote Sensing 60(4), 2006
// (the Groebner-basis form of D. Nister, "An efficient solution to the five-point relative pose
// problem", PAMI 26(6), 2004).
//
// E is sought in the 4-dimensional null space of the five epipolar constraints,
// E = x X + y Y + z Z + W. The ten cubic constraints det(E) = 0 and
// 2 E E^T E - tr(E E^T) E = 0 are expanded in the 20 monomials of degree <= 3, the cubic block is
// eliminated (Gauss-Jordan), and the 10x10 action matrix of multiplication by x on the quotient
// basis {x^2, xy, xz, y^2, yz, z^2, x, y, z, 1} has the solutions as its real eigenvectors.
#pragma once

#include <vector>

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// x1, x2: five corresponding rays (normalized homogeneous points or unit bearings) with
// x2^T E x1 = 0. Appends up to 10 essential matrices (unit Frobenius norm) to *E and returns
// their number. Degenerate samples give 0 or spurious solutions, never a crash.
int essential5pt(const Vec3 x1[5], const Vec3 x2[5], std::vector<Mat3>* E);

}  // namespace vidmap::geometry
