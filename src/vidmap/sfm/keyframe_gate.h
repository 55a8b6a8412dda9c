// The keyframe gate of the video mapper (docs/architecture.md, "Front end"): a sampled frame
// becomes a keyframe when the image has moved enough since the last keyframe (the median
// displacement of the features it shares with it, in working pixels) or when too long has passed;
// otherwise it is dropped (and only localised at the end). The displacements may come from
// descriptor matches against the last keyframe or from tracks alive since it.
#pragma once

#include <vector>

namespace vidmap::sfm {

struct KeyframeGateOptions {
  double minMotionPx = 8;    // median displacement of a keyframe, at 640 px (scaled by width)
  double maxGapSeconds = 1;  // a frame this long after the last keyframe is one
  int minMatches = 20;       // fewer displacements: the motion is unknown, a keyframe

  void check() const;  // throws vidmap::Error naming the bad field
};

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
  // in an image `width` pixels wide.
  KeyframeDecision decide(std::vector<double> displacementsPx, double secondsSinceKeyframe,
                          int width) const;

  const KeyframeGateOptions& options() const { return options_; }

 private:
  KeyframeGateOptions options_;
};

}  // namespace vidmap::sfm
