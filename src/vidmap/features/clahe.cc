#include "vidmap/features/clahe.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "vidmap/core/parallel.h"

namespace vidmap::features {
namespace {

inline int quantize(float v) {
  const float q = v * 255.0f + 0.5f;
  return q <= 0 ? 0 : (q >= 255.0f ? 255 : static_cast<int>(q));
}

}  // namespace

GrayImage clahe(ImageView<const float> gray, float clipLimit, int tiles) {
  const int w = gray.width, h = gray.height;
  GrayImage out(w, h);
  if (w == 0 || h == 0) return out;
  const int tx = std::min(tiles, w), ty = std::min(tiles, h);
  // Tile k along x covers [k w / tx, (k + 1) w / tx).
  auto x0 = [&](int k) { return static_cast<int>(static_cast<long>(k) * w / tx); };
  auto y0 = [&](int k) { return static_cast<int>(static_cast<long>(k) * h / ty); };
  std::vector<float> lut(static_cast<size_t>(tx) * ty * 256);
  parallelFor(static_cast<std::int64_t>(tx) * ty, [&](std::int64_t t) {
    const int i = static_cast<int>(t % tx), j = static_cast<int>(t / tx);
    double hist[256] = {};
    const int xa = x0(i), xb = x0(i + 1), ya = y0(j), yb = y0(j + 1);
    for (int y = ya; y < yb; ++y)
      for (int x = xa; x < xb; ++x) hist[quantize(gray(x, y))] += 1;
    const double area = static_cast<double>(xb - xa) * (yb - ya);
    const double clip = std::max(1.0, clipLimit * area / 256.0);
    double excess = 0;
    for (double& v : hist)
      if (v > clip) {
        excess += v - clip;
        v = clip;
      }
    const double add = excess / 256.0;
    double cdf = 0;
    float* l = lut.data() + t * 256;
    for (int b = 0; b < 256; ++b) {
      cdf += hist[b] + add;
      l[b] = static_cast<float>(std::min(1.0, cdf / area));
    }
  });
  const float tw = static_cast<float>(w) / tx, th = static_cast<float>(h) / ty;
  parallelFor(h, [&](std::int64_t yy) {
    const int y = static_cast<int>(yy);
    const float fy = (y + 0.5f) / th - 0.5f;
    int j1 = static_cast<int>(std::floor(fy));
    const float ay = fy - j1;
    const int j2 = std::min(j1 + 1, ty - 1);
    j1 = std::max(j1, 0);
    for (int x = 0; x < w; ++x) {
      const float fx = (x + 0.5f) / tw - 0.5f;
      int i1 = static_cast<int>(std::floor(fx));
      const float ax = fx - i1;
      const int i2 = std::min(i1 + 1, tx - 1);
      i1 = std::max(i1, 0);
      const int q = quantize(gray(x, y));
      auto L = [&](int i, int j) { return lut[(static_cast<size_t>(j) * tx + i) * 256 + q]; };
      const float top = (1 - ax) * L(i1, j1) + ax * L(i2, j1);
      const float bottom = (1 - ax) * L(i1, j2) + ax * L(i2, j2);
      out(x, y) = (1 - ay) * top + ay * bottom;
    }
  });
  return out;
}

}  // namespace vidmap::features
