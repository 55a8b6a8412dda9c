// The keyframe gate of the video mapper (docs/architecture.md, "Front end"): a sampled frame
// becomes a keyframe when the image has moved enough since the last keyframe (the median
// displacement of the features it shares with it, in working pixels) or when too long has passed;
// otherwise it is dropped (and only localised at the end). The displacements may come from
// descriptor matches against the last keyframe or from tracks alive since it, each with a
// threshold of its own (trackMinMotionPx for tracks: they carry the features from one keyframe
// to the next, so keyframes farther apart stay linked by the joins of pipeline/klt_source.h).
#pragma once

#include <vector>

namespace vidmap::sfm {

struct KeyframeGateOptions {
  double minMotionPx = 8;  // median displacement of a keyframe, at 640 px (scaled by width)
  // The same when the displacements are those of tracks. 24 px halves the CPU time of a
  // rotating video at all frames, but the median displacement is no measure of parallax: on a
  // forward path it keeps a keyframe a second only and the model fails to start, so the
  // default is the descriptors' (docs/benchmarks.md, "KLT tracks that pay").
  double trackMinMotionPx = 8;
  double maxGapSeconds = 1;  // a frame this long after the last keyframe is one
  int minMatches = 20;       // fewer displacements: the motion is unknown, a keyframe

  void check() const;  // throws vidmap::Error naming the bad field
};

// Where the displacements come from.
enum class GateMotion { kMatches, kTracks };

struct KeyframeDecision {
  bool keyframe = true;
  bool motionKnown = false;   // at least minMatches displacements
  double medianMotionPx = 0;  // when known (working pixels)
};

class KeyframeGate {
 public:
  explicit KeyframeGate(const KeyframeGateOptions& options);

  // The decision for a frame `secondsSinceKeyframe` after the last keyframe, whose features
  // moved by `displacementsPx` (working pixels; taken by value: reordered to find the median)
  // in an image `width` pixels wide, measured by `from` (its threshold).
  KeyframeDecision decide(std::vector<double> displacementsPx, double secondsSinceKeyframe,
                          int width, GateMotion from = GateMotion::kMatches) const;

  const KeyframeGateOptions& options() const { return options_; }

 private:
  KeyframeGateOptions options_;
};

}  // namespace vidmap::sfm
