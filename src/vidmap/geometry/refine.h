// Non-linear refinement of RANSAC winners by Levenberg-Marquardt (lm.h), on the manifolds:
// - relative pose: Sampson error of E = [t]x R over R in SO(3) and t on the unit sphere (5 dof);
// - fundamental matrix: Sampson error of F = U diag(1, s, 0) V^T over U, V in SO(3) and s
//   (7 dof; A. Bartoli and P. Sturm, "Nonlinear estimation of the fundamental matrix with
//   minimal parameters", PAMI 26(3), 2004);
// - absolute pose: reprojection error over R in SO(3) and t (6 dof), or over R alone about a
//   known centre (3 dof).
#pragma once

#include <vector>

#include "vidmap/geometry/lm.h"
#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// x1, x2: normalized homogeneous points (z = 1); indices: the correspondences to use (all when
// empty). rel.t must be non-zero; it is returned with unit length.
LmSummary refineRelativePose(const Vec3List& x1, const Vec3List& x2,
                             const std::vector<int>& indices, Pose* rel,
                             const LmOptions& options = {});

// p1, p2: pixels. F is returned rank 2 with unit Frobenius norm.
LmSummary refineFundamental(const Vec2List& p1, const Vec2List& p2, const std::vector<int>& indices,
                            Mat3* F, const LmOptions& options = {});

// xn: normalized image points, X: world points; the reprojection error in normalized units.
LmSummary refineAbsolutePose(const Vec2List& xn, const Vec3List& X, const std::vector<int>& indices,
                             Pose* pose, const LmOptions& options = {});

// The same with the camera centre held at `centre` (a pure rotation; plain least squares,
// options.loss_scale unused): pose->R is refined, pose->t set to -R centre.
LmSummary refineRotationAboutCentre(const Vec2List& xn, const Vec3List& X,
                                    const std::vector<int>& indices, const Vec3& centre, Pose* pose,
                                    const LmOptions& options = {});

// The signed Sampson residual of (x1, x2) for the 3x3 model M and its gradient in the entries of
// M (row-major), for refiners that chain it with their parameterisation.
double sampsonResidual(const Mat3& M, const Vec3& x1, const Vec3& x2,
                       Eigen::Matrix<double, 1, 9>* grad);

}  // namespace vidmap::geometry
