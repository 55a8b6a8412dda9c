// The per-frame front end of the video pipeline (docs/architecture.md, Front end):
//
//   1. SIFT features of the sampled frame;
//   2. plain matching (ratio 0.8, mutual) against the last keyframe;
//   0. with a PairMatchSource that tracks (pipeline/klt_source.h), the gate first decides on
//      the motion of its tracks when it has enough (docs/architecture.md, "Pair sources"): a
//      dropped frame then costs no SIFT nor matching;
//   3. the keyframe gate (sfm/keyframe_gate.h), when step 0 did not decide: drop the frame when
//      the median motion (raw keypoints, as detected: the motion in the image, as step 0's)
//      of its matches against the last keyframe is below gate.minMotionPx (at 640 px, scaled
//      by the working width) and the gap is below gate.maxGapSeconds; its features and matches
//      are discarded;
//   4. otherwise plain matching against the earlier active keyframes (and a few older ones at
//      doubling distances) in one call, then guided matching: per pair, the essential matrix of the
//      plain matches (five-point RANSAC, geometry::estimateEssential) gives the epipolar band in
//      which matches are searched again (features::Matcher::matchGuided); the pairs, merged
//      with those of any PairMatchSource, go to the mapper.
//
// Photos (a folder that is not a video's frames, FrontendOptions::photos) skip step 3: every
// photo is a keyframe, since a photo set has no redundant frames to drop and a photo the gate
// dropped would only be posed by PnP, unadjusted. In step 4 each photo is matched against every
// earlier one (exhaustive pairs, as COLMAP's exhaustive matcher) up to exhaustivePhotos photos;
// later photos against the last activeKeyframes and the older ones at doubling distances, as a
// video.
#pragma once

#include <array>
#include <deque>
#include <memory>
#include <vector>

#include "vidmap/features/matcher.h"
#include "vidmap/features/sift.h"
#include "vidmap/io/frame_source.h"
#include "vidmap/io/run_record.h"
#include "vidmap/pipeline/pair_source.h"
#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/keyframe_gate.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::pipeline {

struct FrontendOptions {
  features::SiftOptions sift;
  features::MatchOptions match;   // ratio 0.8, mutual
  sfm::KeyframeGateOptions gate;  // 8 px at 640 px, 1 s, 20 matches
  int activeKeyframes = 6;        // earlier keyframes a frame is matched against
  // A new keyframe is also matched against the keyframes 2, 4, 8, ... times activeKeyframes
  // back, within this many (their features are kept that long: 0.5 KiB per feature).
  int historyKeyframes = 48;
  int minFeatures = 32;  // frames with fewer features are skipped (black, blurred)
  bool guided = true;
  double guideBandPx = 4;  // at 640 px
  int guideIterations =
      128;  // RANSAC hypotheses of the guide's E (a good-enough E: docs/architecture.md)
  int minPairMatches = 15;  // a pair with fewer matches is not handed on
  // Video, guided: the plain matching of a new keyframe against its candidates other than the
  // last keyframe reads only the guideFeatures strongest features of each side. Those matches
  // serve only to estimate the guide's E (tens of inliers suffice); the pair's matches are the
  // guided ones, searched among all features. A pair whose guide fails on them, or has fewer
  // than 4 minPairMatches inliers, is matched again in full and its guide estimated again, as
  // without the limit. 0: all features.
  int guideFeatures = 0;
  // Photos: no keyframe gate, exhaustive pairs (see above). Set by the pipeline for a folder
  // read as photos.
  bool photos = false;
  // Photos matched against every earlier photo; their features are kept for it (0.5 KiB per
  // feature: 200 photos of 4096 features hold 400 MiB).
  int exhaustivePhotos = 200;
  // Photos: an image that gives fewer SIFT features than photoMinFeatures (at 640 x 480; scaled
  // with the working image's area) is extracted again with the peak threshold halved, up to
  // photoThresholdSteps times, and the first extraction that reaches the count (else the last)
  // is kept: a dark or textureless subject (the Middlebury dino on black: 226 features per
  // image at COLMAP's threshold, about 800 at a quarter of it) then gives its neighbours enough
  // matches, while a textured photo (thousands of features) is extracted once, as before
  // (docs/benchmarks.md, "Photo sets: the dino in one model"). As ORB-SLAM's FAST lowers its
  // threshold where a cell gives too few corners. 0: off.
  int photoMinFeatures = 500;
  int photoThresholdSteps = 2;
  bool verbose = false;  // a line on stderr per photo extracted again (the mapper's --verbose)

  void check() const;  // throws vidmap::Error naming the bad field
};

