// The incremental mapper of a video (after COLMAP's IncrementalMapper, J. L. Schonberger and
// J.-M. Frahm, "Structure-from-Motion Revisited", CVPR 2016, specialised to video order):
//
//   addKeyframe(k, pairs)  verify each pair (geometry::estimateRelativePose: E, F or H with the
//                          model choice), add the inlier matches to the correspondence graph;
//   self-calibrate         an unknown focal length from the first pairs (focal_estimation.h);
//   initialise             from the pair of the current segment with the most triangulated
//                          points whose median triangulation angle passes initMinAngleDeg;
//                          after initMaxPendingKeyframes sampled frames (from the segment's
//                          first keyframe to the newest, dropped frames included) without one
//                          (a start by
//                          pure rotation or a crawl), from the pair of the largest median angle
//                          above initRelaxedMinAngleDeg; the waiting keyframes register later;
//                          at the input's end with no model ever started, the same down to
//                          initLastResortMinAngleDeg;
//   register               every keyframe of the segment with enough 2D-3D correspondences, the
//                          best connected first, by PnP RANSAC + refinement; a pure rotation
//                          about the nearest keyframe's centre replaces the pose when it fits
//                          the inliers as well (the translation is not observed)
//                          (registration.h); a refused keyframe is tried again when its 2D-3D
//                          correspondences grew, or (at most maxRegistrationTrials times in
//                          all) after another keyframe joined, was triangulated and adjusted
//                          (COLMAP's retry of not-yet-registered images);
//   triangulate            new tracks through the graph, continue, complete and merge tracks
//                          (triangulator.h);
//   local BA               around the new keyframe (the most connected images), then filter
//                          observations by reprojection error and points by triangulation angle;
//   global BA              by an error budget at growth milestones, and at the end, with the
//                          shared camera's focal length and distortion when unknown; then
//                          filtering and re-triangulation. When the model has grown by
//                          globalBaGrowth since the last milestone, the mean reprojection error
//                          of all its observations (one pass, no solve) is compared with the
//                          error right after the last global BA: within globalBaErrorBudget
//                          times that, the local windows have kept the model consistent and
//                          the global BA is skipped; beyond it, or when the model has grown by
//                          globalBaMaxGrowth since the last global BA, it runs; and below
//                          globalBaBudgetMinImages images it always runs. (COLMAP runs
//                          one at every 10% of growth; the point of a global BA is the drift
//                          the local windows leave, and that drift is what raises the error of
//                          the observations outside them.)
//
// When maxConsecutiveFailures keyframes in a row cannot be registered, the video has broken
// (lost tracking): the model is finished and the following keyframes start a new one. When a
// model is finished and at the end, models the correspondence graph links are merged
// (model_merge.h: Sim(3) alignment of shared tracks, then absorption of keyframes by PnP, then
// anchoring on an image both models hold), and the merged model also registers keyframes no
// model holds. Frames the keyframe gate dropped
// are localised at the end by PnP against their keyframe's points.
//
// Every refusal (registration, triangulation, alignment, merge) is logged with its numbers
// (verbose) and counted by reason in MapperStats; keyframes that no model holds at the end
// are listed with the last reason they were refused (MapperStats::unjoined).
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vidmap/geometry/score_batch.h"
#include "vidmap/geometry/two_view.h"
#include "vidmap/io/run_record.h"
#include "vidmap/sfm/bundle.h"
#include "vidmap/sfm/correspondence_graph.h"
#include "vidmap/sfm/model_merge.h"
#include "vidmap/sfm/pair_verification.h"
#include "vidmap/sfm/reconstruction.h"
#include "vidmap/sfm/registration.h"
#include "vidmap/sfm/tracks.h"
#include "vidmap/sfm/triangulator.h"

