#include "vidmap/features/clahe.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "vidmap/features/sift.h"
#include "vidmap/features/testing/blob_scene.h"

namespace vidmap::features {
namespace {

// A low-contrast image: CLAHE spreads its values over [0, 1] and keeps their order locally.
TEST(Clahe, StretchesLowContrast) {
  GrayImage img(128, 96);
  for (int y = 0; y < 96; ++y)
    for (int x = 0; x < 128; ++x) img(x, y) = 0.45f + 0.1f * x / 127.0f;
  GrayImage out = clahe(constView(img.view()), 40.0f, 1);  // one tile, no clipping: equalisation
  auto [lo, hi] = std::minmax_element(out.vec().begin(), out.vec().end());
  EXPECT_LT(*lo, 0.1f);
  EXPECT_GT(*hi, 0.95f);
  for (int x = 1; x < 128; ++x) EXPECT_GE(out(x, 50), out(x - 1, 50));
  // With clipping the stretch is limited.
  GrayImage clipped = clahe(constView(img.view()), 1.0f, 1);
  auto [lo2, hi2] = std::minmax_element(clipped.vec().begin(), clipped.vec().end());
  EXPECT_GT(*hi2 - *lo2, 0.0f);
  EXPECT_LT(*hi2 - *lo2, *hi - *lo);
}

TEST(Clahe, HelpsSiftOnAFadedImage) {
  auto scene = testing::randomBlobScene(320, 240, 300, 2, 8, 9);
  GrayImage img = testing::renderBlobs(scene, 320, 240);
  for (float& v : img.vec()) v = 0.5f + 0.08f * (v - 0.5f);
  SiftOptions o;
  o.backend = Backend::kCpu;
  const size_t plain = Sift(o).extract(img.view()).features.size();
  o.clahe = true;
  const size_t eq = Sift(o).extract(img.view()).features.size();
  EXPECT_GT(eq, 2 * plain + 10);
}

}  // namespace
}  // namespace vidmap::features
