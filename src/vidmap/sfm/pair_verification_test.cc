// The video verification setup: F only as E's fallback once the focal length is known, and
// the pair's known E as the first hypothesis, transposed when the pair is verified the other
// way round (checked on a synthetic pair: x2^T E x1 = 0 for the true E).
#include "vidmap/sfm/pair_verification.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/test_scene.h"

namespace vidmap::sfm {
namespace {

TEST(PairVerification, PolicyAndPriorOrientation) {
  geometry::testing::SceneOptions so;
  so.noise_px = 0;
  const auto s = geometry::testing::makeTwoViewScene(so, 3);
  const geometry::Mat3 E = geometry::essentialFromPose(s.rel);  // camera 1 -> camera 2
  PairMatches pm;
  pm.image1 = 0;
  pm.image2 = 1;
  std::array<double, 9> e;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) e[3 * i + j] = E(i, j);
  pm.essential = e;
  const geometry::TwoViewOptions base;

  const PairVerification legacy = pairVerification(base, false, FocalLength::kGiven, pm, false);
  EXPECT_EQ(legacy.options.fundamental, geometry::TwoViewOptions::Fundamental::kAlways);
  EXPECT_EQ(legacy.prior(), nullptr);

  const PairVerification early = pairVerification(base, true, FocalLength::kUnknown, pm, false);
  EXPECT_EQ(early.options.fundamental, geometry::TwoViewOptions::Fundamental::kAlways);

  const PairVerification v = pairVerification(base, true, FocalLength::kEstimated, pm, false);
  EXPECT_EQ(v.options.fundamental, geometry::TwoViewOptions::Fundamental::kWhenEssentialFails);
  EXPECT_TRUE(v.options.homography_test_only);
  const PairVerification given = pairVerification(base, true, FocalLength::kGiven, pm, false);
  EXPECT_EQ(given.options.fundamental,
            geometry::TwoViewOptions::Fundamental::kWhenEssentialExplainsPart);
  EXPECT_TRUE(given.options.homography_test_only);
  ASSERT_NE(v.prior(), nullptr);
  const PairVerification w = pairVerification(base, true, FocalLength::kEstimated, pm, true);
  ASSERT_NE(w.prior(), nullptr);
  double forward = 0, backward = 0;
  for (size_t i = 0; i < s.px1.size(); ++i) {
    const geometry::Vec3 a = s.cam.normalize(s.px1[i]).homogeneous();
    const geometry::Vec3 b = s.cam.normalize(s.px2[i]).homogeneous();
    forward = std::max(forward, std::abs(b.dot(*v.prior() * a)));
    backward = std::max(backward, std::abs(a.dot(*w.prior() * b)));  // verified as (2, 1)
  }
  EXPECT_LT(forward, 1e-9);
  EXPECT_LT(backward, 1e-9);

  pm.essential->fill(0.0);  // a zero matrix is no hypothesis
  EXPECT_EQ(pairVerification(base, true, FocalLength::kEstimated, pm, false).prior(), nullptr);
}

}  // namespace
}  // namespace vidmap::sfm
