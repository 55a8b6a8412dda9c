// The known warps: forward and inverse agree, the resampled frame moves a point to A u + t
// (checked on a smooth analytic image where bilinear resampling is nearly exact), gain and
// offset apply to the values.
#include "vidmap/synth/warp2d.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vidmap/core/error.h"

namespace vidmap::synth {
namespace {

TEST(Warp2d, InverseUndoesApply) {
  for (const Warp2d& w : {translation(3.7, -2.1), rotationAboutCentre(10, 640, 360),
                          scaleAboutCentre(1.05, 640, 360)}) {
    double x, y, u, v;
    w.apply(123.4, 56.7, &x, &y);
    w.inverse(x, y, &u, &v);
    EXPECT_NEAR(u, 123.4, 1e-9);
    EXPECT_NEAR(v, 56.7, 1e-9);
  }
  double x, y;
  rotationAboutCentre(90, 640, 360).apply(319.5, 179.5, &x, &y);  // the centre is fixed
  EXPECT_NEAR(x, 319.5, 1e-9);
  EXPECT_NEAR(y, 179.5, 1e-9);
  rotationAboutCentre(90, 640, 360).apply(329.5, 179.5, &x, &y);  // +x turns to +y
  EXPECT_NEAR(x, 319.5, 1e-9);
  EXPECT_NEAR(y, 189.5, 1e-9);
  Warp2d singular;
  singular.a11 = singular.a22 = 0;
  EXPECT_THROW(singular.inverse(1, 1, &x, &y), Error);
}

// A plane is reproduced exactly by bilinear interpolation, so the warped frame of a plane
// is the plane evaluated at the inverse warp (away from the clamped border).
TEST(Warp2d, ResamplingOfAPlaneIsExact) {
  GrayImage img(64, 48);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) img(x, y) = static_cast<float>(0.01 * x + 0.005 * y);
  const Warp2d w = rotationAboutCentre(7, 64, 48);
  const GrayImage out = warpImage(img, w);
  for (int y = 10; y < 38; ++y)
    for (int x = 10; x < 54; ++x) {
      double u, v;
      w.inverse(x, y, &u, &v);
      EXPECT_NEAR(out(x, y), 0.01 * u + 0.005 * v, 1e-6);
    }
  Warp2d g = gainOffset(1.1, 0.05);
  const GrayImage bright = warpImage(img, g);
  EXPECT_NEAR(bright(20, 20), 1.1 * img(20, 20) + 0.05, 1e-6);
}

TEST(Warp2d, IntegerTranslationCopiesPixels) {
  GrayImage img(16, 16);
  for (int i = 0; i < 256; ++i) img.data()[i] = static_cast<float>(i % 7) / 7.0f;
  const GrayImage out = warpImage(img, translation(3, -2));
  for (int y = 0; y < 14; ++y)
    for (int x = 3; x < 16; ++x) EXPECT_EQ(out(x, y), img(x - 3, y + 2));
}

}  // namespace
}  // namespace vidmap::synth
