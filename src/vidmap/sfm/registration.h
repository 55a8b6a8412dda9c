// The registration of an image into a model (after COLMAP's IncrementalMapper::RegisterNextImage,
// J. L. Schonberger and J.-M. Frahm, "Structure-from-Motion Revisited", CVPR 2016, with two
// checks a video allows):
//
//   2D-3D          the keypoints of the image whose correspondences in the graph see points
//                  of the model (a keypoint may name several points: RANSAC chooses);
//   PnP            geometry::estimatePnP (P3P RANSAC, then refinement) within pnpMaxErrorPx,
//                  with at least pnpMinInliers inliers (PnP's own minimum: one rule), and
//                  pnpMinInlierRatio of the image's keypoints with a 2D-3D correspondence
//                  (distinct keypoints, not candidate points: a keypoint that names several
//                  points is one observation, as COLMAP counts it);
//   rotation only  a pure rotation about the centre of the keyframe nearest in video order
//                  among the registered ones it has verified matches with
//                  (geometry::rotationAboutCentre, refined) replaces the pose when the full
//                  pose's 3 extra degrees of freedom do not lower the inliers' squared
//                  residuals by more than rotationOnlyMaxChi2 times their variance (a
//                  likelihood-ratio test): the translation is not observed, and keeping PnP's
//                  would triangulate from a baseline that does not exist and let the scale run
//                  away in rotation-heavy video; a small real baseline stays;
//   jump           the camera centre must lie nearer that keyframe's than maxJumpOverDepth
//                  times the median depth of its inlier points.
//
// Each refusal says which check failed and the numbers it tested (RegistrationOutcome), so
// that the mapper can log it, count it by reason and name the frames that never joined.
//
// Frames the keyframe gate dropped are localised alike (PnP against their keyframe's points),
// without joining the model's tracks.
#pragma once

#include <memory>
#include <string>

#include "vidmap/geometry/pnp.h"
#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/correspondence_graph.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::gpu {
class Context;
}

namespace vidmap::sfm {

struct RegistrationOptions {
  double pnpMaxErrorPx = 6.0;  // working pixels (COLMAP: 12)
  int pnpMinInliers = 20;
  // Of the keypoints with a 2D-3D correspondence. COLMAP has no such gate (its
  // abs_pose_min_inlier_ratio only bounds RANSAC's iterations); a low floor still refuses a
  // pose that a few structured outliers (repeated texture) agree on. Issue 19's courtyard
  // photos: 70 inliers of 369 keypoints (0.19) at 1.2 px RMS, a pose COLMAP accepts.
  double pnpMinInlierRatio = 0.1;
  double maxJumpOverDepth = 1.0;
  // The rotation-only pose wins when the full pose lowers the inliers' squared pixel
  // residuals by at most this times their variance per coordinate (the full pose's). Under a
  // pure rotation the drop is chi^2 with 3 degrees of freedom: 16.3 is its 0.999 quantile.
  double rotationOnlyMaxChi2 = 16.3;
  // The registered keyframe that anchors the jump and rotation-only checks, among those the new
  // one has verified matches with: false (video), the nearest in input order; true (photos,
  // whose order says nothing of where they were taken), the one with the most verified matches,
  // its nearest view. In order, a ring of photos whose numbering jumps across the object
  // anchors an image to a far one and refuses it (Middlebury's temple ring: templeSR0015 to
  // 0010, 100 degrees away, instead of 0006, 18 degrees away).
  bool anchorByMatches = false;
  bool verbose = false;  // one line per check on stderr
  // registerImage's P3P RANSAC in lock-step rounds with one scoring call a round
  // (geometry/ransac_lockstep.h), on pnpDevice when set (CUDA builds; not owned), else on the
  // CPU: the same pose and inliers bit for bit as the per-sample RANSAC. Off in the mapper: a
  // video keyframe's PnP needs a round or two of a few dozen hypotheses, where a round's
  // barrier and launch cost more than the scoring (docs/benchmarks.md, "Batched triangulation
  // and PnP on the device (issue 13, helper tri13)"). localize() keeps the per-sample RANSAC
  // (it may run on several threads).
  bool pnpLockstep = false;
  gpu::Context* pnpDevice = nullptr;

  void check() const;  // throws vidmap::Error naming the bad field
};

// Why a registration was refused; toString gives the run record's key.
enum class Refusal {
  kNone,
  kFew2D3D,       // fewer 2D-3D correspondences than pnpMinInliers
  kPnP,           // PnP found no pose with pnpMinInliers inliers
  kInlierRatio,   // too small a fraction of the keypoints were inliers
  kRotationOnly,  // the rotation-only pose kept too few inliers
  kJump,          // the centre jumped further than maxJumpOverDepth x the median depth
  kNotConnected,  // (mapper) never had pnpMinInliers 2D-3D correspondences to try
};
const char* toString(Refusal r);  // "few_2d3d", "pnp", "inlier_ratio", ...

struct RegistrationOutcome {
  Refusal refusal = Refusal::kNone;  // kNone: registered
  std::string detail;                // the numbers tested, for logs and the run record
  int keypoints = 0;                 // keypoints with a 2D-3D correspondence
  int correspondences = 0;           // 2D-3D candidates (a keypoint may name several points)
  int inliers = 0;                   // inlier keypoints of the pose kept or refused
  bool ok() const { return refusal == Refusal::kNone; }
  explicit operator bool() const { return ok(); }
};

// The keypoints of image `id` with a correspondence in `graph` that sees a point of `rec`.
int count2D3D(const CorrespondenceGraph& graph, const Reconstruction& rec, int id);

class Registration {
 public:
  // The graph must outlive the registration.
  Registration(const CorrespondenceGraph& graph, const RegistrationOptions& options);

  int count2D3D(const Reconstruction& rec, int id) const { return sfm::count2D3D(graph_, rec, id); }
  // Registers image `id` into `rec` (pose, and its inliers join their points' tracks) when the
  // checks above pass; a refusal (with its reason and numbers) leaves `rec` unchanged. Pixels
  // are those of the pinhole part of `camera` (keyframes' normalized coordinates projected
  // with it).
  RegistrationOutcome registerImage(Reconstruction& rec, const Camera& camera, int id) const;
  // The pose of a tracked frame by PnP against the points of its keyframe in `rec` (its
  // keypoints undistorted with the model's camera); false when the keyframe is not in `rec`
  // or PnP fails its checks.
  bool localize(const Reconstruction& rec, const TrackedFrame& frame, LocalizedFrame* out) const;

  const RegistrationOptions& options() const { return options_; }

 private:
  geometry::PnPResult pnp(const geometry::Vec2List& px, const geometry::Vec3List& X,
                          const geometry::Pinhole& pin, const geometry::PnPOptions& po) const;

  const CorrespondenceGraph& graph_;
  RegistrationOptions options_;
  mutable std::shared_ptr<geometry::BatchScorer> scorer_;  // pnpLockstep's, made on first use
};

}  // namespace vidmap::sfm
