// From an essential matrix to the relative pose (R. Hartley and A. Zisserman, Multiple View
// Geometry, 2nd ed., result 9.19): E = U diag(1,1,0) V^T gives R in {U W V^T, U W^T V^T} and
// t = +-u3; the cheirality test keeps the one of the four poses that puts the most points in
// front of both cameras (closer than 1000 baselines, as COLMAP's CheckCheirality).
#pragma once

#include <vector>

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// The two rotations and the unit translation (up to sign) of E.
void decomposeEssential(const Mat3& E, Mat3* R1, Mat3* R2, Vec3* t);

// E = [t]x R for a relative pose (camera 1 to camera 2).
Mat3 essentialFromPose(const Pose& rel);

// Depths (d1, d2) of the point seen along rays x1 (camera 1) and x2 (camera 2) for the relative
// pose rel: the least-squares intersection d2 x2 = R d1 x1 + t. False for parallel rays.
bool rayDepths(const Pose& rel, const Vec3& x1, const Vec3& x2, double* d1, double* d2);

// Chooses, among the four poses of E, the one with the most correspondences (of `indices`, or
// all when empty) in front of both cameras. Writes it (|t| = 1) and, optionally, a mask of the
// points in front. Returns the number in front (0 when E is degenerate).
int poseFromEssential(const Mat3& E, const Vec3List& x1, const Vec3List& x2,
                      const std::vector<int>& indices, Pose* rel,
                      std::vector<char>* in_front = nullptr);

}  // namespace vidmap::geometry
