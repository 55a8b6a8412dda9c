// 2D scenes with known structure for the KLT tracker (docs/architecture.md, KLT):
// the textured scene (random Gaussians plus a smooth checker of period 11 px, so that
// lambda_min is large everywhere), a period-8 texture, a checkerboard for selection, and the
// failure scene. All are deterministic by seed (a splitmix64 generator, the
// same on every platform) and gray in [0, 1].
#pragma once

#include <cstdint>
#include <vector>

#include "vidmap/core/image.h"

namespace vidmap::synth {

// splitmix64: a small generator with the same sequence everywhere (std:: distributions are
// not portable across standard libraries).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double uniform();                      // [0, 1)
  double uniform(double lo, double hi);  // [lo, hi)

 private:
  std::uint64_t state_;
};

struct TexturedSceneOptions {
  int width = 640;
  int height = 360;
  int gaussians = 0;            // 0: 400 below 960 px width, 1200 from 960 px (the design's)
  double checkerPeriodPx = 11;  // the smooth checker sin(2 pi x / p) sin(2 pi y / p)
  double checkerAmplitude = 0.15;
  std::uint64_t seed = 1;
};

// The scene of 7.1: 0.5 + checker + sum of Gaussians (centres uniform, sigma 3-20 px,
// amplitude +-0.5), mapped linearly onto [0.05, 0.95].
GrayImage makeTexturedScene(const TexturedSceneOptions& options = {});

// A texture periodic with `periodPx` in x and in y and no shorter period (sums of sinusoids
// of the fundamental and harmonics with random phases), in [0.05, 0.95].
GrayImage makePeriodicTexture(int width, int height, int periodPx = 8, std::uint64_t seed = 1);

// A sharp checkerboard of squaresX x squaresY squares of squarePx, its top-left corner at
// pixel (originX, originY), dark 0.1 / light 0.9, on a flat 0.5 background. Pixel (x, y)
// belongs to square (floor((x - originX) / squarePx), ...); the vertices between squares are
// at originX + i squarePx - 0.5 (pixel centres are integers).
GrayImage makeCheckerboard(int width, int height, int squarePx, int squaresX, int squaresY,
                           int originX, int originY);

// A flat image.
GrayImage makeFlat(int width, int height, float value = 0.5f);

// The failure scene: frame1 is frame0 translated by (dx, dy) with a second
// texture pasted over one point's target window (occlusion). Each point says what it is.
enum class FailureKind { kTextureless, kLine, kBorder, kOcclusion, kClean };
struct FailurePoint {
  float x = 0, y = 0;  // in frame0
  FailureKind kind = FailureKind::kClean;
};
struct FailureScene {
  GrayImage frame0, frame1;
  double dx = 0, dy = 0;
  std::vector<FailurePoint> points;
};
// 640 x 360 (or the given size, at least 320 x 200): a flat patch, a flat patch crossed by a
// one-pixel horizontal line, three border points, an occluded point and two clean points.
FailureScene makeFailureScene(int width = 640, int height = 360, std::uint64_t seed = 1);

// A grid of nx x ny points with the given margins (the design's test points: 8 x 5 with 100
// px side and 80 px top and bottom margins at 640 x 360).
std::vector<std::pair<float, float>> gridPoints(int width, int height, int nx, int ny,
                                                double marginX, double marginY);

}  // namespace vidmap::synth
