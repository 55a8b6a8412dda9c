// Colour to gray: Rec. 601 luma, Y = 0.299 R + 0.587 G + 0.114 B, on samples in [0, 1]. The one
// definition of the project's gray: image files and video frames (io), SIFT's colour input
// (features) and the KLT tracker's RGB frames (klt) use it, on the host and on the device.
#pragma once

#include <cstdint>

#include "vidmap/core/hd.h"

namespace vidmap::io {

// An 8-bit sample in [0, 1]: v / 255, one correctly rounded division (host and device; the
// device's `/` on floats is IEEE division unless built with -prec-div=false, which we never use).
VIDMAP_HD inline float unitFromByte(std::uint8_t v) { return static_cast<float>(v) / 255.0f; }

// Written as R + 0.587 (G - R) + 0.114 (B - R), the same value since the weights sum to 1,
// so that a gray pixel (R = G = B) maps to exactly R, without a branch. Each product and sum is
// rounded on its own: the host is built with -ffp-contract=off, and the device spells the
// steps out (__fmul_rn and __fadd_rn are never contracted into an FMA), so a luma computed by a
// kernel equals the host's bit for bit in the default (FMA) CUDA build too.
VIDMAP_HD inline float lumaRec601(float r, float g, float b) {
#if defined(__CUDA_ARCH__)
  float y = __fadd_rn(__fadd_rn(r, __fmul_rn(0.587f, g - r)), __fmul_rn(0.114f, b - r));
#else
  float y = r + 0.587f * (g - r) + 0.114f * (b - r);
#endif
  y = y < 0.f ? 0.f : y;  // float rounding near the ends of [0, 1]
  return y > 1.f ? 1.f : y;
}

// The luma of an 8-bit RGB pixel, in [0, 1]: of its samples v / 255. What io's frame sources
// make of RGB8 frames (io::Frame::gray), pixel for pixel.
VIDMAP_HD inline float lumaRec601(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  return lumaRec601(unitFromByte(r), unitFromByte(g), unitFromByte(b));
}

}  // namespace vidmap::io
