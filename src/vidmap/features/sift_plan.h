// The scale space of one image size: octave sizes and the Gaussian kernels between levels.
// Computed on the host once per image size and used by both backends, so they blur with the
// same float coefficients.
#pragma once

#include <vector>

#include "vidmap/features/sift_kernels.h"
#include "vidmap/features/sift_options.h"

namespace vidmap::features {

struct OctaveSize {
  int octave;  // -1, 0, 1, ...; octave pixel x is input pixel x * 2^octave
  int width;
  int height;
};

struct ScaleSpacePlan {
  int scales = 3;  // S
  int firstOctave = 0;
  std::vector<OctaveSize> octaves;  // empty when the image is too small for one octave
  bool baseBlur = false;            // blur the first octave's input with `base`
  GaussKernel base{};
  std::vector<GaussKernel> step;  // step[i] blurs level i - 1 into level i (i = 1..S+2)
  std::vector<float> levelSigma;  // sigma of level i in octave pixels (i = 0..S+2)

  int levels() const { return scales + 3; }  // Gaussian levels per octave
};

// The smallest octave side that is built: room for the detection border and a 3x3x3 test.
inline constexpr int kMinOctaveSide = 2 * kSiftBorder + 6;

// Samples exp(-x^2 / (2 sigma^2)) for |x| <= ceil(4 sigma) and normalises to sum 1 (double,
// then rounded to float). Throws when the radius exceeds kGaussMaxRadius.
GaussKernel gaussKernel(double sigma);

ScaleSpacePlan planScaleSpace(int width, int height, const SiftOptions& options);

// Sigma of a keypoint at DoG level coordinate s (with sub-level offset), octave pixels.
inline float keypointSigma(const ScaleSpacePlan& plan, float sigma0, float s) {
  return keypointSigmaAt(sigma0, plan.scales, s);
}

}  // namespace vidmap::features
