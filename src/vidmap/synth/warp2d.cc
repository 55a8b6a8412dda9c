#include "vidmap/synth/warp2d.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "vidmap/core/error.h"

namespace vidmap::synth {

void Warp2d::inverse(double x, double y, double* xo, double* yo) const {
  const double det = a11 * a22 - a12 * a21;
  require(det != 0.0 && std::isfinite(det), "synth: the warp is not invertible");
  const double u = x - tx, v = y - ty;
  *xo = (a22 * u - a12 * v) / det;
  *yo = (-a21 * u + a11 * v) / det;
}

Warp2d translation(double dx, double dy) {
  Warp2d w;
  w.tx = dx;
  w.ty = dy;
  return w;
}

static Warp2d linearAboutCentre(double a11, double a12, double a21, double a22, int width,
                                int height) {
  const double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
  Warp2d w;
  w.a11 = a11;
  w.a12 = a12;
  w.a21 = a21;
  w.a22 = a22;
  w.tx = cx - (a11 * cx + a12 * cy);
  w.ty = cy - (a21 * cx + a22 * cy);
  return w;
}

Warp2d rotationAboutCentre(double degrees, int width, int height) {
  const double r = degrees * std::numbers::pi / 180.0;
  const double c = std::cos(r), s = std::sin(r);
  return linearAboutCentre(c, -s, s, c, width, height);
}

Warp2d scaleAboutCentre(double scale, int width, int height) {
  return linearAboutCentre(scale, 0, 0, scale, width, height);
}

Warp2d gainOffset(double gain, double offset) {
  Warp2d w;
  w.gain = gain;
  w.offset = offset;
  return w;
}

double bilinearDouble(const GrayImage& img, double x, double y) {
  const int w = img.width(), h = img.height();
  const double x0 = std::floor(x), y0 = std::floor(y);
  const double fx = x - x0, fy = y - y0;
  auto at = [&](double xx, double yy) {
    const int xi = static_cast<int>(std::clamp(xx, 0.0, static_cast<double>(w - 1)));
    const int yi = static_cast<int>(std::clamp(yy, 0.0, static_cast<double>(h - 1)));
    return static_cast<double>(img(xi, yi));
  };
  return (1 - fx) * (1 - fy) * at(x0, y0) + fx * (1 - fy) * at(x0 + 1, y0) +
         (1 - fx) * fy * at(x0, y0 + 1) + fx * fy * at(x0 + 1, y0 + 1);
}

GrayImage warpImage(const GrayImage& src, const Warp2d& warp) {
  require(!src.empty(), "synth: cannot warp an empty image");
  GrayImage dst(src.width(), src.height());
  for (int y = 0; y < src.height(); ++y)
    for (int x = 0; x < src.width(); ++x) {
      double sx, sy;
      warp.inverse(x, y, &sx, &sy);
      dst(x, y) = static_cast<float>(warp.gain * bilinearDouble(src, sx, sy) + warp.offset);
    }
  return dst;
}

}  // namespace vidmap::synth