struct FrontendStats {
  int frames = 0, keyframes = 0, featureless = 0, dropped = 0;
  std::int64_t features = 0, plainMatches = 0, guidedMatches = 0, sourceMatches = 0;
  std::int64_t sourceOnlyMatches = 0;  // source matches the descriptor pairs did not hold
  int siftCalls = 0;                   // frames SIFT ran on
  // Photos extracted again at a lower peak threshold (photoMinFeatures), and the extractions
  // that made.
  int siftLowered = 0, siftLoweredCalls = 0;
  int trackGated = 0;  // frames the gate decided on a source's tracks
  std::array<int, sfm::kGateReasonCount> trackGateReasons{};  // those decisions by sfm::GateReason
  int guides = 0, guideFailures = 0;
  int guideFullRematches = 0;  // pairs matched again in full after a limited guide failed
  // Pipelined runs: keyframes whose guided matching was made again because the mapper's camera
  // had changed since produce, by the front end's thread while the keyframe waited for the
  // mapper (refreshes), or by the mapper's thread in finishKeyframe (rechecks).
  int guideRefreshes = 0, guideRechecks = 0;
  // Descriptor bytes the CUDA matcher uploaded (those kept on the device are not; 0 on the CPU).
  std::int64_t matchUploadedBytes = 0;

  // The counts into a run record: a new stat is one line there.
  void writeTo(io::RunRecord& record) const;
};

// The keypoints of `raw` undistorted with `camera` (pixels of its pinhole part), the other
// keypoint fields as they are. A camera without distortion leaves them exactly (not K K^-1 px,
// which rounds).
void undistortKeypoints(const std::vector<features::Keypoint>& raw, const sfm::Camera& camera,
                        std::vector<features::Keypoint>* out);

// A keyframe the front end matches new keyframes against. It keeps its raw keypoints, and the
// features the matcher reads hold them undistorted (pixels of the pinhole part) with the camera
// whose parameters are `undistortedWith`: the mapper refines focal length and distortion as the
// video goes on, so they are undistorted again with the current camera when it has changed
// (instead of keeping the camera of the moment the keyframe was made).
//
// Sharing (pipeline/frontend_worker.h): `features` and `raw` are shared with the keyframes in
// flight to the mapper. `raw` and `features->descriptors` (and the sizes) are never written
// after the keyframe is made; only the front end's thread writes `features->keypoints`
// (undistortWith), and the mapper's thread reads only the never-written parts.
struct ActiveKeyframe {
  int id = 0;
  double timestamp = 0;
  std::shared_ptr<features::Features> features;
  std::shared_ptr<const std::vector<features::Keypoint>> raw;
  std::vector<double> undistortedWith;

  // Undistorts the keypoints with `camera` unless they already are.
  void undistortWith(const sfm::Camera& camera);
};

// The guided matching of a new keyframe (step 4 of the list at the top) depends on the
// mapper's camera (the guide's E is estimated on undistorted, normalised keypoints, and its
// band lies in undistorted pixels); everything before it does not. What it reads, immutable
// (see ActiveKeyframe), so that it can be made again on the mapper's thread:
struct GuidedInput {
  struct Candidate {
    int id = 0;
    std::shared_ptr<const features::Features> features;  // descriptors (and sizes) only
    std::shared_ptr<const std::vector<features::Keypoint>> raw;
  };
  std::shared_ptr<const features::Features> query;  // descriptors (and sizes) only
  std::shared_ptr<const std::vector<features::Keypoint>> queryRaw;
  std::vector<Candidate> cands;                     // oldest first, the last keyframe last
  std::vector<std::vector<features::Match>> plain;  // per candidate (query a, candidate b)
  // Per candidate: plain holds the matches of the strongest features only (guideFeatures).
  std::vector<char> plainLimited;
  double scale = 1;  // working width / 640
};

// Its result for one camera: the descriptor pairs (guided where a guide was found), with the
// parameters of the camera they were made with.
struct GuidedResult {
  std::vector<double> cameraParams;
  bool dependsOnCamera = false;  // a guide was estimated (else the camera played no part)
  std::vector<sfm::PairMatches> pairs;
  int guides = 0, guideFailures = 0;
  int fullRematches = 0;  // pairs plain-matched again in full (FrontendOptions::guideFeatures)
  std::int64_t guidedMatches = 0;
};

// What a new keyframe hands to the mapper.
struct KeyframeOutput {
  sfm::Keyframe keyframe;               // id, frame, keypoints, colours
  std::vector<sfm::PairMatches> pairs;  // against earlier keyframes (after finishKeyframe)
  // Between Frontend::produce and Frontend::finishKeyframe: the guided matching's input, its
  // result with the camera produce was given, and the pairs of each PairMatchSource.
  GuidedInput guided;
  GuidedResult result;
  std::vector<std::vector<sfm::PairMatches>> sourcePairs;
};

enum class FrameOutcome {
  kKeyframe,  // a new keyframe: KeyframeOutput filled
  kDropped,   // dropped by the gate: its matches to the last keyframe (TrackedFrame) filled
  kSkipped,   // too few features
};

