// Similarities (Sim(3): x' = s R x + t) between two point sets: the least-squares fit of
// S. Umeyama, "Least-squares estimation of transformation parameters between two point
// patterns", PAMI 1991, and a robust estimator of it for geometry::ransac (3-point minimal
// samples, refit on the inliers). Also the pose of a camera that turned about a known centre
// (the rotation-only model a video mapper prefers when the translation is not observed).
#pragma once

#include <functional>
#include <vector>

#include "vidmap/geometry/ransac.h"
#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

struct Sim3 {
  double s = 1;
  Mat3 R = Mat3::Identity();
  Vec3 t = Vec3::Zero();
  Vec3 apply(const Vec3& x) const { return s * R * x + t; }
  // The inverse map: x = R^T (x' - t) / s.
  Vec3 applyInverse(const Vec3& y) const { return R.transpose() * (y - t) / s; }
};

// The Sim(3) minimising sum |dst_i - (s R src_i + t)|^2 (s = 1 when !withScale). Needs at least
// 3 non-collinear points; otherwise a vidmap::Error.
Sim3 alignUmeyama(const Vec3List& src, const Vec3List& dst, bool withScale = true);

// As alignUmeyama on the correspondences `idx`, without throwing: false when degenerate
// (collinear or coincident points) or not finite.
bool fitSimilarity(const Vec3List& src, const Vec3List& dst, const std::vector<int>& idx,
                   Sim3* out);

// The estimator of geometry::ransac for dst ~ sim.apply(src). The residual is the 3D distance
// |dst_i - sim.apply(src_i)| unless `residual` is given (any squared residual of
// correspondence i under a similarity, e.g. reprojection errors in both models).
struct SimilarityEstimator {
  using Model = Sim3;
  static constexpr int kSampleSize = 3;
  using Residual = std::function<double(int, const Sim3&)>;

  SimilarityEstimator(const Vec3List& src, const Vec3List& dst, Residual residualSq = {});

  int numData() const { return static_cast<int>(src_.size()); }
  void estimate(const int* sample, std::vector<Sim3>* models) const;
  double residualSq(const Sim3& m, int i) const;
  void refine(const std::vector<int>& inliers, Sim3* m) const;

 private:
  const Vec3List& src_;
  const Vec3List& dst_;
  Residual residual_;
};

// RANSAC (geometry::ransac: deterministic for a seed, MSAC, local optimisation) over the
// estimator; sizes must match (vidmap::Error).
RansacResult<Sim3> estimateSimilarity(const Vec3List& src, const Vec3List& dst,
                                      const RansacOptions& options,
                                      SimilarityEstimator::Residual residualSq = {});

// The camera pose (world to camera) of `pose` after the world moved by `sim` (X' = s R X + t):
// the same camera in the new world, its translation scaled by s.
Pose transformPose(const Pose& pose, const Sim3& sim);

// The pose of a camera centred at `centre` that best sees the points X[i] along the bearings
// of the normalised image points x[i] (i with mask[i], mask empty: all): the rotation of the
// orthogonal Procrustes problem between the unit directions (X_i - centre) and the unit
// bearings (x_i, 1). The points must not all lie at the centre.
Pose rotationAboutCentre(const Vec3List& X, const Vec2List& x, const Vec3& centre,
                         const std::vector<char>& mask = {});

}  // namespace vidmap::geometry
