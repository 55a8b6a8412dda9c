// Homographies from point correspondences.
//   - homographyDlt: the normalised direct linear transform (R. Hartley and A. Zisserman,
//     Multiple View Geometry, 2nd ed., algorithm 4.2), four or more correspondences,
//     Hartley-normalised: the least-squares fit on a RANSAC's inliers.
//   - homography4pt: the minimal solver of a RANSAC sample, exactly four correspondences, in
//     closed form through the projective basis the four points define in each image
//     (P. Heckbert, "Fundamentals of texture mapping and image warping", UC Berkeley, 1989):
//     with M = [x1 x2 x3] (homogeneous) and v = adj(M) x4, the map A = M diag(v) sends the
//     canonical basis e1, e2, e3 and (1, 1, 1) to the four points, up to scale; so with B the
//     same for the second image, H = B A^-1 ~ M2 diag(v2 / v1) adj(M1). A zero of det M or of
//     any v_i is a collinear triple: the sample fixes no homography. The DLT would solve the
//     same system through a 9 x 9 eigendecomposition, ten times the work of this closed form;
//     a RANSAC runs it thousands of times on a pair with little of a plane or a rotation in it.
#pragma once

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// n >= 4 correspondences with (p2, 1) ~ H (p1, 1). Writes H (unit Frobenius norm); returns
// false for degenerate input (coincident or collinear points, not finite).
bool homographyDlt(const Vec2* p1, const Vec2* p2, int n, Mat3* H);

// Exactly four correspondences. The same H as homographyDlt on the same four (to rounding);
// false for a collinear triple in either image or input that is not finite.
bool homography4pt(const Vec2* p1, const Vec2* p2, Mat3* H);

}  // namespace vidmap::geometry
