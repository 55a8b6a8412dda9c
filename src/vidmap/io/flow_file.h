// Middlebury optical flow files (.flo; Baker et al., "A Database and Evaluation Methodology for
// Optical Flow", IJCV 2011): the float32 tag 202021.25 ("PIEH"), int32 width, int32 height,
// then width * height (u, v) float32 pairs, row-major, little-endian. |u| or |v| > 1e9 marks
// an unknown vector.
#pragma once

#include <cmath>
#include <filesystem>

#include "vidmap/core/image.h"

namespace vidmap::io {

struct FlowField {
  Image<float> u, v;  // displacement in pixels: frame0 (x, y) -> frame1 (x + u, y + v)

  int width() const { return u.width(); }
  int height() const { return u.height(); }
  bool known(int x, int y) const {
    return std::fabs(u(x, y)) <= 1e9f && std::fabs(v(x, y)) <= 1e9f;
  }
};

// Throws vidmap::Error naming the file for a missing file, a wrong tag, a bad size or a
// truncated file.
FlowField readFlo(const std::filesystem::path& path);

// Writes atomically; unknown vectors are written as given (use 1e10 for unknown).
void writeFlo(const std::filesystem::path& path, const FlowField& flow);

}  // namespace vidmap::io
