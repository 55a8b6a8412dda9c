#include "vidmap/features/testing/blob_scene.h"

#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <random>

#include "vidmap/features/testing/load_image.h"

namespace vidmap::features::testing {

BlobScene randomBlobScene(int width, int height, int count, double minSigma, double maxSigma,
                          unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  BlobScene s;
  for (int i = 0; i < count; ++i) {
    Blob b;
    b.x = u(rng) * width;
    b.y = u(rng) * height;
    const double s1 = minSigma * std::pow(maxSigma / minSigma, u(rng));
    const double s2 = s1 * (0.4 + 0.6 * u(rng));
    const double t = u(rng) * M_PI;
    const double c = std::cos(t), sn = std::sin(t);
    // Sigma^-1 = R diag(1/s1^2, 1/s2^2) R^T
    const double l1 = 1 / (s1 * s1), l2 = 1 / (s2 * s2);
    b.ia = c * c * l1 + sn * sn * l2;
    b.ib = c * sn * (l1 - l2);
    b.ic = sn * sn * l1 + c * c * l2;
    b.amplitude = (0.08 + 0.22 * u(rng)) * (u(rng) < 0.5 ? -1 : 1);
    b.radius = 4 * std::max(s1, s2);
    s.blobs.push_back(b);
  }
  return s;
}

GrayImage renderBlobs(const BlobScene& scene, int width, int height,
                      const std::array<double, 9>& H) {
  Eigen::Matrix<double, 3, 3, Eigen::RowMajor> h(H.data());
  const Eigen::Matrix<double, 3, 3, Eigen::RowMajor> hi = h.inverse();
  std::array<double, 9> Hi;
  std::copy(hi.data(), hi.data() + 9, Hi.begin());
  std::vector<double> acc(static_cast<size_t>(width) * height, scene.background);
  for (const Blob& b : scene.blobs) {
    // Image-space bounding box of the blob's support.
    double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
    for (int k = 0; k < 4; ++k) {
      const auto p = applyHomography(H, b.x + (k & 1 ? b.radius : -b.radius),
                                     b.y + (k & 2 ? b.radius : -b.radius));
      x0 = std::min(x0, p[0]), x1 = std::max(x1, p[0]);
      y0 = std::min(y0, p[1]), y1 = std::max(y1, p[1]);
    }
    const int xa = std::max(0, static_cast<int>(std::floor(x0)));
    const int xb = std::min(width - 1, static_cast<int>(std::ceil(x1)));
    const int ya = std::max(0, static_cast<int>(std::floor(y0)));
    const int yb = std::min(height - 1, static_cast<int>(std::ceil(y1)));
    for (int y = ya; y <= yb; ++y)
      for (int x = xa; x <= xb; ++x) {
        const auto p = applyHomography(Hi, x, y);
        const double dx = p[0] - b.x, dy = p[1] - b.y;
        const double q = b.ia * dx * dx + 2 * b.ib * dx * dy + b.ic * dy * dy;
        if (q < 16) acc[static_cast<size_t>(y) * width + x] += b.amplitude * std::exp(-0.5 * q);
      }
  }
  GrayImage img(width, height);
  for (size_t i = 0; i < acc.size(); ++i) img.data()[i] = static_cast<float>(acc[i]);
  return img;
}

std::array<double, 9> similarity(double degrees, double scale, double cx, double cy, double tx,
                                 double ty) {
  const double t = degrees * M_PI / 180, c = scale * std::cos(t), s = scale * std::sin(t);
  // x' = R s (x - c) + c + t
  return {c, -s, cx - c * cx + s * cy + tx, s, c, cy - s * cx - c * cy + ty, 0, 0, 1};
}

}  // namespace vidmap::features::testing