namespace vidmap::sfm {

struct MapperOptions {
  // Pair verification; a pair counts as a pure rotation (panoramic) below 0.5 degrees of
  // median triangulation angle, so the relaxed initialisation can still use slow translation.
  geometry::TwoViewOptions twoView = [] {
    geometry::TwoViewOptions o;
    o.min_triangulation_angle_deg = 0.5;
    return o;
  }();
  int minPairInliers = 15;  // a verified pair with fewer inliers is dropped
  // Verification as video needs it: once the focal length is known (given or self-calibrated)
  // F is estimated only when E fails, and a pair's known E (PairMatches::essential, the
  // guide's) is the first hypothesis of E's RANSAC. false: E, F and H searched from scratch
  // for every pair.
  bool videoVerification = true;
  // A photo set (not a video's frames): the input order says nothing of where the images were
  // taken, so registration anchors its checks to the registered image with the most verified
  // matches (RegistrationOptions::anchorByMatches), not the nearest in order.
  bool photos = false;

  // An unknown focal length is self-calibrated from the first pairs (focal_estimation.h)
  // before the first model starts, once this many pairs are usable.
  bool selfCalibrateFocal = true;
  int selfCalibrationMinPairs = 3;
  // The homographies' estimate then refined on the pairs' calibrated profile
  // (sfm::profileFocal), within this factor either side (0: the homographies' estimate kept;
  // the pipeline sets pipeline::kKltSelfCalibrationProfileRange with the KLT tracks).
  double selfCalibrationProfileRange = 0;
  // ... and moved there only when the likelihood ratio of the profile's minimum against the
  // homographies' estimate reaches this (chi-square, one degree of freedom, 0.99).
  double selfCalibrationProfileMinRatio = 6.63;

  int initMinPoints = 50;        // points triangulated by the initial pair
  double initMinAngleDeg = 4.0;  // median triangulation angle of the initial pair
  // Then the relaxed rule; counted in sampled frames from the segment's first keyframe (with
  // every frame a keyframe, keyframes), so that a sparse keyframe gate does not wait longer.
  int initMaxPendingKeyframes = 8;
  double initRelaxedMinAngleDeg = 0.75;
  // When the input ends and no model was ever started (no pair reached the relaxed angle: a
  // pan over a small baseline), the relaxed rule once more down to this angle (0: off). A
  // model whose depths are weak beats none; an input that started a model is not touched.
  double initLastResortMinAngleDeg = 0.25;

  double pnpMaxErrorPx = 6.0;  // working pixels (COLMAP: 12)
  int pnpMinInliers = 20;
  double pnpMinInlierRatio = 0.1;  // of the keypoints with 2D-3D correspondences (registration.h)
  // A refused keyframe is tried again after later registrations at most this many times in
  // all (COLMAP's max_reg_trials: 3); a grown 2D-3D count always earns a new try.
  int maxRegistrationTrials = 3;
  // A registration is refused when the camera centre lies further from the nearest keyframe
  // (in video order; photos: the one with the most verified matches) than this times the median
  // depth of its inlier points.
  double maxJumpOverDepth = 1.0;
  // A new keyframe keeps the centre of the nearest keyframe (a pure rotation) when the full
  // pose lowers its PnP inliers' squared residuals by at most this times their variance
  // (registration.h: a chi^2 test of the translation's 3 degrees of freedom).
  double rotationOnlyMaxChi2 = 16.3;

  double maxReprojErrorPx = 4.0;  // observations above are filtered (working pixels)
  // New points and filtering. COLMAP's 1.5 degrees breaks rotation-heavy video into pieces;
  // low-parallax points still fix the rotation, and BA moves their depth as parallax grows.
  double minTriAngleDeg = 0.25;
  // New points nearer than this fraction of the median depth of the image are refused
  // (TriangulatorOptions::minDepthFraction: the rays of nearly coincident centres).
  double minTriDepthFraction = 0.05;

