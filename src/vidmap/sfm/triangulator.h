// The triangulator of the incremental mapper (after COLMAP's IncrementalTriangulator,
// J. L. Schonberger and J.-M. Frahm, "Structure-from-Motion Revisited", CVPR 2016): the
// correspondence graph's tracks through a newly registered image become 3D points.
//
//   triangulateImage   each keypoint of the image without a point either continues a track (its
//                      correspondence's point reprojects into it within maxReprojErrorPx) or,
//                      with the registered views of its correspondences, makes a new point
//                      (multi-view DLT, geometry::triangulateTrack; when one wrong view spoils
//                      the joint solution, the best two-view point and the views that agree);
//                      all new tracks of the image are solved in one batched call first
//                      (geometry::triangulateBatch, or its CUDA form), and the keypoints then
//                      decide in order as one at a time would, with the same result;
//   completeAndMerge   the points of the image take the correspondences that reproject within
//                      the error (complete), and two points of one track merge when one
//                      position explains both (merge);
//   retriangulate      both over every registered image (after global BA and filtering).
//
// A track that yields no new point is counted by the reason its triangulation gave
// (TriangulatorStats, the run record's "triangulation_refusals.*"); verbose logs the counts of
// each newly registered image.
//
// Pixels are those of the pinhole part of the camera given (keyframes' normalized coordinates
// projected with it); reprojection errors are the model's (Reconstruction::reprojectionError).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vidmap/geometry/triangulation_batch.h"

#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/correspondence_graph.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::gpu {
class Context;
}
namespace vidmap::geometry {
class CudaTriangulator;
}

namespace vidmap::sfm {

struct TriangulatorOptions {
  // Continue, complete and merge tracks, and accept new points, within this error (working
  // pixels).
  double maxReprojErrorPx = 4.0;
  // A new point needs this triangulation angle (degrees); low-parallax points still fix the
  // rotation, and BA moves their depth as parallax grows.
  double minAngleDeg = 0.25;
  // A new point nearer to the image than this fraction of the median depth of the points the
  // image already sees is refused ("too_near"; 0: no test; images with fewer than 10 points are
  // not tested). Views whose centres nearly coincide (a keyframe registered as a rotation about
  // the one before, registration.h, whose translation a bundle adjustment then nudged by 1e-6
  // of the depth) have rays of noisy keypoints that meet just before the cameras, at an angle
  // that passes minAngleDeg, and the two-view fallback, which keeps the largest angle, chose
  // them: on TUM fr1-rpy (H200) such points pulled the median depth of the rotating keyframes
  // from 20 to 1e-9 over 20 keyframes, and the model split (docs/benchmarks.md, "The mapper on
  // the CPU: one model on fr1-rpy").
  double minDepthFraction = 0.05;
  bool verbose = false;  // one line per triangulateImage on stderr
  // The new tracks of an image are solved in one batch (geometry/triangulation_batch.h); on
  // this device when set and the batch has at least deviceMinTracks tracks (CUDA builds only;
  // not owned). The result is the CPU's up to FMA rounding (bit for bit with
  // VIDMAP_CUDA_NO_FMA but for the last bit of an angle). The mapper leaves it unset: a video
  // keyframe has a few hundred new tracks, where the CPU is faster (docs/benchmarks.md,
  // "Batched triangulation and PnP on the device (issue 13, helper tri13)").
  gpu::Context* device = nullptr;
  int deviceMinTracks = 20000;
  // false: each track solved alone as it comes (the reference the batched path equals).
  bool batched = true;

  void check() const;  // throws vidmap::Error naming the bad field
};

struct TriangulatorStats {
  std::int64_t created = 0;    // new points
  std::int64_t continued = 0;  // observations that continued a track
  // New points refused, by reason: "degenerate", "behind_camera", "large_error",
  // "small_angle" (geometry::TriangulationStatus), "no_agreeing_views" (no two views of the
  // track agree after the joint solution failed), "too_near" (minDepthFraction).
  std::map<std::string, std::int64_t> refused;
};

class Triangulator {
 public:
  // The graph must outlive the triangulator.
  Triangulator(const CorrespondenceGraph& graph, const TriangulatorOptions& options);

  // New and continued points of the registered image `id` (see above).
  void triangulateImage(Reconstruction& rec, const Camera& camera, int id) const {
    triangulateImage(rec, camera, id, options_.verbose);
  }
  // Completes the tracks of the points image `id` sees and merges tracks that are one point.
  void completeAndMerge(Reconstruction& rec, int id) const;
  // triangulateImage, then completeAndMerge, over every registered image.
  void retriangulate(Reconstruction& rec, const Camera& camera) const;

  const TriangulatorOptions& options() const { return options_; }
  // Counts over every call so far (the triangulator's own bookkeeping, not its result).
  const TriangulatorStats& stats() const { return stats_; }

 private:
  void triangulateImage(Reconstruction& rec, const Camera& camera, int id, bool log) const;
  struct Speculation;
  template <class ViewOf>
  Speculation speculate(const Reconstruction& rec, int id, const geometry::TriangulationOptions& to,
                        const ViewOf& viewOf) const;
  std::vector<geometry::TrackTriangulation> solve(const geometry::TriangulationBatch& batch,
                                                  const geometry::TriangulationOptions& to) const;

  const CorrespondenceGraph& graph_;
  TriangulatorOptions options_;
  mutable TriangulatorStats stats_;
  mutable std::shared_ptr<geometry::CudaTriangulator> cuda_;  // made on first use
};

}  // namespace vidmap::sfm
