#include "vidmap/sfm/keyframe_gate.h"

#include <algorithm>
#include <cmath>

#include <Eigen/SVD>
#include "vidmap/core/check.h"

namespace vidmap::sfm {

void KeyframeGateOptions::check() const {
  checkRange("gate.minMotionPx", minMotionPx, 0.0, 10000.0);
  checkRange("gate.trackMinMotionPx", trackMinMotionPx, 0.0, 10000.0);
  checkRange("gate.minParallaxPx", minParallaxPx, 0.0, 10000.0);
  checkRange("gate.minTrackedFraction", minTrackedFraction, 0.0, 1.0);
  checkRange("gate.maxTurnPx", maxTurnPx, 0.0, 10000.0);
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
    case GateReason::kTurn:
      return "turn";
  }
  return "none";
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Each track's displacement from where it was at the last keyframe, pixels.
std::vector<double> displacements(const GateTracks& t) {
  std::vector<double> d(t.now.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = (t.now[i] - t.atKeyframe[i]).norm();
  return d;
}

// The residuals (px) of `b` after the rotation about the eye that best maps `a` onto it, for
// a pinhole of focal f and principal point c: bearings, the orthogonal Procrustes fit
// (W. Kabsch 1976) on the pairs within max(3 x median, inlierPx) of the previous fit, three
// times. Returns the median residual.
double rotationResidual(const geometry::Vec2List& a, const geometry::Vec2List& b, double f,
                        const Vec2& c, double inlierPx, std::vector<double>* r) {
  const size_t n = a.size();
  std::vector<Eigen::Vector3d> ra(n), rb(n);
  for (size_t i = 0; i < n; ++i) {
    ra[i] = Eigen::Vector3d((a[i].x() - c.x()) / f, (a[i].y() - c.y()) / f, 1).normalized();
    rb[i] = Eigen::Vector3d((b[i].x() - c.x()) / f, (b[i].y() - c.y()) / f, 1).normalized();
  }
  r->assign(n, 0.0);
  double med = 0;
  for (int it = 0; it < 3; ++it) {
    const double bound = std::max(3 * med, inlierPx);
    Eigen::Matrix3d M = Eigen::Matrix3d::Zero();
    for (size_t i = 0; i < n; ++i)
      if (it == 0 || (*r)[i] <= bound) M += rb[i] * ra[i].transpose();
    const Eigen::JacobiSVD<Eigen::Matrix3d> svd(M, Eigen::ComputeFullU | Eigen::ComputeFullV);
    Eigen::Matrix3d D = Eigen::Matrix3d::Identity();
    D(2, 2) = (svd.matrixU() * svd.matrixV().transpose()).determinant() < 0 ? -1 : 1;
    const Eigen::Matrix3d R = svd.matrixU() * D * svd.matrixV().transpose();
    for (size_t i = 0; i < n; ++i) {
      const Eigen::Vector3d p = R * ra[i];
      if (p.z() <= 1e-6) {
        (*r)[i] = 1e6;  // turned behind the eye: unexplained
        continue;
      }
      (*r)[i] = (Vec2(f * p.x() / p.z() + c.x(), f * p.y() / p.z() + c.y()) - b[i]).norm();
    }
    med = median(*r);
  }
  return med;
}

}  // namespace

double medianParallax(const std::vector<Vec2>& atKeyframe, const std::vector<Vec2>& now, int width,
                      int height, double inlierPx, int maxPoints) {
  const int n = static_cast<int>(std::min(atKeyframe.size(), now.size()));
  // An even stride over the tracks bounds the cost.
  const int stride = maxPoints > 0 && n > maxPoints ? (n + maxPoints - 1) / maxPoints : 1;
  geometry::Vec2List a, b;
  for (int i = 0; i < n; i += stride) {
    a.push_back(atKeyframe[i]);
    b.push_back(now[i]);
  }
  if (a.size() < 3) return 0;
  // The focal length is not known here (the mapper refines it later): the rotation is fitted
  // for each focal length of a log grid from 0.25 to 4 image widths, then golden-section
  // search around the best, and the least median residual is the parallax. A rotation with
  // the right focal length explains a pure rotation exactly; no rotation of any focal length
  // explains the expansion of forward motion or the spread of depths of a translation.
  const Vec2 c(0.5 * (width - 1), 0.5 * (height - 1));
  std::vector<double> r;
  auto cost = [&](double logF) { return rotationResidual(a, b, std::exp(logF), c, inlierPx, &r); };
  const double lo = std::log(0.25 * width), hi = std::log(4.0 * width);
  const int steps = 12;
  int best = 0;
  double bestCost = 1e300;
  for (int k = 0; k <= steps; ++k) {
    const double v = cost(lo + (hi - lo) * k / steps);
    if (v < bestCost) {
      bestCost = v;
      best = k;
    }
  }
  double x0 = lo + (hi - lo) * std::max(0, best - 1) / steps;
  double x1 = lo + (hi - lo) * std::min(steps, best + 1) / steps;
  const double g = 0.5 * (std::sqrt(5.0) - 1);
  double xa = x1 - g * (x1 - x0), xb = x0 + g * (x1 - x0);
  double fa = cost(xa), fb = cost(xb);
  for (int it = 0; it < 16; ++it) {
    if (fa < fb) {
      x1 = xb;
      xb = xa;
      fb = fa;
      xa = x1 - g * (x1 - x0);
      fa = cost(xa);
    } else {
      x0 = xa;
      xa = xb;
      fa = fb;
      xb = x0 + g * (x1 - x0);
      fb = cost(xb);
    }
  }
  return std::min({bestCost, fa, fb});
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
                                            int width, int height) const {
  if (options_.trackGate == TrackGate::kDisplacement)
    return decide(displacements(t), secondsSinceKeyframe, width, GateMotion::kTracks);
  KeyframeDecision out;
  const int n = static_cast<int>(t.now.size());
  if (n < options_.minMatches) return out;
  out.motionKnown = true;
  const double scale = width / 640.0;
  out.medianMotionPx = median(displacements(t));
  out.trackedFraction =
      t.keyframeTracks > 0 ? std::min(1.0, static_cast<double>(n) / t.keyframeTracks) : 1.0;
  // Below a pixel of motion nothing is left to explain: the rotation is not fitted.
  out.parallaxPx = out.medianMotionPx < 1.0 * scale
                       ? out.medianMotionPx
                       : medianParallax(t.atKeyframe, t.now, width, height, 1.0 * scale);
  out.keyframe = true;
  if (out.parallaxPx >= options_.minParallaxPx * scale)
    out.reason = GateReason::kParallax;
  else if (options_.maxTurnPx > 0 && out.medianMotionPx >= options_.maxTurnPx * scale)
    out.reason = GateReason::kTurn;
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