  int localBaImages = 6;  // the new keyframe and its most connected registered images
  // Every adjustment (local, global, the initial pair's) holds the points its observations see
  // with less parallax than this (BundleOptions::minParallaxDeg, degrees): their depth is not
  // in the problem. 0.01 degrees is 0.09 px of disparity at f = 500 px.
  double baMinParallaxDeg = 0.01;
  // After the frames the keyframe gate dropped are localised, a last global adjustment of each
  // model refines them with its keyframes and points (BundleOptions::withLocalized; the camera
  // held): their observations add to the points what the dropped keyframes would have. The
  // KLT gate's models were worse than --klt off's where it kept fewer keyframes, by as much as
  // --klt off's own with the same keyframes (docs/benchmarks.md, "The KLT gate's loss: fewer
  // keyframes, and the dropped frames' observations").
  bool adjustLocalized = true;
  int localBaIterations = 25;
  // A local BA stops when an iteration lowers its cost by less than this fraction (Ceres'
  // functionTolerance). 1e-5 is a third faster a call on tum-fr1-xyz at 4 fps (44.9 -> 33.6 CPU
  // ms, ATE 13.01 -> 13.06 mm), but fr1-rpy's last global BAs then run to their cap and its run
  // takes more CPU, not less (28.6 against 23.9 s); 1e-6 keeps the models of a full solve
  // (docs/benchmarks.md, "Local BA and the filter at 50 ms").
  double localBaFunctionTolerance = 1e-6;
  // Bounds of a local BA (BundleOptions::maxPoints, maxConstantImages: the rule is there), so
  // that its cost stays flat as tracks grow long and features dense (0: none). With these,
  // a window is at most 2000 points seen from 14 images (15k observations on tum-fr1-xyz), and
  // its cost at most localBaIterations times that: tens of milliseconds on one core.
  int localBaMaxPoints = 2000;
  int localBaMaxConstantImages = 8;
  // With the CUDA backend, a bundle adjustment of fewer observations runs on the CPU
  // (BundleOptions::cudaMinObservations: the measured crossover).
  int baCudaMinObservations = BundleOptions{}.cudaMinObservations;
  // BundleOptions::cudaOneBlockCholeskyMaxColumns of every adjustment (0: cuSOLVER always).
  int baCudaOneBlockCholesky = 0;
  int globalBaIterations = 50;
  // The global BA schedule (the rule is at the top of this file): a milestone when the image
  // count grew by globalBaGrowth since the last one; there, a global BA when the mean
  // reprojection error exceeds globalBaErrorBudget times its value after the last global BA,
  // or when the image count grew by globalBaMaxGrowth since that one. globalBaErrorBudget 1
  // and globalBaMaxGrowth equal to globalBaGrowth: one at every milestone (the former rule).
  // Below globalBaBudgetMinImages images every milestone runs one: a small model's global BA
  // is cheap, and it is where an unknown camera is calibrated (refineIntrinsicsMinImages on).
  double globalBaGrowth = 1.25;
  double globalBaErrorBudget = 1.05;
  double globalBaMaxGrowth = 2.0;
  int globalBaBudgetMinImages = 40;
  double globalBaGrowingTolerance = 1e-6;  // their relative cost change to stop at (BA's default)
  int refineIntrinsicsMinImages = 6;       // an unknown camera is refined from this model size on
  // An unknown camera whose global adjustment leaves it implausible (COLMAP's bounds on a
  // camera: a focal length outside [minFocalRatio, maxFocalRatio] x the larger side, or a
  // distortion coefficient above maxDistortion in magnitude) ran away along the valley where
  // a longer focal length and a stronger pincushion explain the same tracks: TUM fr1-desk at
  // 4 fps from its 4th frame went 733 -> 32346 px with k1 0 -> 1300, a model 0.54 m and 171
  // deg off. The adjustment is then made again from the focal length before it, without
  // distortion, and the distortion stays held at 0 for the run (the focal length refined):
  // the same frames without distortion in the model give 22.7 mm (docs/benchmarks.md, "The
  // camera's runaway held").
  double minFocalRatio = 0.1, maxFocalRatio = 10, maxDistortion = 1;

  int maxConsecutiveFailures = 4;  // keyframes in a row not registered: a new model starts
  int minModelImages = 3;          // smaller finished models are dropped

  // Merging finished models that the correspondence graph links (model_merge.h).
  bool mergeModels = true;
  bool mergeByAlignment = true;   // a. Sim(3) from shared tracks; b. (absorption) always runs
  int mergeMinCommonPoints = 12;  // 3D-3D correspondences (and alignment inliers) needed
  double mergeMinInlierRatio = 0.3;
  // The merged model's mean reprojection error may exceed the worse part's by this factor.
  double mergeMaxErrorGrowth = 1.1;
  // The larger model's camera centres may move by this fraction of their spread (RMS, after a
  // similarity) in the merge.
  double mergeMaxShapeChange = 0.05;

