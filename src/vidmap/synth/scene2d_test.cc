// The 2D scenes: deterministic by seed, in range, textured everywhere (the design needs
// lambda_min large everywhere), the periodic texture has its period and no half period,
// the checkerboard and the failure scene have what they promise.
#include "vidmap/synth/scene2d.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vidmap/core/error.h"

namespace vidmap::synth {
namespace {

TEST(Scene2d, DeterministicAndInRange) {
  const GrayImage a = makeTexturedScene({}), b = makeTexturedScene({});
  EXPECT_EQ(a.vec(), b.vec());
  TexturedSceneOptions o;
  o.seed = 2;
  EXPECT_NE(makeTexturedScene(o).vec(), a.vec());
  float mn = 1, mx = 0;
  for (float v : a.vec()) mn = std::min(mn, v), mx = std::max(mx, v);
  EXPECT_NEAR(mn, 0.05f, 1e-6f);
  EXPECT_NEAR(mx, 0.95f, 1e-6f);
  EXPECT_EQ(a.width(), 640);
  EXPECT_EQ(a.height(), 360);
  TexturedSceneOptions big;
  big.width = 1280;
  big.height = 720;
  EXPECT_EQ(makeTexturedScene(big).width(), 1280);
  EXPECT_THROW(makeTexturedScene({0, 10}), Error);
}

// Textured everywhere: every 15 x 15 window has gradient energy in both directions.
TEST(Scene2d, TexturedEverywhere) {
  const GrayImage a = makeTexturedScene({});
  double worst = 1e30;
  for (int cy = 20; cy < 340; cy += 23)
    for (int cx = 20; cx < 620; cx += 29) {
      double gxx = 0, gyy = 0, gxy = 0;
      for (int y = cy - 7; y <= cy + 7; ++y)
        for (int x = cx - 7; x <= cx + 7; ++x) {
          const double gx = (a(x + 1, y) - a(x - 1, y)) / 2, gy = (a(x, y + 1) - a(x, y - 1)) / 2;
          gxx += gx * gx;
          gyy += gy * gy;
          gxy += gx * gy;
        }
      const double l = ((gxx + gyy) - std::sqrt((gxx - gyy) * (gxx - gyy) + 4 * gxy * gxy)) / 2;
      worst = std::min(worst, l / 225);
    }
  EXPECT_GT(worst, 1e-5);  // 10x the tracker's minEigThreshold
}

TEST(Scene2d, PeriodicTextureHasItsPeriodOnly) {
  const GrayImage p = makePeriodicTexture(128, 96, 8, 5);
  double d8 = 0, d4x = 0, d4y = 0;
  for (int y = 0; y < 80; ++y)
    for (int x = 0; x < 112; ++x) {
      d8 = std::max(d8, double(std::abs(p(x, y) - p(x + 8, y))) + std::abs(p(x, y) - p(x, y + 8)));
      d4x = std::max(d4x, double(std::abs(p(x, y) - p(x + 4, y))));
      d4y = std::max(d4y, double(std::abs(p(x, y) - p(x, y + 4))));
    }
  EXPECT_LT(d8, 1e-5);
  EXPECT_GT(d4x, 0.1);
  EXPECT_GT(d4y, 0.1);
}

TEST(Scene2d, CheckerboardSquares) {
  const GrayImage c = makeCheckerboard(320, 200, 40, 5, 3, 60, 40);
  EXPECT_EQ(c(10, 10), 0.5f);   // background
  EXPECT_EQ(c(60, 40), 0.1f);   // first square dark
  EXPECT_EQ(c(100, 40), 0.9f);  // next square light
  EXPECT_EQ(c(99, 79), 0.1f);
  EXPECT_EQ(c(100, 80), 0.1f);
  EXPECT_EQ(c(259, 159), 0.1f);
  EXPECT_EQ(c(260, 159), 0.5f);
}

TEST(Scene2d, FailureScene) {
  const FailureScene s = makeFailureScene(640, 360, 3);
  int kinds[5] = {};
  for (const auto& p : s.points) ++kinds[static_cast<int>(p.kind)];
  EXPECT_EQ(kinds[0], 1);
  EXPECT_EQ(kinds[1], 2);
  EXPECT_EQ(kinds[2], 3);
  EXPECT_EQ(kinds[3], 1);
  EXPECT_EQ(kinds[4], 2);
  // The textureless point's window is flat, the line point's window varies only in y.
  const auto& t = s.points[0];
  for (int dy = -7; dy <= 7; ++dy)
    for (int dx = -7; dx <= 7; ++dx) EXPECT_EQ(s.frame0(int(t.x) + dx, int(t.y) + dy), 0.5f);
  const auto& l = s.points[1];
  for (int dy = -7; dy <= 7; ++dy)
    for (int dx = -7; dx <= 7; ++dx)
      EXPECT_EQ(s.frame0(int(l.x) + dx, int(l.y) + dy), s.frame0(int(l.x), int(l.y) + dy));
  // The occluded point's target differs from its source; a clean point's does not.
  const auto& o = s.points[6];
  EXPECT_GT(std::abs(s.frame1(int(o.x + 3), int(o.y + 2)) - s.frame0(int(o.x + 1), int(o.y))),
            0.0f);
  EXPECT_THROW(makeFailureScene(100, 100, 1), Error);
}

TEST(Scene2d, GridPoints) {
  const auto g = gridPoints(640, 360, 8, 5, 100, 80);
  ASSERT_EQ(g.size(), 40u);
  EXPECT_FLOAT_EQ(g.front().first, 100);
  EXPECT_FLOAT_EQ(g.front().second, 80);
  EXPECT_FLOAT_EQ(g.back().first, 539);
  EXPECT_FLOAT_EQ(g.back().second, 279);
}

TEST(Rng, SameSequenceForASeed) {
  Rng a(42), b(42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next(), b.next());
  Rng c(1);
  for (int i = 0; i < 1000; ++i) {
    const double u = c.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace vidmap::synth
