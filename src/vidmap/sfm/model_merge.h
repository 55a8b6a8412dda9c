// Merging the models of a broken video (after COLMAP's Reconstruction::Merge and
// ComputeAlignmentBetweenReconstructions, J. L. Schonberger and J.-M. Frahm, "Structure-from-
// Motion Revisited", CVPR 2016). Two models overlap when the correspondence graph links their
// keypoints. The mapper (Mapper::mergeFinishedModels, model_merge.cc) merges them in two
// complementary ways:
//   a. alignment: points of both models that the graph links (the same feature track
//      triangulated twice) give 3D-3D correspondences; a RANSAC over 3-point Umeyama
//      similarities (geometry::estimateSimilarity) with a residual in reprojection error brings the
//      smaller model into the larger one's frame; its images and points join, and points of
//      one track are fused;
//   b. absorption: the larger model registers the smaller model's keyframes (and keyframes
//      no model holds) by PnP against its points through the graph, triangulating as it goes.
// Global BA, filtering and re-triangulation follow. A merge is kept only when the smaller
// model's images (nearly) all joined and the reprojection error stayed that of the parts;
// otherwise both models are restored.
#pragma once

#include "vidmap/geometry/similarity.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::sfm {

// The similarity RANSAC (geometry::estimateSimilarity) and the pose transform live in
// geometry/similarity.h.
using geometry::transformPose;

}  // namespace vidmap::sfm
