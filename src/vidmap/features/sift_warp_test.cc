// Repeatability and matching precision under known 2D transforms. The second view is rendered
// analytically from the same blob scene under the transform (no resampling), or, for a real
// image, warped with a bilinear sampler written for the test (testing/load_image.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "vidmap/core/data_dir.h"
#include "vidmap/features/matcher.h"
#include "vidmap/features/sift.h"
#include "vidmap/features/testing/blob_scene.h"
#include "vidmap/features/testing/load_image.h"
#include "vidmap/features/testing/metrics.h"

namespace vidmap::features {
namespace {

using namespace testing;

struct Case {
  const char* name;
  double degrees, scale, tx, ty;
  double minRepeatability, minPrecision;
  int minMatches;
};

class SiftWarp : public ::testing::TestWithParam<Case> {};

TEST_P(SiftWarp, RepeatsAndMatchesUnderASimilarity) {
  const Case c = GetParam();
  const int w = 480, h = 360;
  auto scene = randomBlobScene(w, h, 700, 2.0, 10.0, 11);
  const auto I = similarity(0, 1, 0, 0, 0, 0);
  const auto H = similarity(c.degrees, c.scale, w / 2.0, h / 2.0, c.tx, c.ty);
  GrayImage a = renderBlobs(scene, w, h, I), b = renderBlobs(scene, w, h, H);
  SiftOptions o;
  o.backend = Backend::kCpu;
  Sift sift(o);
  Features fa = sift.extract(a.view()).features, fb = sift.extract(b.view()).features;
  ASSERT_GT(fa.size(), 200u);
  const auto rep = repeatability(fa, fb, H);
  MatchOptions mo;
  mo.backend = Backend::kCpu;
  auto m = Matcher(mo).match(fa, fb);
  const double prec = matchPrecision(m, fa, fb, H, 2.0);
  std::printf(
      "[ %s ] features %zu/%zu repeatability %.3f (median %.3f px) matches %zu precision %.3f\n",
      c.name, fa.size(), fb.size(), rep.rate, rep.medianErrorPx, m.size(), prec);
  EXPECT_GE(rep.rate, c.minRepeatability);
  EXPECT_GE(prec, c.minPrecision);
  EXPECT_GE(static_cast<int>(m.size()), c.minMatches);
  // Orientations of correct matches rotate with the scene.
  int checked = 0, agree = 0;
  for (const auto& x : m) {
    const auto& ka = fa.keypoints[x.a];
    const auto& kb = fb.keypoints[x.b];
    const auto p = applyHomography(H, ka.x, ka.y);
    if (std::hypot(p[0] - kb.x, p[1] - kb.y) > 1) continue;
    ++checked;
    const double d =
        std::remainder(kb.orientation - ka.orientation - c.degrees * M_PI / 180, 2 * M_PI);
    agree += std::abs(d) < 0.1;
  }
  EXPECT_GE(agree, 0.9 * checked);
}

INSTANTIATE_TEST_SUITE_P(Transforms, SiftWarp,
                         ::testing::Values(Case{"shift", 0, 1, 13.37, -7.71, 0.85, 0.98, 300},
                                           Case{"rotate30", 30, 1, 0, 0, 0.75, 0.97, 200},
                                           Case{"rotate90", 90, 1, 0, 0, 0.85, 0.97, 200},
                                           Case{"scale0.7", 0, 0.7, 0, 0, 0.6, 0.95, 100},
                                           Case{"scale1.4", 0, 1.4, 0, 0, 0.6, 0.95, 100},
                                           Case{"rotate20_scale0.8_shift", 20, 0.8, 9.5, 4.25, 0.6,
                                                0.95, 100}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// Sub-pixel localisation: a shifted view puts keypoints where the shift says, to a small
// fraction of a pixel.
TEST(SiftWarp, SubPixelShiftIsRecovered) {
  const int w = 320, h = 240;
  auto scene = randomBlobScene(w, h, 300, 2.0, 8.0, 21);
  const auto H = similarity(0, 1, 0, 0, 0.3, 0.6);
  GrayImage a = renderBlobs(scene, w, h), b = renderBlobs(scene, w, h, H);
  SiftOptions o;
  o.backend = Backend::kCpu;
  Sift sift(o);
  auto fa = sift.extract(a.view()).features, fb = sift.extract(b.view()).features;
  const auto rep = repeatability(fa, fb, H, 1.0);
  std::printf("[ subpixel ] repeatability %.3f median error %.4f px\n", rep.rate,
              rep.medianErrorPx);
  EXPECT_GE(rep.rate, 0.85);
  EXPECT_LT(rep.medianErrorPx, 0.06);
}

// A real photograph rotated by 30 degrees and scaled by 0.8 with the test's bilinear warp.
TEST(SiftWarp, RealImageUnderRotationAndScale) {
  const std::filesystem::path path = "/usr/share/doc/opencv-doc/examples/data/graf1.png";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "opencv-doc is not installed";
  GrayImage a = loadGray(path);
  const auto H = similarity(30, 0.8, a.width() / 2.0, a.height() / 2.0, 0, 0);
  GrayImage b = warpHomography(a, H, a.width(), a.height());
  SiftOptions o;
  o.backend = Backend::kCpu;
  Sift sift(o);
  auto fa = sift.extract(a.view()).features, fb = sift.extract(b.view()).features;
  const auto rep = repeatability(fa, fb, H);
  MatchOptions mo;
  mo.backend = Backend::kCpu;
  auto m = Matcher(mo).match(fa, fb);
  const double prec = matchPrecision(m, fa, fb, H, 2.0);
  std::printf(
      "[ graf1 rot30 s0.8 ] features %zu/%zu repeatability %.3f matches %zu precision %.3f\n",
      fa.size(), fb.size(), rep.rate, m.size(), prec);
  EXPECT_GE(rep.rate, 0.5);
  EXPECT_GE(prec, 0.9);
  EXPECT_GE(m.size(), 300u);
}

}  // namespace
}  // namespace vidmap::features
