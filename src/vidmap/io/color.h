// Colour to gray: Rec. 601 luma, Y = 0.299 R + 0.587 G + 0.114 B, on samples in [0, 1].
// The one definition that image files and video frames use (shared by host and device).
#pragma once

#include "vidmap/core/hd.h"

namespace vidmap::io {

// Written as R + 0.587 (G - R) + 0.114 (B - R), the same value since the weights sum to 1,
// so that a gray pixel (R = G = B) maps to exactly R, without a branch.
VIDMAP_HD inline float lumaRec601(float r, float g, float b) {
  float y = r + 0.587f * (g - r) + 0.114f * (b - r);
  y = y < 0.f ? 0.f : y;  // float rounding near the ends of [0, 1]
  return y > 1.f ? 1.f : y;
}

}  // namespace vidmap::io
