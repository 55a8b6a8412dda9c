#include "vidmap/features/testing/load_image.h"

#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/resize.h"

namespace vidmap::features::testing {

GrayImage loadGray(const std::filesystem::path& path, int scaleDenom) {
  GrayImage g = io::readGray(path);
  if (scaleDenom <= 1) return g;
  return io::resizeImage(g, g.width() / scaleDenom, g.height() / scaleDenom);
}

std::array<double, 2> applyHomography(const std::array<double, 9>& H, double x, double y) {
  const double w = H[6] * x + H[7] * y + H[8];
  return {(H[0] * x + H[1] * y + H[2]) / w, (H[3] * x + H[4] * y + H[5]) / w};
}

GrayImage warpHomography(const GrayImage& in, const std::array<double, 9>& H, int width, int height,
                         float fill) {
  Eigen::Matrix<double, 3, 3, Eigen::RowMajor> h(H.data());
  const Eigen::Matrix<double, 3, 3, Eigen::RowMajor> inv = h.inverse();
  std::array<double, 9> Hi;
  std::copy(inv.data(), inv.data() + 9, Hi.begin());
  GrayImage out(width, height, fill);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto p = applyHomography(Hi, x, y);
      const double fx = std::floor(p[0]), fy = std::floor(p[1]);
      const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
      if (x0 < 0 || y0 < 0 || x0 + 1 >= in.width() || y0 + 1 >= in.height()) continue;
      const double ax = p[0] - fx, ay = p[1] - fy;
      out(x, y) = static_cast<float>((1 - ay) * ((1 - ax) * in(x0, y0) + ax * in(x0 + 1, y0)) +
                                     ay * ((1 - ax) * in(x0, y0 + 1) + ax * in(x0 + 1, y0 + 1)));
    }
  return out;
}

}  // namespace vidmap::features::testing
