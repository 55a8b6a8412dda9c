// Image loading and warping for the features tests and benchmarks.
#pragma once

#include <array>
#include <filesystem>

#include "vidmap/core/image.h"

namespace vidmap::features::testing {

// Reads an image file as gray in [0, 1] (io::readGray), shrunk by an integer factor with io's
// area average (pixel centres kept: x' = (x + 0.5) / f - 0.5). Throws Error.
GrayImage loadGray(const std::filesystem::path& path, int scaleDenom = 1);

// out(x) = bilinear in(H^-1 x) for a row-major homography H mapping `in` to `out`; pixels that
// fall outside `in` get `fill`.
GrayImage warpHomography(const GrayImage& in, const std::array<double, 9>& H, int width, int height,
                         float fill = 0.0f);

// Applies H to (x, y).
std::array<double, 2> applyHomography(const std::array<double, 9>& H, double x, double y);

}  // namespace vidmap::features::testing
