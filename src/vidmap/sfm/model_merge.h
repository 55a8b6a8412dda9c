// Merging the models of a broken video (after COLMAP's Reconstruction::Merge and
// ComputeAlignmentBetweenReconstructions, J. L. Schonberger and J.-M. Frahm, "Structure-from-
// Motion Revisited", CVPR 2016). Two models overlap when the correspondence graph links their
// keypoints. The mapper (Mapper::mergeFinishedModels, model_merge.cc) merges them in two
// complementary ways:
//   a. alignment: points of both models that the graph links (the same feature track
//      triangulated twice) give 3D-3D correspondences; a RANSAC over 3-point Umeyama
//      similarities with an inlier test in reprojection error (estimateSim3Ransac) brings the
//      smaller model into the larger one's frame; its images and points join, and points of
//      one track are fused;
//   b. absorption: the larger model registers the smaller model's keyframes (and keyframes
//      no model holds) by PnP against its points through the graph, triangulating as it goes.
// Global BA, filtering and re-triangulation follow. A merge is kept only when the smaller
// model's images (nearly) all joined and the reprojection error stayed that of the parts;
// otherwise both models are restored.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "vidmap/sfm/reconstruction.h"
#include "vidmap/sfm/trajectory_eval.h"

namespace vidmap::sfm {

struct Sim3RansacOptions {
  int maxIterations = 1000;
  double confidence = 0.9999;
  int minInliers = 3;
  std::uint32_t seed = 1;
};

struct Sim3Estimate {
  bool success = false;
  Sim3 sim;  // dst ~ sim.apply(src)
  std::vector<char> inliers;
  int numInliers = 0;
};

// The similarity mapping src[i] onto dst[i] for the most correspondences, as decided by
// isInlier(i, sim): RANSAC over 3-point Umeyama solutions (degenerate samples skipped), then
// a refit on the inliers kept when it does not lose inliers. Sizes must match (Error).
Sim3Estimate estimateSim3Ransac(const std::vector<Vec3>& src, const std::vector<Vec3>& dst,
                                const std::function<bool(int, const Sim3&)>& isInlier,
                                const Sim3RansacOptions& options = {});

// The camera pose (world to camera) of `pose` after the world moved by `sim` (X' = s R X + t):
// the same camera in the new world, its translation scaled by s.
geometry::Pose transformPose(const geometry::Pose& pose, const Sim3& sim);

}  // namespace vidmap::sfm
