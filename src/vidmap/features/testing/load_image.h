// Image loading and warping for the features tests and benchmarks (not part of the library:
// io:: owns image input; these helpers keep the tests independent of it).
#pragma once

#include <array>
#include <filesystem>

#include "vidmap/core/image.h"

namespace vidmap::features::testing {

// Reads a PNG or JPEG as gray in [0, 1] (Rec. 601 luma of 8-bit RGB). A JPEG can be decoded at
// 1/2, 1/4 or 1/8 size (libjpeg's DCT scaling, denominator 1, 2, 4 or 8). Throws Error.
GrayImage loadGray(const std::filesystem::path& path, int jpegScaleDenom = 1);

// Halves an image by 2x2 box averaging (pixel x of the result covers 2x, 2x + 1).
GrayImage halve(const GrayImage& in);

// out(x) = bilinear in(H^-1 x) for a row-major homography H mapping `in` to `out`; pixels that
// fall outside `in` get `fill`.
GrayImage warpHomography(const GrayImage& in, const std::array<double, 9>& H, int width, int height,
                         float fill = 0.0f);

// Applies H to (x, y).
std::array<double, 2> applyHomography(const std::array<double, 9>& H, double x, double y);

}  // namespace vidmap::features::testing