  ba::BackendType backend = ba::BackendType::kCpu;
  // The CUDA contexts of local and global BA (the initial pair's BA counts as global), so
  // their kernels and memory reach the run record; null: the backend makes its own. Not owned.
  gpu::Context* localBaContext = nullptr;
  gpu::Context* globalBaContext = nullptr;
  // Pair verification: each pair's estimateRelativePose on CPU threads (false), or the RANSACs
  // of a keyframe's pairs in lock-step with one scoring call per round
  // (geometry/two_view_batch.h), on the GPU when verifyContext is set. Both give the same
  // geometry bit for bit; the pipeline keeps the per-pair path on both devices, as the batched
  // one is slower on video (TUM fr1-rpy on the H200: 600 against 417 ms; docs/benchmarks.md,
  // "Batched pair verification (issue 13, helper verify13)").
  bool batchedVerification = false;
  gpu::Context* verifyContext = nullptr;  // non-null: batched, scored on this device. Not owned.
  bool verbose = false;  // one line per event (pairs, initialisation, registration) on stderr

  void check() const;  // throws vidmap::Error naming the bad field
  // The options of the parts (after COLMAP's IncrementalPipelineOptions::Triangulation()).
  TriangulatorOptions triangulator() const;
  RegistrationOptions registration() const;
  ModelMergerOptions merger() const;
};

// A keyframe that no model holds at the end, with the last reason it was refused.
struct UnjoinedKeyframe {
  int id = 0;
  std::string name;
  std::string reason;  // registration.h's toString(Refusal): "pnp", "inlier_ratio", ...
  std::string detail;  // the numbers tested
};

struct MapperStats {
  int keyframes = 0;
  int pairsVerified = 0, pairsRejected = 0;
  // Pairs whose geometry addKeyframe took from Mapper::verifyAhead (the same inputs), and pairs
  // verified ahead that it estimated again (their inputs differed: the camera had changed).
  int pairsVerifiedAhead = 0, pairsAheadDiffered = 0;
  std::int64_t verifyRounds = 0, verifyHypotheses = 0;  // batched verification's scoring calls
  std::int64_t pairMatches = 0, verifiedMatches = 0;
  // KLT track matches kept (fit the pair's descriptor geometry), rejected (do not), unchecked
  // (dropped: the pair has too few descriptor matches for a geometry).
  std::int64_t trackMatchesKept = 0, trackMatchesRejected = 0, trackMatchesUnchecked = 0;
  double selfCalibratedFocal = 0;  // 0: not self-calibrated
  // The homographies' estimate (sfm::estimateFocal), and whether the pairs' calibrated profile
  // moved the start from it (sfm::profileFocal).
  double homographyFocal = 0;
  bool selfCalibrationProfiled = false;
  int initAttempts = 0, lastResortInits = 0, registrations = 0, pnpFailures = 0, modelsStarted = 0,
      modelsDropped = 0;
  int localBa = 0, globalBa = 0;
  int intrinsicsRunaways = 0;  // global BAs whose camera was implausible (distortion then held)
  int globalBaSkipped = 0;     // milestones whose error was within globalBaErrorBudget
  int trackedFrames = 0, localizedFrames = 0;
  int mergeAttempts = 0, modelsMerged = 0, modelsAligned = 0;  // aligned: by Sim(3)
  int modelsAnchored = 0;  // merged through an image both held (model_merge.h, c.)
  int imagesAbsorbed = 0;  // keyframes a model registered by PnP while merging
  // Refusals by reason (each refused attempt counts once): registration.h's Refusal names,
  // TriangulatorStats::refused (new points), MergeStats::refusals.
  std::map<std::string, int> registrationRefusals;
  std::map<std::string, std::int64_t> triangulationRefusals;
  std::map<std::string, int> mergeRefusals;
  std::vector<UnjoinedKeyframe> unjoined;  // filled by finish()
  double verifySeconds = 0, initSeconds = 0, registerSeconds = 0, triangulateSeconds = 0;
  double localBaSeconds = 0, globalBaSeconds = 0, filterSeconds = 0, mergeSeconds = 0;
  double localizeSeconds = 0;  // the dropped frames' PnP (their adjustment is a global BA)
  // The timed scopes of verify, init, triangulate and filter (their stages' calls).
  std::int64_t verifyCalls = 0, initCalls = 0, triangulateCalls = 0, filterCalls = 0;

