// Merging the models of a broken video (after COLMAP's Reconstruction::Merge and
// ComputeAlignmentBetweenReconstructions, J. L. Schonberger and J.-M. Frahm, "Structure-from-
// Motion Revisited", CVPR 2016). Two models overlap when the correspondence graph links their
// keypoints. The ModelMerger merges them in two complementary ways:
//   a. alignment: points of both models that the graph links (the same feature track
//      triangulated twice) give 3D-3D correspondences; a RANSAC over 3-point Umeyama
//      similarities (geometry::estimateSimilarity) brings the smaller model into the larger
//      one's frame; its images and points join, and points of one track are fused. The
//      residual is scale-free, in pixels: the median reprojection error of the transformed
//      point over the images of both tracks (COLMAP's AlignReconstructionsViaPoints tests
//      reprojections too); a 3D distance would need a threshold in each model's arbitrary
//      units, and the worst image of a long track refuses a point whose depth one wide-baseline
//      view got a few pixels wrong. Only points seen at minAlignAngleDeg of triangulation
//      angle in both models take part (a low-parallax point's depth is not known well enough
//      to align by);
//   b. absorption: the larger model registers the smaller model's keyframes (and keyframes
//      no model holds) by PnP against its points through the graph, triangulating as it goes
//      (the mapper's own registration, through ModelGrower);
//   c. anchoring: when absorption registered some of the smaller model's images but left more
//      than a quarter out (a ring of narrow views whose neighbours share few tracks: each image
//      that joins gives the next too few 2D-3D correspondences), an image both models now hold
//      gives the similarity's rotation and translation (its camera frame is the same in both up
//      to scale), the depths of the linked points along its rays the scale (their median ratio,
//      with at least minAnchorLinks agreeing within anchorScaleTolerance); the rest of the
//      smaller model joins through it, and the refinement and the checks below decide.
// Global BA, filtering and re-triangulation follow. A merge is kept only when the smaller
// model's images (nearly) all joined, the reprojection error stayed that of the parts and the
// larger model's trajectory kept its shape; otherwise both models are restored. Every refusal
// (of the alignment, and of the merge) is logged with its numbers (verbose) and counted by
// reason in MergeStats::refusals.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vidmap/geometry/similarity.h"
#include "vidmap/sfm/correspondence_graph.h"
#include "vidmap/sfm/reconstruction.h"
#include "vidmap/sfm/registration.h"
#include "vidmap/sfm/triangulator.h"

namespace vidmap::sfm {

using geometry::transformPose;

struct ModelMergerOptions {
  bool byAlignment = true;   // a. Sim(3) from shared tracks; b. (absorption) always runs
  int minCommonPoints = 12;  // links between two models (and alignment inliers) needed
  double minInlierRatio = 0.3;
  double maxReprojErrorPx = 6.0;  // an alignment inlier's median reprojection error (pixels)
  double minAlignAngleDeg = 1.5;  // triangulation angle of an aligned point in both models
  int minAbsorb2D3D = 20;         // a keyframe no model holds is tried with this many 2D-3D matches
  // The merged model's mean reprojection error may exceed the worse part's by this factor.
  double maxErrorGrowth = 1.1;
  // The larger model's camera centres may move by this fraction of their spread (RMS, after a
  // similarity) in the merge.
  double maxShapeChange = 0.05;
  bool byAnchor = true;                // c. (anchoring on a shared image) when a. and b. fall short
  int minAnchorLinks = 3;              // linked points whose depth ratios agree
  double anchorScaleTolerance = 1.25;  // a depth ratio within this factor of the median agrees
  bool verbose = false;                // one line per merge on stderr

  void check() const;  // throws vidmap::Error naming the bad field
};

struct MergeStats {
  int attempts = 0, merged = 0, aligned = 0;  // aligned: by Sim(3)
  int anchored = 0;                           // merged through an image both models held
  int imagesAbsorbed = 0;                     // keyframes registered by PnP while merging
  // Refusals by reason: "alignment_few_links", "alignment_few_inliers",
  // "alignment_inlier_ratio" (the alignment; absorption still runs), "anchor_no_shared_image",
  // "anchor_few_links", "anchor_scale_disagrees" (the anchoring), "images_left_out",
  // "error_growth", "shape_change" (the merge, restored).
  std::map<std::string, int> refusals;
};

// What a merge asks of the mapper that owns the models: to grow a model as while mapping.
class ModelGrower {
 public:
  virtual ~ModelGrower() = default;
  // Registers what it can of `keyframes` into `model` (PnP, triangulation, local BA).
  virtual void absorb(std::unique_ptr<Reconstruction>& model,
                      const std::vector<int>& keyframes) = 0;
  // Global BA, filtering, re-triangulation.
  virtual void refine(std::unique_ptr<Reconstruction>& model) = 0;
};

class ModelMerger {
 public:
  // The graph and the triangulator must outlive the merger.
  ModelMerger(const CorrespondenceGraph& graph, const Triangulator& triangulator,
              const ModelMergerOptions& options);

  // Merges every linked pair of `models`, the larger absorbing the smaller, then each model
  // (the largest first) registers keyframes no model holds (all of them once one can be tried:
  // each that joins gives the next its 2D-3D correspondences); keyframes from `limit` on belong
  // to the segment after a break and stay out. Rounds of both repeat while a model grows (a
  // keyframe it gained may link it to a model it could not merge with before). Merged models
  // leave `models`.
  void mergeAll(std::vector<std::unique_ptr<Reconstruction>>& models, int limit,
                ModelGrower& grower, MergeStats* stats) const;

  // The matches of the graph between images of a and images of b.
  int linkCount(const Reconstruction& a, const Reconstruction& b) const;
  // a. alone: the Sim(3) of the linked points brings `small` into `big` (images, points, fused
  // tracks); false (big unchanged) when too few links or inliers, the reason in *refusal
  // (MergeStats' key) when given. *sim (when given) receives the similarity small -> big.
  bool alignAndJoin(Reconstruction& big, const Reconstruction& small,
                    std::string* refusal = nullptr, geometry::Sim3* sim = nullptr) const;

  // c. alone: the similarity of an image both models hold (the one that sees the most of
  // `small`'s points) and the depth ratios of the linked points brings `small` into `big`;
  // false (big unchanged) with the reason in *refusal when given.
  bool anchorAndJoin(Reconstruction& big, const Reconstruction& small,
                     std::string* refusal = nullptr) const;

  const ModelMergerOptions& options() const { return options_; }

 private:
  // The images of `small` that `big` does not hold, and its points seen by them, join `big`
  // through `sim` (small -> big); the pairs (small's point, big's point) in `fuse` become one.
  void join(Reconstruction& big, const Reconstruction& small, const geometry::Sim3& sim,
            const std::vector<std::pair<PointId, PointId>>& fuse) const;
  // small < 0: the model only registers keyframes no model holds.
  bool mergePair(std::vector<std::unique_ptr<Reconstruction>>& models, size_t big,
                 std::ptrdiff_t small, int limit, ModelGrower& grower, MergeStats* stats) const;

  const CorrespondenceGraph& graph_;
  const Triangulator& triangulator_;
  ModelMergerOptions options_;
};

}  // namespace vidmap::sfm
