// The batched RANSAC driver with the CPU batch scorer: the same accuracy as the sequential loop
// on essential matrices and absolute poses, deterministic for a seed, and stopping adaptively.
#include <gtest/gtest.h>

#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/ransac_batched.h"
#include "vidmap/geometry/test_scene.h"

namespace vidmap::geometry {
namespace {

auto flatten = [](const auto& m, std::vector<double>* flat) { appendModel(m, flat); };

TEST(RansacBatched, EssentialMatchesTheSequentialLoop) {
  testing::SceneOptions o;
  o.num_points = 400;
  o.outlier_ratio = 0.5;
  const auto s = testing::makeTwoViewScene(o, 3);
  Vec2List x1, x2;
  for (size_t i = 0; i < s.px1.size(); ++i) {
    x1.push_back(s.cam.normalize(s.px1[i]));
    x2.push_back(s.cam.normalize(s.px2[i]));
  }
  EssentialEstimator est(x1, x2);
  RansacOptions ro;
  ro.max_error = 3.0 / 500;
  auto cpu = [&](const std::vector<double>& flat, double t2) {
    return scoreHypothesesCpu(ModelKind::kEpipolar, flat, est.packed(), t2);
  };
  const auto b = ransacBatched(est, ro, 128, flatten, cpu);
  const auto q = ransac(est, ro);
  ASSERT_TRUE(b.success);
  ASSERT_TRUE(q.success);
  Pose pb, pq;
  ASSERT_GT(poseFromEssential(b.model, est.rays1(), est.rays2(), {}, &pb), 150);
  ASSERT_GT(poseFromEssential(q.model, est.rays1(), est.rays2(), {}, &pq), 150);
  EXPECT_LT(testing::rotationErrorDeg(pb.R, s.rel.R), 0.5);
  EXPECT_LT(testing::directionErrorDeg(pb.t, s.rel.t), 3.0);
  EXPECT_NEAR(b.num_inliers, q.num_inliers, 0.02 * q.num_inliers + 2);
  EXPECT_EQ(b.iterations % 128, 0);    // whole batches ...
  EXPECT_LE(b.iterations, 256 + 128);  // ... about 220 samples needed at 50% inliers
  // Deterministic for a seed.
  const auto b2 = ransacBatched(est, ro, 128, flatten, cpu);
  EXPECT_EQ(b.model, b2.model);
  EXPECT_EQ(b.inlier_mask, b2.inlier_mask);
}

TEST(RansacBatched, AbsolutePoseWithOutliers) {
  testing::SceneOptions o;
  o.num_points = 300;
  o.outlier_ratio = 0.6;
  const auto s = testing::makePnPScene(o, 4);
  Vec2List xn;
  for (const auto& p : s.px) xn.push_back(s.cam.normalize(p));
  AbsolutePoseEstimator est(xn, s.X);
  RansacOptions ro;
  ro.max_error = 3.0 / 500;
  const auto r = ransacBatched(est, ro, 256, flatten, [&](const std::vector<double>& f, double t2) {
    return scoreHypothesesCpu(ModelKind::kProjection, f, est.packed(), t2);
  });
  ASSERT_TRUE(r.success);
  EXPECT_LT(testing::rotationErrorDeg(r.model.pose.R, s.pose.R), 0.2);
  int found = 0, truth = 0;
  for (size_t i = 0; i < s.inlier.size(); ++i) {
    truth += s.inlier[i];
    found += s.inlier[i] && r.inlier_mask[i];
  }
  EXPECT_GE(found, 0.95 * truth);
}

TEST(RansacBatched, BadBatchSizeIsAnError) {
  Vec2List a(10, Vec2(0, 0));
  EssentialEstimator est(a, a);
  auto none = [](const std::vector<double>&, double) { return std::vector<HypothesisScore>(); };
  EXPECT_THROW(ransacBatched(est, RansacOptions{}, 0, flatten, none), Error);
}

}  // namespace
}  // namespace vidmap::geometry
