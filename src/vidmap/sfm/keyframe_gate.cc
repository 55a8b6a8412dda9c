#include "vidmap/sfm/keyframe_gate.h"

#include <algorithm>
#include <cmath>

#include "vidmap/core/check.h"
#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/ransac.h"

namespace vidmap::sfm {

void KeyframeGateOptions::check() const {
  checkRange("gate.minMotionPx", minMotionPx, 0.0, 10000.0);
  checkRange("gate.trackMinMotionPx", trackMinMotionPx, 0.0, 10000.0);
  checkRange("gate.minParallaxPx", minParallaxPx, 0.0, 10000.0);
  checkRange("gate.minTrackedFraction", minTrackedFraction, 0.0, 1.0);
  checkRange("gate.maxGapSeconds", maxGapSeconds, 0.0, 1e6);
  checkRange("gate.minMatches", minMatches, 1, 1000000);
}

const char* gateReasonName(GateReason r) {
  switch (r) {
    case GateReason::kNone:
      return "none";
    case GateReason::kUnknown:
      return "unknown";
    case GateReason::kMotion:
      return "motion";
    case GateReason::kParallax:
      return "parallax";
    case GateReason::kTracksLost:
      return "tracks_lost";
    case GateReason::kGap:
      return "gap";
  }
  return "none";
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

double medianParallax(const std::vector<Vec2>& atKeyframe, const std::vector<Vec2>& now,
                      double inlierPx, int maxPoints) {
  const int n = static_cast<int>(std::min(atKeyframe.size(), now.size()));
  // An even stride over the tracks bounds the cost (RANSAC scores every pair per hypothesis).
  const int stride = maxPoints > 0 && n > maxPoints ? (n + maxPoints - 1) / maxPoints : 1;
  geometry::Vec2List a, b;
  for (int i = 0; i < n; i += stride) {
    a.push_back(atKeyframe[i]);
    b.push_back(now[i]);
  }
  std::vector<double> r(a.size());
  const geometry::HomographyEstimator est(a, b);
  geometry::RansacOptions ro;
  ro.max_error = inlierPx;
  ro.max_iterations = 500;  // tracks are mostly inliers: the adaptive count stops far below
  const auto h =
      a.size() >= 8 ? geometry::ransac(est, ro) : geometry::RansacResult<geometry::Mat3R>{};
  for (size_t i = 0; i < a.size(); ++i)
    r[i] =
        h.success ? std::sqrt(est.residualSq(h.model, static_cast<int>(i))) : (b[i] - a[i]).norm();
  return median(std::move(r));
}

KeyframeGate::KeyframeGate(const KeyframeGateOptions& options) : options_(options) {
  options_.check();
}

KeyframeDecision KeyframeGate::decide(std::vector<double> d, double secondsSinceKeyframe, int width,
                                      GateMotion from) const {
  KeyframeDecision out;
  if (static_cast<int>(d.size()) < options_.minMatches) return out;
  out.medianMotionPx = median(std::move(d));
  out.motionKnown = true;
  const double scale = width / 640.0;
  const double minMotion =
      from == GateMotion::kTracks ? options_.trackMinMotionPx : options_.minMotionPx;
  out.keyframe = true;
  if (out.medianMotionPx >= minMotion * scale)
    out.reason = GateReason::kMotion;
  else if (secondsSinceKeyframe >= options_.maxGapSeconds)
    out.reason = GateReason::kGap;
  else {
    out.keyframe = false;
    out.reason = GateReason::kNone;
  }
  return out;
}

KeyframeDecision KeyframeGate::decideTracks(const GateTracks& t, double secondsSinceKeyframe,
                                            int width) const {
  if (options_.trackGate == TrackGate::kDisplacement) {
    std::vector<double> d(t.now.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = (t.now[i] - t.atKeyframe[i]).norm();
    return decide(std::move(d), secondsSinceKeyframe, width, GateMotion::kTracks);
  }
  KeyframeDecision out;
  const int n = static_cast<int>(t.now.size());
  if (n < options_.minMatches) return out;
  out.motionKnown = true;
  const double scale = width / 640.0;
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) d[i] = (t.now[i] - t.atKeyframe[i]).norm();
  out.medianMotionPx = median(std::move(d));
  out.trackedFraction =
      t.keyframeTracks > 0 ? std::min(1.0, static_cast<double>(n) / t.keyframeTracks) : 1.0;
  // Below a pixel of motion nothing is left to explain: the homography is not fitted.
  out.parallaxPx = out.medianMotionPx < 1.0 * scale
                       ? out.medianMotionPx
                       : medianParallax(t.atKeyframe, t.now, 1.0 * scale);
  out.keyframe = true;
  if (out.parallaxPx >= options_.minParallaxPx * scale)
    out.reason = GateReason::kParallax;
  else if (out.trackedFraction < options_.minTrackedFraction)
    out.reason = GateReason::kTracksLost;
  else if (secondsSinceKeyframe >= options_.maxGapSeconds)
    out.reason = GateReason::kGap;
  else {
    out.keyframe = false;
    out.reason = GateReason::kNone;
  }
  return out;
}

}  // namespace vidmap::sfm
