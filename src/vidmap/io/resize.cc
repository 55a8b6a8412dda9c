#include "vidmap/io/resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "vidmap/io/image_codecs.h"

namespace vidmap::io {
namespace {

struct Tap {
  int index;
  float weight;
};

// For each output coordinate, the source samples and weights along one axis.
std::vector<std::vector<Tap>> axisTaps(int src, int dst) {
  std::vector<std::vector<Tap>> taps(dst);
  double scale = static_cast<double>(src) / dst;
  for (int o = 0; o < dst; ++o) {
    auto& t = taps[o];
    if (scale > 1.0) {  // area: the source interval [o * scale, (o + 1) * scale)
      double a = o * scale, b = (o + 1) * scale;
      for (int i = static_cast<int>(std::floor(a)); i < std::min<double>(src, std::ceil(b)); ++i) {
        double w = std::min<double>(b, i + 1) - std::max<double>(a, i);
        if (w > 1e-12) t.push_back({i, static_cast<float>(w / scale)});
      }
    } else {  // bilinear at the aligned centre, clamped at the border
      double x = (o + 0.5) * scale - 0.5;
      x = std::clamp(x, 0.0, static_cast<double>(src - 1));
      int i = std::min(static_cast<int>(std::floor(x)), src - 1);
      double f = x - i;
      t.push_back({i, static_cast<float>(1.0 - f)});
      if (f > 0 && i + 1 < src) t.push_back({i + 1, static_cast<float>(f)});
    }
  }
  return taps;
}

// Resamples `channels` interleaved float planes of sw x sh into dw x dh.
std::vector<float> resample(const std::vector<float>& src, int channels, int sw, int sh, int dw,
                            int dh) {
  auto tx = axisTaps(sw, dw), ty = axisTaps(sh, dh);
  std::vector<float> mid(static_cast<size_t>(sh) * dw * channels);
  detail::forRows(sh, static_cast<long>(sw) * sh, [&](std::int64_t y) {
    const float* row = src.data() + y * sw * channels;
    float* out = mid.data() + y * dw * channels;
    for (int x = 0; x < dw; ++x) {
      for (int c = 0; c < channels; ++c) {
        float acc = 0.f;
        for (const Tap& t : tx[x]) acc += t.weight * row[t.index * channels + c];
        out[x * channels + c] = acc;
      }
    }
  });
  std::vector<float> dst(static_cast<size_t>(dh) * dw * channels);
  detail::forRows(dh, static_cast<long>(sw) * sh, [&](std::int64_t y) {
    float* out = dst.data() + y * dw * channels;
    for (int i = 0; i < dw * channels; ++i) {
      float acc = 0.f;
      for (const Tap& t : ty[y])
        acc += t.weight * mid[static_cast<size_t>(t.index) * dw * channels + i];
      out[i] = acc;
    }
  });
  return dst;
}

}  // namespace

void scaledSize(int w, int h, int targetWidth, int* outW, int* outH) {
  if (targetWidth <= 0 || w <= 0 || h <= 0) {
    *outW = w;
    *outH = h;
    return;
  }
  *outW = targetWidth;
  *outH = std::max(1, static_cast<int>(std::lround(static_cast<double>(h) * targetWidth / w)));
}

GrayImage resizeImage(const GrayImage& src, int width, int height) {
  require(width > 0 && height > 0 && !src.empty(), "resizeImage: empty image or size");
  if (width == src.width() && height == src.height()) return src;
  auto out = resample(src.vec(), 1, src.width(), src.height(), width, height);
  GrayImage dst(width, height);
  for (size_t i = 0; i < out.size(); ++i) dst.data()[i] = std::clamp(out[i], 0.f, 1.f);
  return dst;
}

RgbImage resizeImage(const RgbImage& src, int width, int height) {
  require(width > 0 && height > 0 && !src.empty(), "resizeImage: empty image or size");
  if (width == src.width() && height == src.height()) return src;
  std::vector<float> planes(static_cast<size_t>(src.pixels()) * 3);
  for (long i = 0; i < src.pixels(); ++i) {
    planes[3 * i] = src.data()[i].r;
    planes[3 * i + 1] = src.data()[i].g;
    planes[3 * i + 2] = src.data()[i].b;
  }
  auto out = resample(planes, 3, src.width(), src.height(), width, height);
  RgbImage dst(width, height);
  auto to8 = [](float v) {
    return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
  };
  for (long i = 0; i < dst.pixels(); ++i) {
    dst.data()[i] = {to8(out[3 * i]), to8(out[3 * i + 1]), to8(out[3 * i + 2])};
  }
  return dst;
}

}  // namespace vidmap::io
