// Perspective-three-point by Lambda Twist: M. Persson and K. Nordberg, "Lambda Twist: An Accurate
// Fast Robust Perspective Three Point (P3P) Solver", ECCV 2018.
//
// The depths L = (l1, l2, l3) of three rays satisfy three quadrics L^T M_ij L = a_ij (the squared
// distances between the world points). A singular combination D0 = D1 + g D2 of two homogeneous
// differences (a cubic in g) factors into two planes through the origin; on each plane the
// quadrics reduce to a quadratic. The depths are polished by Gauss-Newton on the three
// quadrics and the pose follows from the two triangles.
#pragma once

#include <vector>

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// y: three rays (any length, pointing at the points); X: three world points. Appends up to four
// poses with l_i y_i/|y_i| = R X_i + t and l_i > 0, and returns their number.
int p3pLambdaTwist(const Vec3 y[3], const Vec3 X[3], std::vector<Pose>* poses);

}  // namespace vidmap::geometry
