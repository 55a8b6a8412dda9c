#include "vidmap/features/sift_select.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace vidmap::features {

void dedupeExtrema(std::vector<Extremum>& ext) {
  auto key = [](const Extremum& e) { return std::make_tuple(e.level, e.yi, e.xi); };
  std::stable_sort(ext.begin(), ext.end(),
                   [&](const Extremum& a, const Extremum& b) { return key(a) < key(b); });
  ext.erase(std::unique(ext.begin(), ext.end(),
                        [&](const Extremum& a, const Extremum& b) { return key(a) == key(b); }),
            ext.end());
}

void selectStrongest(std::vector<SiftPoint>& points, int maxFeatures) {
  auto stronger = [](const SiftPoint& a, const SiftPoint& b) { return strongerPoint(a, b); };
  if (maxFeatures > 0 && static_cast<int>(points.size()) > maxFeatures) {
    std::nth_element(points.begin(), points.begin() + maxFeatures, points.end(), stronger);
    points.resize(maxFeatures);
  }
  std::sort(points.begin(), points.end(), stronger);
}

SiftPoint toPoint(const Extremum& e, int octaveIndex, const ScaleSpacePlan& plan, float sigma0) {
  return {e.x, e.y, e.s, e.value, keypointSigma(plan, sigma0, e.s), 0.0f, e.level, octaveIndex};
}

Keypoint toKeypoint(const SiftPoint& p, const ScaleSpacePlan& plan) {
  const int oct = plan.octaves[p.octaveIndex].octave;
  const float f = std::ldexp(1.0f, oct);
  Keypoint k;
  k.x = p.x * f;
  k.y = p.y * f;
  k.scale = p.sigma * f;
  k.orientation = p.angle;
  k.response = std::fabs(p.value);
  k.octave = oct;
  return k;
}

}  // namespace vidmap::features
