// PnP RANSAC (P3P + LM) on synthetic scenes with known truth.
#include <gtest/gtest.h>

#include <cstdio>

#include "vidmap/geometry/pnp.h"
#include "vidmap/geometry/refine.h"
#include "vidmap/geometry/score_batch.h"
#include "vidmap/geometry/test_scene.h"

namespace vidmap::geometry {
namespace {

using testing::makePnPScene;
using testing::SceneOptions;

class PnPAccuracy : public ::testing::TestWithParam<std::pair<double, double>> {};

TEST_P(PnPAccuracy, PoseAndInliersWithinTheNoise) {
  const auto [noise, outliers] = GetParam();
  SceneOptions o;
  o.num_points = 200;
  o.noise_px = noise;
  o.outlier_ratio = outliers;
  const int trials = 5;
  double sum_r = 0, sum_c = 0, oracle_r = 0, oracle_c = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const auto s = makePnPScene(o, 31 * trial + static_cast<int>(outliers * 100));
    PnPOptions opt;
    opt.seed = trial;
    const PnPResult r = estimatePnP(s.px, s.X, s.cam, opt);
    ASSERT_TRUE(r.success) << r.message;
    sum_r += testing::rotationErrorDeg(r.pose.R, s.pose.R);
    sum_c += (r.pose.center() - s.pose.center()).norm();
    // The oracle: the reprojection-optimal pose on the true inliers, started at the truth.
    std::vector<int> truth_in;
    Vec2List xn;
    for (size_t i = 0; i < s.inlier.size(); ++i) {
      if (s.inlier[i]) truth_in.push_back(static_cast<int>(i));
      xn.push_back(s.cam.normalize(s.px[i]));
    }
    Pose oracle = s.pose;
    refineAbsolutePose(xn, s.X, truth_in, &oracle);
    oracle_r += testing::rotationErrorDeg(oracle.R, s.pose.R);
    oracle_c += (oracle.center() - s.pose.center()).norm();
    int found = 0;
    for (int i : truth_in) found += r.inlier_mask[i];
    EXPECT_GE(found, 0.95 * truth_in.size());
    EXPECT_LT(r.rms_error_px, 1.6 * noise + 0.1);
  }
  EXPECT_LT(sum_r, 1.5 * oracle_r + 0.01 * trials) << "oracle " << oracle_r / trials;
  EXPECT_LT(sum_c, 1.5 * oracle_c + 0.002 * trials) << "oracle " << oracle_c / trials;
  EXPECT_LT(sum_r / trials, 0.3 * noise);
  std::printf(
      "noise %.1f outliers %.0f%%: rotation %.4f deg (oracle %.4f), centre %.4f m "
      "(oracle %.4f)\n",
      noise, 100 * outliers, sum_r / trials, oracle_r / trials, sum_c / trials, oracle_c / trials);
}

INSTANTIATE_TEST_SUITE_P(Synthetic, PnPAccuracy,
                         ::testing::Values(std::pair{0.5, 0.0}, std::pair{1.0, 0.0},
                                           std::pair{1.0, 0.3}, std::pair{1.0, 0.5},
                                           std::pair{1.0, 0.7}, std::pair{0.5, 0.7}));

TEST(PnP, CoplanarWorldPointsWork) {
  SceneOptions o;
  o.planar = true;
  o.noise_px = 0.5;
  o.outlier_ratio = 0.3;
  const auto s = makePnPScene(o, 3);
  const auto r = estimatePnP(s.px, s.X, s.cam);
  ASSERT_TRUE(r.success) << r.message;
  EXPECT_LT(testing::rotationErrorDeg(r.pose.R, s.pose.R), 0.2);
}

// The lock-step form (its P3P hypotheses scored a round at a time by a BatchScorer) is the
// per-sample RANSAC's result bit for bit, from no outliers (a single round) to 70%.
TEST(PnP, LockstepRoundsGiveTheSameResult) {
  CpuBatchScorer scorer;
  for (double outliers : {0.0, 0.3, 0.7}) {
    SceneOptions o;
    o.num_points = 300;
    o.noise_px = 1.0;
    o.outlier_ratio = outliers;
    for (int trial = 0; trial < 3; ++trial) {
      const auto s = makePnPScene(o, 500 + trial);
      PnPOptions opt;
      opt.seed = trial;
      const PnPResult a = estimatePnP(s.px, s.X, s.cam, opt);
      const PnPResult b = estimatePnP(s.px, s.X, s.cam, opt, scorer);
      ASSERT_TRUE(a.success) << a.message;
      EXPECT_EQ(b.success, a.success);
      EXPECT_TRUE(b.pose.R == a.pose.R && b.pose.t == a.pose.t) << outliers << " " << trial;
      EXPECT_EQ(b.inlier_mask, a.inlier_mask);
      EXPECT_EQ(b.iterations, a.iterations);
      EXPECT_EQ(b.rms_error_px, a.rms_error_px);
      EXPECT_LT(testing::rotationErrorDeg(a.pose.R, s.pose.R), 0.5);
    }
  }
  EXPECT_GT(scorer.calls(), 9);
}

}  // namespace
}  // namespace vidmap::geometry