  // The stage times ("mapper.*") and counts into a run record: a new stat is one line there.
  // Refusals are counts "registration_refusals.<reason>", "triangulation_refusals.<reason>",
  // "merge_refusals.<reason>"; unjoined keyframes the list "unjoined_keyframes" (id, name,
  // reason, detail).
  void writeTo(io::RunRecord& record) const;
};

// The global BA rule of a growing model (at the top of this file): its image count at the last
// global BA and at the last milestone, and its mean reprojection error (px) after the last
// global BA.
struct GlobalBaSchedule {
  int lastImages = 0, lastMilestoneImages = 0;
  double errorAfter = 0;
  enum class Decision { kNone, kSkip, kRun };  // no milestone; within budget; due
  Decision lastDecision = Decision::kNone;
  double lastError = 0;  // the error measured at the last milestone (px)

  void adjusted(const Reconstruction& rec);  // rec as just adjusted by a global BA
  // At rec's size: a milestone (globalBaGrowth since the last one), then whether the error or
  // the growth since the last global BA calls for one. The error is one pass over the
  // observations, made only at a milestone and only when the growth alone does not decide.
  Decision decide(const Reconstruction& rec, const MapperOptions& options);
};

// A keyframe's pairs verified ahead of the mapper (Mapper::verifyAhead; defined in mapper.cc).
struct VerifiedAhead;

class Mapper {
 public:
  Mapper(const Camera& camera, const MapperOptions& options);

  // Called with each keyframe and its pairs as addKeyframe receives them (before any change),
  // e.g. to keep a photo set's input and map it again (pipeline/focal_sweep.h).
  void setKeyframeSink(std::function<void(const Keyframe&, const std::vector<PairMatches>&)> sink) {
    keyframeSink_ = std::move(sink);
  }
  // Adds the next keyframe (kf.id must equal the number of keyframes so far) with the matches
  // of its pairs to earlier keyframes, and grows the current model. kf.normalized is filled
  // here. Bad pair indices are a vidmap::Error. `ahead`: these pairs verified ahead
  // (verifyAhead), or null.
  void addKeyframe(Keyframe kf, const std::vector<PairMatches>& pairs,
                   const VerifiedAhead* ahead = nullptr);
  // The focal length's state that pair verification reads (sfm/pair_verification.h).
  FocalLength focalState() const;
  // A new keyframe's pairs verified as addKeyframe would verify them with `camera` and `focal`,
  // on the calling thread: a pipelined front end's, while it waits for the mapper
  // (pipeline/frontend_worker.h). It reads nothing of the mapper but its options, so it may run
  // beside addKeyframe. keypoints(id): keyframe id's keypoints as addKeyframe receives them
  // (null: not known here, the pair is left to addKeyframe). addKeyframe takes a pair's
  // geometry from the result only when its own inputs are the same, bit for bit (the pair's
  // matches and guide, the focal length's state, the camera's pinhole part, every undistorted
  // point), and estimates it otherwise: the model does not depend on whether, or with which
  // camera, the pairs were verified ahead. With batched verification (batchedVerification,
  // verifyContext) it verifies none.
  std::shared_ptr<const VerifiedAhead> verifyAhead(
      const Camera& camera, FocalLength focal, const std::vector<PairMatches>& pairs,
      const std::function<const std::vector<Vec2>*(int)>& keypoints) const;
  // Called with the matches that the verification of a pair rejected (a verified pair's
  // outliers, image1 < image2), in the order pairs are committed: a tracker ends the tracks
  // that gave them (reason 6 of docs/architecture.md, "KLT: checks and ends").
  void setOutlierSink(std::function<void(const PairMatches&)> sink) {
    outlierSink_ = std::move(sink);
  }
  // Called with a keyframe's id once its pairs are verified and committed (after the outlier
  // sink's calls for them), before registration: a front end that reads the outliers (a
  // tracker ending tracks) may go on from here while the keyframe is registered and adjusted
  // (pipeline/frontend_worker.h).
  void setVerifiedSink(std::function<void(int)> sink) { verifiedSink_ = std::move(sink); }
  // Called each time the camera changes (a global BA refined it, self-calibration, a merge),
  // on the thread that calls addKeyframe and finish: a pipelined front end publishes it at
  // once, so that what it makes ahead (guides, pair verifications) uses it.
  void setCameraSink(std::function<void()> sink) { cameraSink_ = std::move(sink); }
  // A frame the gate dropped, matched to an earlier keyframe; localised by finish().
  void addTrackedFrame(TrackedFrame frame);
  // Called with each tracked frame as addTrackedFrame receives it, to map a video again
  // (pipeline/focal_sweep.h).
  void setTrackedSink(std::function<void(const TrackedFrame&)> sink) {
    trackedSink_ = std::move(sink);
  }
  // Finishes the current model (global BA, filtering, re-triangulation), then localises the
  // tracked frames in the models of their keyframes. Idempotent.
  void finish();

