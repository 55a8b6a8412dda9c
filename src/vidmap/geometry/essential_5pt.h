// The five-point relative pose solver of D. Nister, "An efficient solution to the five-point
// relative pose problem", PAMI 26(6), 2004 (with the constraint expansion of H. Stewenius,
// C. Engels, D. Nister, "Recent developments on direct relative orientation", ISPRS J. 60(4),
// 2006).
//
// E is sought in the 4-dimensional null space of the five epipolar constraints,
// E = x X + y Y + z Z + W. The ten cubic constraints det(E) = 0 and
// 2 E E^T E - tr(E E^T) E = 0 are expanded in the 20 monomials of degree <= 3; Gauss-Jordan
// elimination of ten of them (Nister's order) leaves three equations B(z) [x y 1]^T = 0, whose
// determinant is a polynomial of degree 10 in z. Its real roots (Sturm sequences, sturm.h) give
// z, and the null vector of B(z) gives x and y. This replaced a 10x10 action-matrix
// eigen-decomposition (Stewenius) that computed the same solutions about five times slower.
#pragma once

#include <vector>

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// x1, x2: five corresponding rays (normalized homogeneous points or unit bearings) with
// x2^T E x1 = 0. Appends up to 10 essential matrices (unit Frobenius norm) to *E and returns
// their number. Degenerate samples give 0 or spurious solutions, never a crash.
int essential5pt(const Vec3 x1[5], const Vec3 x2[5], std::vector<Mat3>* E);

}  // namespace vidmap::geometry
