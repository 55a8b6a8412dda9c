// The pyramid layout (docs/architecture.md, KLT: the tracker): all levels of one frame slot in one
// flat float buffer, level 0 first. Level l + 1 has ceil(w / 2) x ceil(h / 2) pixels of level l.
// The gradient buffer of a slot has the same layout with two floats (gx, gy) per pixel, so the
// gradient of pixel p of level l is at 2 * (offset[l] + p). Usable on host and device.
#pragma once

#include <cstdint>

#include "vidmap/core/hd.h"
#include "vidmap/klt/options.h"

namespace vidmap::klt {

struct Layout {
  int levels = 0;
  int width[kMaxLevels] = {};
  int height[kMaxLevels] = {};
  std::int64_t offset[kMaxLevels] = {};  // first pixel of each level, in pixels
  std::int64_t total = 0;                // pixels of all levels

  VIDMAP_HD std::int64_t pixels(int level) const {
    return static_cast<std::int64_t>(width[level]) * height[level];
  }
};

// The layout of a width x height frame with `levels` levels (1 <= levels <= kMaxLevels).
VIDMAP_HD inline Layout makeLayout(int width, int height, int levels) {
  Layout l;
  l.levels = levels;
  std::int64_t off = 0;
  int w = width, h = height;
  for (int i = 0; i < levels; ++i) {
    l.width[i] = w;
    l.height[i] = h;
    l.offset[i] = off;
    off += static_cast<std::int64_t>(w) * h;
    w = (w + 1) / 2;
    h = (h + 1) / 2;
  }
  l.total = off;
  return l;
}

// One level of a slot: the gray image and its interleaved gradient.
struct LevelView {
  const float* gray = nullptr;  // width * height
  const float* grad = nullptr;  // 2 * width * height: gx, gy of each pixel
  int width = 0;
  int height = 0;
};

// The pyramid of one slot as raw pointers to its two buffers.
struct PyramidView {
  const float* gray = nullptr;  // layout.total floats
  const float* grad = nullptr;  // 2 * layout.total floats
  Layout layout;

  VIDMAP_HD LevelView level(int l) const {
    return {gray + layout.offset[l], grad + 2 * layout.offset[l], layout.width[l],
            layout.height[l]};
  }
};

}  // namespace vidmap::klt
