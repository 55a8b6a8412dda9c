// Absolute pose from 2D-3D correspondences: LO-RANSAC over the P3P solver (Lambda Twist,
// p3p.h), then Levenberg-Marquardt on the reprojection error of the inliers (refine.h).
// The RANSAC runs sample by sample (ransac.h), or in lock-step rounds whose hypotheses a
// BatchScorer scores together (ransac_lockstep.h: on the CPU or, with CudaBatchScorer, on the
// device): the same result bit for bit.
#pragma once

#include <string>
#include <vector>

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

class BatchScorer;

struct PnPOptions {
  double max_error_px = 4.0;  // RANSAC inlier threshold (pixels)
  double confidence = 0.999;
  int min_iterations = 20;
  int max_iterations = 5000;
  std::uint64_t seed = 0x5eed;
  int min_num_inliers = 6;
  double loss_scale_px = 1.0;  // Cauchy scale of the final refinement (0: least squares)
  void check() const;
};

struct PnPResult {
  bool success = false;
  std::string message;  // why it failed
  Pose pose;            // world to camera
  std::vector<char> inlier_mask;
  int num_inliers = 0;
  double rms_error_px = 0;  // over the inliers
  int iterations = 0;
};

// pixels[i] is the image of world[i] in an undistorted pinhole camera. Throws vidmap::Error for
// mismatched sizes, non-finite input, bad intrinsics or options; too few or degenerate
// correspondences give success = false with a message.
PnPResult estimatePnP(const Vec2List& pixels, const Vec3List& world, const Pinhole& camera,
                      const PnPOptions& options = {});
// The same with the P3P hypotheses of each lock-step round scored by `scorer` (its problems are
// replaced); the result equals the call above bit for bit.
PnPResult estimatePnP(const Vec2List& pixels, const Vec3List& world, const Pinhole& camera,
                      const PnPOptions& options, BatchScorer& scorer);

}  // namespace vidmap::geometry
