// The per-frame front end of the video pipeline (docs/architecture.md, Front end):
//
//   1. SIFT features of the sampled frame;
//   2. plain matching (ratio 0.8, mutual) against the last keyframe;
//   0. with a PairMatchSource that tracks (pipeline/klt_source.h), the gate first decides on
//      the motion of its tracks when it has enough (docs/architecture.md, "Pair sources"): a
//      dropped frame then costs no SIFT nor matching;
//   3. the keyframe gate (sfm/keyframe_gate.h), when step 0 did not decide: drop the frame when the
//   median motion of its
//      matches against the last keyframe is below gate.minMotionPx (at 640 px, scaled by the
//      working width) and the gap is below gate.maxGapSeconds; its features and matches are
//      discarded;
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
  // Photos: no keyframe gate, exhaustive pairs (see above). Set by the pipeline for a folder
  // read as photos.
  bool photos = false;
  // Photos matched against every earlier photo; their features are kept for it (0.5 KiB per
  // feature: 200 photos of 4096 features hold 400 MiB).
  int exhaustivePhotos = 200;

  void check() const;  // throws vidmap::Error naming the bad field
};

struct FrontendStats {
  int frames = 0, keyframes = 0, featureless = 0, dropped = 0;
  std::int64_t features = 0, plainMatches = 0, guidedMatches = 0, sourceMatches = 0;
  std::int64_t sourceOnlyMatches = 0;  // source matches the descriptor pairs did not hold
  int siftCalls = 0;                   // frames SIFT ran on
  int trackGated = 0;                  // frames the gate decided on a source's tracks
  int guides = 0, guideFailures = 0;

  // The counts into a run record: a new stat is one line there.
  void writeTo(io::RunRecord& record) const;
};

// What a new keyframe hands to the mapper.
struct KeyframeOutput {
  sfm::Keyframe keyframe;               // id, frame, keypoints, colours
  std::vector<sfm::PairMatches> pairs;  // against earlier keyframes
};

enum class FrameOutcome {
  kKeyframe,  // a new keyframe: KeyframeOutput filled
  kDropped,   // dropped by the gate: its matches to the last keyframe (TrackedFrame) filled
  kSkipped,   // too few features
};

// A keyframe the front end matches new keyframes against. It keeps its raw keypoints, and the
// features the matcher reads hold them undistorted (pixels of the pinhole part) with the camera
// whose parameters are `undistortedWith`: the mapper refines focal length and distortion as the
// video goes on, so they are undistorted again with the current camera when it has changed
// (instead of keeping the camera of the moment the keyframe was made).
struct ActiveKeyframe {
  int id = 0;
  double timestamp = 0;
  features::Features features;
  std::vector<sfm::Vec2> raw;
  std::vector<double> undistortedWith;

  // Undistorts the keypoints with `camera` unless they already are. A camera without
  // distortion leaves them as they are (not K K^-1 px, which rounds).
  void undistortWith(const sfm::Camera& camera);
};

class Frontend {
 public:
  // Stages are timed into `record` ("sift", "match", "guided_match"). The backend of SIFT and
  // matching follows options.sift.backend / options.match.backend; on CUDA they run on the
  // given contexts (their kernels and memory counted there), or on contexts of their own.
  Frontend(const FrontendOptions& options, io::RunRecord& record,
           const gpu::Context* siftContext = nullptr, const gpu::Context* matchContext = nullptr);
  ~Frontend();

  void addSource(PairMatchSource* source) { sources_.push_back(source); }
  // Processes the next sampled frame. `camera` is the mapper's current camera (undistortion
  // for the guide).
  FrameOutcome process(const io::Frame& frame, const sfm::Camera& camera, KeyframeOutput* out,
                       sfm::TrackedFrame* dropped);

  const FrontendStats& stats() const { return stats_; }
  features::Backend siftBackend() const { return sift_.backend(); }

 private:
  using Active = ActiveKeyframe;

  FrontendOptions options_;
  io::RunRecord& record_;
  features::Sift sift_;
  features::Matcher matcher_;
  sfm::KeyframeGate gate_;
  std::deque<Active> active_;  // the last max(activeKeyframes, historyKeyframes) keyframes
  std::vector<PairMatchSource*> sources_;
  FrontendStats stats_;
};

}  // namespace vidmap::pipeline
