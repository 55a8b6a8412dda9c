// Known 2D warps of a gray image, for testing trackers against exact truth. The second frame
// is J(x) = gain * I_bilinear(A^-1 (x - t)) + offset, resampled in double from the analytic
// inverse warp (I_bilinear clamps at the border), so a point u of the first frame moves to
// exactly A u + t.
#pragma once

#include "vidmap/core/image.h"

namespace vidmap::synth {

// x' = A x + t with A = [a11 a12; a21 a22], then J = gain * I + offset.
struct Warp2d {
  double a11 = 1, a12 = 0, a21 = 0, a22 = 1;
  double tx = 0, ty = 0;
  double gain = 1, offset = 0;

  void apply(double x, double y, double* xo, double* yo) const {
    *xo = a11 * x + a12 * y + tx;
    *yo = a21 * x + a22 * y + ty;
  }
  void inverse(double x, double y, double* xo, double* yo) const;
};

Warp2d translation(double dx, double dy);
// A rotation by `degrees` (counter-clockwise in image coordinates, y down) about the centre
// ((width - 1) / 2, (height - 1) / 2) of a width x height image.
Warp2d rotationAboutCentre(double degrees, int width, int height);
Warp2d scaleAboutCentre(double scale, int width, int height);
Warp2d gainOffset(double gain, double offset);

// The bilinear sample of img at (x, y) in double, coordinates clamped to the image.
double bilinearDouble(const GrayImage& img, double x, double y);

// The second frame of the warp (same size as src).
GrayImage warpImage(const GrayImage& src, const Warp2d& warp);

}  // namespace vidmap::synth