class Frontend {
 public:
  // Stages are timed into `record` ("sift", "match", "guided_match"). The backend of SIFT and
  // matching follows options.sift.backend / options.match.backend; on CUDA they run on the
  // given contexts (their kernels and memory counted there), or on contexts of their own;
  // a guided matching made again by finishKeyframe runs on `recheckContext`.
  Frontend(const FrontendOptions& options, io::RunRecord& record,
           const gpu::Context* siftContext = nullptr, const gpu::Context* matchContext = nullptr,
           const gpu::Context* recheckContext = nullptr);
  ~Frontend();

  void addSource(PairMatchSource* source) { sources_.push_back(source); }
  // Processes the next sampled frame. `camera` is the mapper's current camera (undistortion
  // for the guide). Equal to produce then, for a keyframe, finishKeyframe with the same camera.
  FrameOutcome process(const io::Frame& frame, const sfm::Camera& camera, KeyframeOutput* out,
                       sfm::TrackedFrame* dropped);

  // The two halves of process, for a front end that runs ahead of the mapper
  // (pipeline/frontend_worker.h). produce: the sources, SIFT, the keyframe gate (on raw
  // keypoints: the motion in the image, as the tracks' gate), plain matching, and the guided
  // matching with `camera` (the mapper's camera as last seen). Nothing it decides depends on
  // the camera, so the front end's state after it is the serial run's.
  FrameOutcome produce(const io::Frame& frame, const sfm::Camera& camera, KeyframeOutput* out,
                       sfm::TrackedFrame* dropped);
  // finishKeyframe, with the mapper's camera of the moment (the serial run's): the guided
  // matching made again when that camera differs from produce's (the result is a function of
  // the camera's parameters, so an equal camera gives the serial result), then the sources'
  // pairs merged. Only the stats' guide*, guidedMatches and source* fields are written here;
  // it may run on another thread than produce.
  void finishKeyframe(KeyframeOutput* out, const sfm::Camera& camera);
  // The guided matching of a produced keyframe made again with `camera` (a newer camera of
  // the mapper), on produce's thread: the keypoints of the keyframes it still holds are
  // undistorted in place (its next keyframes need them so), the others copied.
  GuidedResult refreshGuide(const KeyframeOutput& out, const sfm::Camera& camera);
  // The pairs finishKeyframe makes of a produced keyframe whose guided matching holds for the
  // camera it is given (its result as it stands, the sources' pairs merged), without touching
  // the stats: what a front end that waits verifies ahead (pipeline/frontend_worker.h).
  static std::vector<sfm::PairMatches> finishedPairs(const KeyframeOutput& out);
  // The guided matching of a recorded keyframe (a second pass) with `camera`, on copies of its
  // features undistorted with it (what finishRecordedKeyframe makes); for a pipelined second
  // pass's producer, whose result finishKeyframe then checks against the mapper's camera.
  GuidedResult guideRecorded(const KeyframeOutput& out, const sfm::Camera& camera);

  // A second pass over recorded frames (pipeline/frontend_worker.h, FrontendRecording): the
  // stats of the pass that recorded them, less those finishKeyframe counts (it counts them again).
  void resumeStats(const FrontendStats& recorded);
  // finishKeyframe for a recorded keyframe: its guided matching made with `camera` (on copies of
  // the features undistorted with it), whatever camera the recording was made with.
  void finishRecordedKeyframe(KeyframeOutput* out, const sfm::Camera& camera);

  const FrontendStats& stats() const { return stats_; }
  features::Backend siftBackend() const { return sift_.backend(); }

 private:
  using Active = ActiveKeyframe;
  // The guided matching of `out` made with `camera` on copies of its features.
  GuidedResult guidedOnCopies(const KeyframeOutput& out, const sfm::Camera& camera,
                              features::Matcher& matcher);
  // finishKeyframe's end: the result's stats counted, the pairs and the sources' merged.
  void collect(KeyframeOutput* out);
  GuidedResult guidedPairs(const GuidedInput& in, const features::Features& query,
                           const std::vector<const features::Features*>& cands,
                           const sfm::Camera& camera, features::Matcher& matcher, int keyframeId);

  FrontendOptions options_;
  io::RunRecord& record_;
  features::Sift sift_;
  features::Matcher matcher_;
  const gpu::Context* siftContext_;
  // The extractors of the lowered thresholds (photoMinFeatures), made when first needed.
  std::vector<std::unique_ptr<features::Sift>> lowSift_;
  const gpu::Context* recheckContext_;
  std::unique_ptr<features::Matcher> recheckMatcher_;  // made on the first recheck
  sfm::KeyframeGate gate_;
  std::deque<Active> active_;  // the last max(activeKeyframes, historyKeyframes) keyframes
  std::vector<PairMatchSource*> sources_;
  FrontendStats stats_;
};

}  // namespace vidmap::pipeline