  const KeyframeStore& keyframes() const { return keyframes_; }
  const CorrespondenceGraph& graph() const { return graph_; }
  // Finished models, then the current one (models with fewer than minModelImages images are
  // dropped when finished).
  std::vector<const Reconstruction*> models() const;
  const Reconstruction* current() const { return active_.get(); }
  // The camera of the current (or last) model: the frontend undistorts with it.
  const Camera& camera() const { return camera_; }
  const MapperStats& stats() const { return stats_; }
  const MapperOptions& options() const { return options_; }

 private:
  struct PairInfo {
    geometry::TwoViewConfig config = geometry::TwoViewConfig::kDegenerate;
    int inliers = 0;
    int triangulated = 0;
    double medianAngleDeg = 0;
    geometry::Pose relative;  // first -> second (first < second)
    geometry::Mat3 F = geometry::Mat3::Zero(), H = geometry::Mat3::Zero();  // pixels
    int fInliers = 0, hInliers = 0;
  };

  // Pair verification: the two-view geometry of each pair (preparePair, estimatePrepared;
  // thread-safe), then its inliers into the correspondence graph (commitPair), pair by pair
  // in order.
  struct PairCheck {
    int a = 0, b = 0;  // a < b
    std::vector<std::pair<int, int>> matches;
    bool estimated = false;  // false: too few matches (or the pair is already known)
    geometry::TwoViewGeometry geometry;
    // Track matches (PairMatches::firstTrackMatch) that do not fit the descriptors' geometry,
    // and those of a pair with too few descriptor matches to have one.
    std::vector<std::pair<int, int>> trackRejected;
    int trackUnchecked = 0;
    size_t descriptorMatches = 0;  // matches[0..this) are descriptor matches
  };
  // A pair's undistorted points: its descriptor matches (p1, p2) and its track matches (t1, t2).
  struct PairPoints {
    geometry::Vec2List p1, p2, t1, t2;
  };
  friend struct VerifiedAhead;
  // The pair in (a < b) order and, when it is to be estimated (true), its points and options
  // (undistorted(image, keypoint): a keypoint undistorted, in pixels of the camera's pinhole
  // part; keypoint(image, k): as detected, for the verbose line only).
  template <class Undistorted, class Keypoint>
  static bool preparePairWith(const MapperOptions& o, FocalLength focal, const PairMatches& pm,
                              Undistorted&& undistorted, Keypoint&& keypoint, PairCheck* c,
                              PairPoints* pts, PairVerification* v);
  bool preparePair(const PairMatches& pm, PairCheck* c, PairPoints* pts, PairVerification* v) const;
  // The geometry of a prepared pair, then the track matches that fit it: the pair estimated
  // again with them (sfm/pair_verification.h, trackMatchesFit). `pts` is consumed.
  static void estimatePrepared(const geometry::Pinhole& cam, PairCheck* c, PairPoints* pts,
                               const PairVerification& v);
  static void fitTrackMatches(const geometry::Pinhole& cam, PairCheck* c, PairPoints* pts,
                              const PairVerification& v);
  void commitPair(const PairCheck& check);
  void verifyPairs(const std::vector<PairMatches>& pairs, const VerifiedAhead* ahead);
  PairInfo pairInfo(const geometry::TwoViewGeometry& g) const;
  // Estimates an unknown focal length from the segment's pairs; false while too few pairs.
  bool selfCalibrate(int newest);
  // Sets the camera's focal length and verifies the segment's pairs again with it.
  void setSelfCalibratedFocal(double focal);
  // lastResort: the relaxed rule without the wait, down to initLastResortMinAngleDeg.
  bool tryInitialize(int newest, bool lastResort = false);
  // Whether the segment has waited initMaxPendingKeyframes sampled frames up to `newest`.
  bool waitedLong(int newest) const;
  bool initializeFrom(int a, int b);
  // Registers keyframes of the current segment (or only those in `only`) while any can be.
  void registerPending(const std::vector<int>* only = nullptr);
  void noteUnjoined();
  void localBundle(int id);
  // functionTolerance: the final adjustments use BundleOptions' default; those made while the
  // model grows use globalBaGrowingTolerance (the same by default; a looser value stops them
  // earlier, and the next one starts from their result).
  // The options every global adjustment shares (iterations, loss, backend, parallax hold).
  BundleOptions globalBundleOptions() const;
  void globalBundle(double functionTolerance = BundleOptions{}.functionTolerance);
  // Within MapperOptions' bounds on a camera (minFocalRatio, maxFocalRatio, maxDistortion).
  bool plausible(const Camera& camera) const;
  void filterPoints(const std::vector<PointId>& candidates);
  void filterPointsOf(Reconstruction& rec, const std::vector<PointId>& candidates);
  void filterAll();
  void filterAllOf(Reconstruction& rec);
  void retriangulateAll();
  void finishModel();
  void refineModel();  // global BA, filtering, re-triangulation, global BA, filtering
  // Merging (ModelMerger, model_merge.h): every linked pair of finished models, the larger
  // absorbing the smaller, then each model registers keyframes no model holds; keyframes from
  // `limit` on belong to the segment after a break and stay out. The mapper's camera and
  // registration state are restored after.
  void mergeFinishedModels(int limit);
  class Grower;  // the merger's access to registerPending and refineModel
  void refreshNormalized();
  void localizeTracked(Reconstruction& rec);
  Vec2 undistorted(int image, int keypoint) const;

