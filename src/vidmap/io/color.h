// Colour to gray: Rec. 601 luma, Y = 0.299 R + 0.587 G + 0.114 B, on samples in [0, 1].
// The one definition that image files and video frames use (shared by host and device).
#pragma once

#include "vidmap/core/hd.h"

namespace vidmap::io {

VIDMAP_HD inline float lumaRec601(float r, float g, float b) {
  if (r == g && g == b) return r;  // the weights sum to 1: gray stays exactly gray
  float y = 0.299f * r + 0.587f * g + 0.114f * b;
  return y < 0.f ? 0.f : (y > 1.f ? 1.f : y);  // white may round to 1 + 1 ulp
}

}  // namespace vidmap::io
