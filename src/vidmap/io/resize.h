// Image resizing for frame sources: an exact area average when shrinking (each output pixel
// averages the source area it covers, with fractional edge weights, like OpenCV's INTER_AREA)
// and bilinear interpolation with pixel centres aligned when enlarging. Separable, per axis.
#pragma once

#include "vidmap/core/image.h"

namespace vidmap::io {

// The size of a w x h frame scaled to targetWidth with the aspect kept (height rounded,
// at least 1). targetWidth 0 keeps the native size.
void scaledSize(int w, int h, int targetWidth, int* outW, int* outH);

GrayImage resizeImage(const GrayImage& src, int width, int height);
RgbImage resizeImage(const RgbImage& src, int width, int height);

}  // namespace vidmap::io
