// Contrast-limited adaptive histogram equalisation (K. Zuiderveld, "Contrast Limited Adaptive
// Histogram Equalization", Graphics Gems IV, 1994), as OpenCV's createCLAHE applies it: a
// 256-bin histogram per tile, clipped at clipLimit times the mean bin count with the excess
// spread evenly, the tile's CDF as a lookup table, and bilinear interpolation between the
// lookup tables of the four nearest tile centres.
#pragma once

#include "vidmap/core/image.h"

namespace vidmap::features {

// Equalises a gray image in [0, 1] (values outside are clamped) on tiles x tiles tiles.
GrayImage clahe(ImageView<const float> gray, float clipLimit, int tiles);

}  // namespace vidmap::features
