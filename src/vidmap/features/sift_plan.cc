#include "vidmap/features/sift_plan.h"

#include <cmath>
#include <string>

#include "vidmap/core/error.h"

namespace vidmap::features {

GaussKernel gaussKernel(double sigma) {
  GaussKernel k{};
  const int r = static_cast<int>(std::ceil(4.0 * sigma));
  require(r <= kGaussMaxRadius, "sift: Gaussian of sigma " + std::to_string(sigma) +
                                    " needs radius " + std::to_string(r) + " > " +
                                    std::to_string(kGaussMaxRadius));
  k.radius = r < 1 ? 1 : r;
  double w[kGaussMaxRadius + 1];
  double sum = 0;
  for (int i = 0; i <= k.radius; ++i) {
    w[i] = std::exp(-0.5 * i * i / (sigma * sigma));
    sum += i == 0 ? w[i] : 2 * w[i];
  }
  for (int i = 0; i <= k.radius; ++i) k.w[i] = static_cast<float>(w[i] / sum);
  return k;
}

ScaleSpacePlan planScaleSpace(int width, int height, const SiftOptions& o) {
  ScaleSpacePlan p;
  p.scales = o.scalesPerOctave;
  p.firstOctave = o.firstOctave;
  const int S = p.scales;
  int w = o.firstOctave < 0 ? 2 * width : width;
  int h = o.firstOctave < 0 ? 2 * height : height;
  const int maxOctaves = o.numOctaves > 0 ? o.numOctaves : 64;
  for (int oct = o.firstOctave; static_cast<int>(p.octaves.size()) < maxOctaves; ++oct) {
    if (w < kMinOctaveSide || h < kMinOctaveSide) break;
    p.octaves.push_back({oct, w, h});
    w /= 2;
    h /= 2;
  }
  for (int i = 0; i < S + 3; ++i)
    p.levelSigma.push_back(static_cast<float>(o.sigma * std::pow(2.0, double(i) / S)));
  // The input has blur inputSigma in input pixels, 2 inputSigma after the 2x upsampling.
  const double have = o.inputSigma * (o.firstOctave < 0 ? 2.0 : 1.0);
  if (o.sigma > have + 1e-9) {
    p.baseBlur = true;
    p.base = gaussKernel(std::sqrt(double(o.sigma) * o.sigma - have * have));
  }
  p.step.resize(S + 3);
  for (int i = 1; i < S + 3; ++i) {
    const double a = o.sigma * std::pow(2.0, double(i - 1) / S);
    const double b = o.sigma * std::pow(2.0, double(i) / S);
    p.step[i] = gaussKernel(std::sqrt(b * b - a * a));
  }
  return p;
}

}  // namespace vidmap::features
