#include "vidmap/sfm/keyframe_gate.h"

#include <algorithm>

#include "vidmap/core/check.h"

namespace vidmap::sfm {

void KeyframeGateOptions::check() const {
  checkRange("gate.minMotionPx", minMotionPx, 0.0, 10000.0);
  checkRange("gate.trackMinMotionPx", trackMinMotionPx, 0.0, 10000.0);
  checkRange("gate.maxGapSeconds", maxGapSeconds, 0.0, 1e6);
  checkRange("gate.minMatches", minMatches, 1, 1000000);
}

KeyframeGate::KeyframeGate(const KeyframeGateOptions& options) : options_(options) {
  options_.check();
}

KeyframeDecision KeyframeGate::decide(std::vector<double> d, double secondsSinceKeyframe, int width,
                                      GateMotion from) const {
  KeyframeDecision out;
  if (static_cast<int>(d.size()) < options_.minMatches) return out;
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  out.motionKnown = true;
  out.medianMotionPx = d[d.size() / 2];
  const double scale = width / 640.0;
  const double minMotion =
      from == GateMotion::kTracks ? options_.trackMinMotionPx : options_.minMotionPx;
  out.keyframe =
      !(out.medianMotionPx < minMotion * scale && secondsSinceKeyframe < options_.maxGapSeconds);
  return out;
}

}  // namespace vidmap::sfm