  MapperOptions options_;
  Camera camera_;
  KeyframeStore keyframes_;
  std::function<void(const Keyframe&, const std::vector<PairMatches>&)> keyframeSink_;
  std::function<void(const TrackedFrame&)> trackedSink_;
  CorrespondenceGraph graph_;
  Triangulator triangulator_;                            // on graph_
  Registration registration_;                            // on graph_
  std::unique_ptr<geometry::BatchScorer> verifyScorer_;  // batched verification's, on first use
  ModelMerger merger_;                                   // on graph_ and triangulator_
  std::map<std::pair<int, int>, PairInfo> pairs_;
  std::vector<std::unique_ptr<Reconstruction>> finished_;
  std::unique_ptr<Reconstruction> active_;
  int segmentStart_ = 0;
  bool focalKnown_ = false;
  bool distortionHeld_ = false;      // after a runaway (MapperOptions::maxDistortion)
  GlobalBaSchedule globalSchedule_;  // of the active model
  bool globalBaDue();                // globalSchedule_.decide on the active model, counted
  void resetGlobalSchedule();        // the active model as just adjusted
  // A refused keyframe: its 2D-3D count and the model's size at its last try, and its tries.
  struct Trial {
    int count2D3D = 0, modelImages = 0, trials = 0;
  };
  std::map<int, Trial> tried_;
  std::map<int, RegistrationOutcome> lastRefusal_;  // keyframe -> its last refusal
  std::set<int> droppedIds_;                        // keyframes of dropped models
  std::vector<std::pair<int, int>> failedInitPairs_;
  std::deque<TrackedFrame> tracked_;
  bool finished_all_ = false;
  MapperStats stats_;
  std::function<void(const PairMatches&)> outlierSink_;
  std::function<void(int)> verifiedSink_;
  std::function<void()> cameraSink_;
};

}  // namespace vidmap::sfm
