// The triangulator of the incremental mapper (after COLMAP's IncrementalTriangulator,
// J. L. Schonberger and J.-M. Frahm, "Structure-from-Motion Revisited", CVPR 2016): the
// correspondence graph's tracks through a newly registered image become 3D points.
//
//   triangulateImage   each keypoint of the image without a point either continues a track (its
//                      correspondence's point reprojects into it within maxReprojErrorPx) or,
//                      with the registered views of its correspondences, makes a new point
//                      (multi-view DLT, geometry::triangulateTrack; when one wrong view spoils
//                      the joint solution, the best two-view point and the views that agree);
//   completeAndMerge   the points of the image take the correspondences that reproject within
//                      the error (complete), and two points of one track merge when one
//                      position explains both (merge);
//   retriangulate      both over every registered image (after global BA and filtering).
//
// Pixels are those of the pinhole part of the camera given (keyframes' normalized coordinates
// projected with it); reprojection errors are the model's (Reconstruction::reprojectionError).
#pragma once

#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/correspondence_graph.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::sfm {

struct TriangulatorOptions {
  // Continue, complete and merge tracks, and accept new points, within this error (working
  // pixels).
  double maxReprojErrorPx = 4.0;
  // A new point needs this triangulation angle (degrees); low-parallax points still fix the
  // rotation, and BA moves their depth as parallax grows.
  double minAngleDeg = 0.25;

  void check() const;  // throws vidmap::Error naming the bad field
};

class Triangulator {
 public:
  // The graph must outlive the triangulator.
  Triangulator(const CorrespondenceGraph& graph, const TriangulatorOptions& options);

  // New and continued points of the registered image `id` (see above).
  void triangulateImage(Reconstruction& rec, const Camera& camera, int id) const;
  // Completes the tracks of the points image `id` sees and merges tracks that are one point.
  void completeAndMerge(Reconstruction& rec, int id) const;
  // triangulateImage, then completeAndMerge, over every registered image.
  void retriangulate(Reconstruction& rec, const Camera& camera) const;

  const TriangulatorOptions& options() const { return options_; }

 private:
  const CorrespondenceGraph& graph_;
  TriangulatorOptions options_;
};

}  // namespace vidmap::sfm
