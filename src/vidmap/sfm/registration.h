// The registration of an image into a model (after COLMAP's IncrementalMapper::RegisterNextImage,
// J. L. Schonberger and J.-M. Frahm, "Structure-from-Motion Revisited", CVPR 2016, with two
// checks a video allows):
//
//   2D-3D          the keypoints of the image whose correspondences in the graph see points
//                  of the model (a keypoint may name several points: RANSAC chooses);
//   PnP            geometry::estimatePnP (P3P RANSAC, then refinement) within pnpMaxErrorPx,
//                  with at least pnpMinInliers inliers and pnpMinInlierRatio of them;
//   rotation only  a pure rotation about the centre of the keyframe nearest in video order
//                  (geometry::rotationAboutCentre) replaces the pose when it explains the
//                  inliers within rotationOnlyTolerancePx RMS of the full pose: the translation
//                  is not observed, and keeping PnP's would triangulate from a baseline that
//                  does not exist and let the scale run away in rotation-heavy video;
//   jump           the camera centre must lie nearer that keyframe's than maxJumpOverDepth
//                  times the median depth of its inlier points.
//
// Frames the keyframe gate dropped are localised alike (PnP against their keyframe's points),
// without joining the model's tracks.
#pragma once

#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/correspondence_graph.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::sfm {

struct RegistrationOptions {
  double pnpMaxErrorPx = 6.0;  // working pixels (COLMAP: 12)
  int pnpMinInliers = 20;
  double pnpMinInlierRatio = 0.2;
  double maxJumpOverDepth = 1.0;
  double rotationOnlyTolerancePx = 0.05;
  bool verbose = false;  // one line per check on stderr

  void check() const;  // throws vidmap::Error naming the bad field
};

// The keypoints of image `id` with a correspondence in `graph` that sees a point of `rec`.
int count2D3D(const CorrespondenceGraph& graph, const Reconstruction& rec, int id);

class Registration {
 public:
  // The graph must outlive the registration.
  Registration(const CorrespondenceGraph& graph, const RegistrationOptions& options);

  int count2D3D(const Reconstruction& rec, int id) const { return sfm::count2D3D(graph_, rec, id); }
  // Registers image `id` into `rec` (pose, and its inliers join their points' tracks) when the
  // checks above pass; false leaves `rec` unchanged. Pixels are those of the pinhole part of
  // `camera` (keyframes' normalized coordinates projected with it).
  bool registerImage(Reconstruction& rec, const Camera& camera, int id) const;
  // The pose of a tracked frame by PnP against the points of its keyframe in `rec` (its
  // keypoints undistorted with the model's camera); false when the keyframe is not in `rec`
  // or PnP fails its checks.
  bool localize(const Reconstruction& rec, const TrackedFrame& frame, LocalizedFrame* out) const;

  const RegistrationOptions& options() const { return options_; }

 private:
  const CorrespondenceGraph& graph_;
  RegistrationOptions options_;
};

}  // namespace vidmap::sfm
