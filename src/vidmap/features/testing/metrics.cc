#include "vidmap/features/testing/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "vidmap/features/match_kernels.h"
#include "vidmap/features/testing/load_image.h"

namespace vidmap::features::testing {
namespace {

std::array<double, 9> inverse(const std::array<double, 9>& m) {
  const double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5], g = m[6], h = m[7],
               i = m[8];
  const double A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
  const double det = a * A + b * B + c * C;
  return {A / det, -(b * i - c * h) / det, (b * f - c * e) / det,
          B / det, (a * i - c * g) / det,  -(a * f - c * d) / det,
          C / det, -(a * h - b * g) / det, (a * e - b * d) / det};
}

double localScale(const std::array<double, 9>& H, double x, double y) {
  const double e = 0.5;
  const auto px = applyHomography(H, x + e, y), mx = applyHomography(H, x - e, y);
  const auto py = applyHomography(H, x, y + e), my = applyHomography(H, x, y - e);
  const double j00 = px[0] - mx[0], j10 = px[1] - mx[1], j01 = py[0] - my[0], j11 = py[1] - my[1];
  return std::sqrt(std::abs(j00 * j11 - j01 * j10));
}

// Unique positions (a keypoint with two orientations is one detection).
std::vector<Keypoint> uniquePoints(const Features& f) {
  std::map<std::pair<float, float>, Keypoint> m;
  for (const auto& k : f.keypoints) m.emplace(std::make_pair(k.x, k.y), k);
  std::vector<Keypoint> out;
  for (auto& [p, k] : m) out.push_back(k);
  return out;
}

bool inside(const std::array<double, 2>& p, int w, int h, double margin) {
  return p[0] >= margin && p[1] >= margin && p[0] <= w - 1 - margin && p[1] <= h - 1 - margin;
}

}  // namespace

Repeatability repeatability(const Features& a, const Features& b, const std::array<double, 9>& H,
                            double maxPx, double maxScaleRatio) {
  Repeatability r;
  const auto ka = uniquePoints(a), kb = uniquePoints(b);
  const auto Hi = inverse(H);
  for (const auto& k : kb)
    if (inside(applyHomography(Hi, k.x, k.y), a.width, a.height, 8)) ++r.commonB;
  std::vector<double> errors;
  for (const auto& k : ka) {
    const auto p = applyHomography(H, k.x, k.y);
    if (!inside(p, b.width, b.height, 8)) continue;
    ++r.commonA;
    const double expected = localScale(H, k.x, k.y) * k.scale;
    double best = maxPx;
    bool found = false;
    for (const auto& q : kb) {
      const double d = std::hypot(q.x - p[0], q.y - p[1]);
      const double ratio = q.scale / expected;
      if (d < best && ratio >= 1 / maxScaleRatio && ratio <= maxScaleRatio) {
        best = d;
        found = true;
      }
    }
    if (found) {
      ++r.repeated;
      errors.push_back(best);
    }
  }
  const int denom = std::min(r.commonA, r.commonB);
  r.rate = denom > 0 ? std::min(1.0, static_cast<double>(r.repeated) / denom) : 0;
  r.medianErrorPx = median(errors);
  return r;
}

double matchPrecision(const std::vector<Match>& m, const Features& a, const Features& b,
                      const std::array<double, 9>& H, double maxPx) {
  if (m.empty()) return 1;
  int good = 0;
  for (const auto& x : m) {
    const auto& ka = a.keypoints[x.a];
    const auto& kb = b.keypoints[x.b];
    const auto p = applyHomography(H, ka.x, ka.y);
    good += std::hypot(p[0] - kb.x, p[1] - kb.y) < maxPx;
  }
  return static_cast<double>(good) / m.size();
}

std::vector<double> sampsonDistances(const std::vector<Match>& m, const Features& a,
                                     const Features& b, const std::array<double, 9>& F) {
  std::vector<double> d;
  d.reserve(m.size());
  for (const auto& x : m) {
    const auto& ka = a.keypoints[x.a];
    const auto& kb = b.keypoints[x.b];
    d.push_back(epipolarDistance(F.data(), ka.x, ka.y, kb.x, kb.y, true));
  }
  return d;
}

double fractionBelow(const std::vector<double>& v, double t) {
  if (v.empty()) return 0;
  return static_cast<double>(std::count_if(v.begin(), v.end(), [&](double x) { return x < t; })) /
         v.size();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace vidmap::features::testing
