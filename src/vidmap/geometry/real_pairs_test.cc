// Relative pose and PnP on real image pairs with ground-truth cameras (fountain-P11 at 1/4
// resolution, Middlebury temple), OpenCV SIFT matches. Skips when the data are absent.
#include <gtest/gtest.h>

#include <cstdio>

#include "vidmap/geometry/opencv_pairs.h"
#include "vidmap/geometry/pnp.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/geometry/two_view.h"

namespace vidmap::geometry {
namespace {

struct PairCase {
  const char* set;
  int i, j;
  double max_rot_deg, max_dir_deg;
};

class RealPairs : public ::testing::TestWithParam<PairCase> {};

TEST_P(RealPairs, RelativePoseMatchesTheGroundTruth) {
  const PairCase c = GetParam();
  const auto p = testing::loadPair(c.set, c.i, c.j);
  if (!p) GTEST_SKIP() << "data absent: " << c.set;
  ASSERT_GE(p->pts1.size(), 50u) << "too few SIFT matches";
  const auto g = estimateRelativePose(p->pts1, p->pts2, p->a.cam, p->b.cam);
  ASSERT_TRUE(g.success()) << g.message;
  EXPECT_EQ(g.config, TwoViewConfig::kCalibrated) << toString(g.config);
  const Pose truth = p->relative();
  const double er = testing::rotationErrorDeg(g.relative.R, truth.R);
  const double et = testing::directionErrorDeg(g.relative.t, truth.t);
  std::printf(
      "%s: %zu matches, %d inliers, rotation error %.3f deg, translation %.3f deg, "
      "median angle %.1f deg\n",
      p->name.c_str(), p->pts1.size(), g.num_inliers, er, et, g.median_triangulation_angle_deg);
  EXPECT_LT(er, c.max_rot_deg);
  EXPECT_LT(et, c.max_dir_deg);
  EXPECT_GT(g.num_inliers, static_cast<int>(p->pts1.size() / 3));

  // PnP of view b from the triangulated inliers scaled to the true baseline, in view a's frame.
  const double baseline = truth.t.norm();
  Vec2List px;
  Vec3List X;
  for (size_t k = 0; k < g.points.size(); ++k) {
    const Vec3 Xa = g.points[k] * baseline;                     // camera a frame, metric
    X.push_back(p->a.pose.R.transpose() * (Xa - p->a.pose.t));  // world
    px.push_back(p->pts2[g.point_indices[k]]);
  }
  const auto r = estimatePnP(px, X, p->b.cam);
  ASSERT_TRUE(r.success) << r.message;
  EXPECT_LT(testing::rotationErrorDeg(r.pose.R, p->b.pose.R), c.max_rot_deg);
}

// Bounds: a few tenths of a degree of rotation and a few degrees of translation direction
// (matches at 1/4 resolution, ground truth to sub-pixel), wider for the narrow-field (about 12
// degrees) Middlebury rings, where rotation and translation trade off; on the same dino matches
// OpenCV's findEssentialMat + recoverPose errs by 1.8 and 4.6 degrees (bench/geometry_vs_opencv).
INSTANTIATE_TEST_SUITE_P(
    Data, RealPairs,
    ::testing::Values(PairCase{"fountain", 3, 4, 0.5, 3.0}, PairCase{"fountain", 5, 6, 0.5, 3.0},
                      PairCase{"fountain", 2, 4, 0.5, 3.0}, PairCase{"temple", 7, 8, 1.5, 5.0},
                      PairCase{"temple", 12, 13, 1.5, 5.0}, PairCase{"dino", 9, 10, 3.0, 6.0}),
    [](const auto& info) {
      return std::string(info.param.set) + std::to_string(info.param.i) + "_" +
             std::to_string(info.param.j);
    });

}  // namespace
}  // namespace vidmap::geometry
