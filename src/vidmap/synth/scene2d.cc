#include "vidmap/synth/scene2d.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "vidmap/core/error.h"
#include "vidmap/synth/warp2d.h"

namespace vidmap::synth {

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

namespace {

void requireSize(int width, int height) {
  require(width > 0 && height > 0 && width <= 16384 && height <= 16384,
          "synth: image size " + std::to_string(width) + " x " + std::to_string(height) +
              " is out of range (1 to 16384 px a side)");
}

// Maps the values of v linearly onto [lo, hi].
GrayImage normalise(const std::vector<double>& v, int width, int height, double lo, double hi) {
  const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  const double range = *mx - *mn > 0 ? *mx - *mn : 1.0;
  GrayImage img(width, height);
  for (std::size_t i = 0; i < v.size(); ++i)
    img.data()[i] = static_cast<float>(lo + (hi - lo) * (v[i] - *mn) / range);
  return img;
}

}  // namespace

GrayImage makeTexturedScene(const TexturedSceneOptions& o) {
  requireSize(o.width, o.height);
  const int w = o.width, h = o.height;
  const int count = o.gaussians > 0 ? o.gaussians : (w < 960 ? 400 : 1200);
  const double k = 2 * std::numbers::pi / o.checkerPeriodPx;
  std::vector<double> v(static_cast<std::size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      v[static_cast<std::size_t>(y) * w + x] =
          0.5 + o.checkerAmplitude * std::sin(k * x) * std::sin(k * y);
  Rng rng(o.seed);
  for (int g = 0; g < count; ++g) {
    const double cx = rng.uniform(0, w), cy = rng.uniform(0, h);
    const double sigma = rng.uniform(3, 20), amp = rng.uniform(-0.5, 0.5);
    const double r = 4 * sigma, inv = 1 / (2 * sigma * sigma);
    const int x0 = std::max(0, static_cast<int>(cx - r)),
              x1 = std::min(w - 1, static_cast<int>(cx + r));
    const int y0 = std::max(0, static_cast<int>(cy - r)),
              y1 = std::min(h - 1, static_cast<int>(cy + r));
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        const double dx = x - cx, dy = y - cy;
        v[static_cast<std::size_t>(y) * w + x] += amp * std::exp(-(dx * dx + dy * dy) * inv);
      }
  }
  return normalise(v, w, h, 0.05, 0.95);
}

GrayImage makePeriodicTexture(int width, int height, int periodPx, std::uint64_t seed) {
  requireSize(width, height);
  require(periodPx >= 2, "synth: the texture period must be at least 2 px");
  Rng rng(seed);
  // Wave vectors (a, b) in cycles per period: the fundamentals in x and y, a diagonal and a
  // harmonic, so that the only periods are multiples of periodPx in x and in y.
  const int waves[5][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -2}, {2, 1}};
  const double amps[5] = {0.22, 0.22, 0.14, 0.10, 0.08};
  double phase[5];
  for (double& p : phase) p = rng.uniform(0, 2 * std::numbers::pi);
  const double k = 2 * std::numbers::pi / periodPx;
  std::vector<double> v(static_cast<std::size_t>(width) * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double s = 0.5;
      for (int i = 0; i < 5; ++i)
        s += amps[i] * std::sin(k * (waves[i][0] * x + waves[i][1] * y) + phase[i]);
      v[static_cast<std::size_t>(y) * width + x] = s;
    }
  return normalise(v, width, height, 0.05, 0.95);
}

GrayImage makeCheckerboard(int width, int height, int squarePx, int squaresX, int squaresY,
                           int originX, int originY) {
  requireSize(width, height);
  require(squarePx > 0 && squaresX > 0 && squaresY > 0, "synth: empty checkerboard");
  GrayImage img(width, height, 0.5f);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int sx = x - originX, sy = y - originY;
      if (sx < 0 || sy < 0 || sx >= squarePx * squaresX || sy >= squarePx * squaresY) continue;
      img(x, y) = ((sx / squarePx + sy / squarePx) % 2) ? 0.9f : 0.1f;
    }
  return img;
}

GrayImage makeFlat(int width, int height, float value) {
  requireSize(width, height);
  return GrayImage(width, height, value);
}

FailureScene makeFailureScene(int width, int height, std::uint64_t seed) {
  require(width >= 320 && height >= 200, "synth: the failure scene needs at least 320 x 200 px");
  FailureScene s;
  s.dx = 2.5;
  s.dy = 1.5;
  TexturedSceneOptions o;
  o.width = width;
  o.height = height;
  o.seed = seed;
  GrayImage base = makeTexturedScene(o);
  // A flat patch (40 x 40) and a flat patch crossed by a one-pixel line, in the left part.
  const int px = width / 8, py = height / 4;
  for (int y = py - 20; y < py + 20; ++y)
    for (int x = px - 20; x < px + 20; ++x) base(x, y) = 0.5f;
  const int lx = width / 8, ly = 3 * height / 4;
  for (int y = ly - 20; y < ly + 20; ++y)
    for (int x = lx - 40; x < lx + 40; ++x) base(x, y) = (y == ly) ? 0.9f : 0.4f;
  s.frame0 = base;
  s.frame1 = warpImage(base, translation(s.dx, s.dy));
  // The occluder: a 44 x 44 patch of another texture over the target of the point (ox, oy).
  const int ox = width / 2, oy = height / 2;
  o.seed = seed + 1000;
  o.checkerPeriodPx = 5;
  const GrayImage other = makeTexturedScene(o);
  const int tx = static_cast<int>(std::lround(ox + s.dx)),
            ty = static_cast<int>(std::lround(oy + s.dy));
  for (int y = ty - 22; y < ty + 22; ++y)
    for (int x = tx - 22; x < tx + 22; ++x) s.frame1(x, y) = other(x, y);
  s.points = {
      {static_cast<float>(px), static_cast<float>(py), FailureKind::kTextureless},
      {static_cast<float>(lx - 10), static_cast<float>(ly), FailureKind::kLine},
      {static_cast<float>(lx + 10), static_cast<float>(ly), FailureKind::kLine},
      {3.0f, height / 2.0f, FailureKind::kBorder},
      {width - 4.0f, height / 3.0f, FailureKind::kBorder},
      {width * 0.75f, 2.0f, FailureKind::kBorder},
      {static_cast<float>(ox), static_cast<float>(oy), FailureKind::kOcclusion},
      {width * 0.75f, height * 0.5f, FailureKind::kClean},
      {width * 0.375f, height * 0.75f, FailureKind::kClean},
  };
  return s;
}

std::vector<std::pair<float, float>> gridPoints(int width, int height, int nx, int ny,
                                                double marginX, double marginY) {
  std::vector<std::pair<float, float>> p;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const double x = nx > 1 ? marginX + i * (width - 1 - 2 * marginX) / (nx - 1) : width / 2.0;
      const double y = ny > 1 ? marginY + j * (height - 1 - 2 * marginY) / (ny - 1) : height / 2.0;
      p.emplace_back(static_cast<float>(x), static_cast<float>(y));
    }
  return p;
}

}  // namespace vidmap::synth
