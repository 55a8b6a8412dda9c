#include "vidmap/io/resize.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vidmap::io {
namespace {

TEST(Resize, ScaledSizeKeepsTheAspect) {
  int w, h;
  scaledSize(1920, 1080, 640, &w, &h);
  EXPECT_EQ(w, 640);
  EXPECT_EQ(h, 360);
  scaledSize(584, 388, 640, &w, &h);
  EXPECT_EQ(h, 425);  // 388 * 640 / 584 = 425.2
  scaledSize(584, 388, 0, &w, &h);
  EXPECT_EQ(w, 584);
  EXPECT_EQ(h, 388);
  scaledSize(4000, 2, 16, &w, &h);
  EXPECT_EQ(h, 1);  // never zero
}

TEST(Resize, HalvingAveragesEachTwoByTwoBlock) {
  GrayImage g(8, 6);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 8; ++x) g(x, y) = static_cast<float>((x * 37 + y * 11) % 17) / 16;
  GrayImage r = resizeImage(g, 4, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) {
      float mean =
          (g(2 * x, 2 * y) + g(2 * x + 1, 2 * y) + g(2 * x, 2 * y + 1) + g(2 * x + 1, 2 * y + 1)) /
          4;
      EXPECT_NEAR(r(x, y), mean, 1e-6);
    }
}

TEST(Resize, AreaWeightsCoverFractionalPixels) {
  // 3 -> 2 in x: output 0 covers source [0, 1.5): (v0 + 0.5 v1) / 1.5.
  GrayImage g(3, 1);
  g(0, 0) = 0.3f;
  g(1, 0) = 0.6f;
  g(2, 0) = 0.9f;
  GrayImage r = resizeImage(g, 2, 1);
  EXPECT_NEAR(r(0, 0), (0.3 + 0.5 * 0.6) / 1.5, 1e-6);
  EXPECT_NEAR(r(1, 0), (0.5 * 0.6 + 0.9) / 1.5, 1e-6);
}

TEST(Resize, ConstantStaysConstantAndMeanIsKept) {
  RgbImage c(97, 61, Rgb8{200, 100, 50});
  RgbImage r = resizeImage(c, 40, 25);
  for (long i = 0; i < r.pixels(); ++i) {
    ASSERT_EQ(r.data()[i].r, 200);
    ASSERT_EQ(r.data()[i].g, 100);
    ASSERT_EQ(r.data()[i].b, 50);
  }
  GrayImage g(90, 60);
  double sum = 0;
  for (long i = 0; i < g.pixels(); ++i)
    sum += g.data()[i] = static_cast<float>(std::fmod(i * 0.37, 1.0));
  GrayImage s = resizeImage(g, 36, 24);  // 2.5x: area averaging keeps the mean
  double sumS = 0;
  for (long i = 0; i < s.pixels(); ++i) sumS += s.data()[i];
  EXPECT_NEAR(sumS / s.pixels(), sum / g.pixels(), 1e-5);
}

TEST(Resize, EnlargingIsBilinearWithAlignedCentres) {
  GrayImage g(2, 1);
  g(0, 0) = 0.f;
  g(1, 0) = 1.f;
  GrayImage r =
      resizeImage(g, 4, 1);  // centres at 0.25, 0.75 ... in source: -0.25, 0.25, 0.75, 1.25
  EXPECT_NEAR(r(0, 0), 0.f, 1e-6);
  EXPECT_NEAR(r(1, 0), 0.25f, 1e-6);
  EXPECT_NEAR(r(2, 0), 0.75f, 1e-6);
  EXPECT_NEAR(r(3, 0), 1.f, 1e-6);
}

}  // namespace
}  // namespace vidmap::io
