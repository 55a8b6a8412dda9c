// The Sim(3) RANSAC of model merging against a known similarity with outliers, and the pose
// transform against a projection computed directly.
#include "vidmap/sfm/model_merge.h"

#include <gtest/gtest.h>

#include <random>

#include "vidmap/core/error.h"

namespace vidmap::sfm {
namespace {

TEST(Sim3Ransac, RecoversAKnownSimilarityDespiteOutliers) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-5, 5);
  std::normal_distribution<double> noise(0, 1e-3);
  Sim3 truth;
  truth.s = 2.5;
  truth.R = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, -2, 0.5).normalized()).toRotationMatrix();
  truth.t = {3, -1, 8};
  std::vector<Vec3> src, dst;
  std::vector<char> isOutlier;
  for (int i = 0; i < 300; ++i) {
    const Vec3 x(u(rng), u(rng), u(rng));
    src.push_back(x);
    const bool out = i % 10 < 4;  // 40 % wrong correspondences, anywhere in the volume
    isOutlier.push_back(out);
    dst.push_back(out ? Vec3(3 * u(rng), 3 * u(rng), 3 * u(rng))
                      : Vec3(truth.apply(x) + Vec3(noise(rng), noise(rng), noise(rng))));
  }
  // Inliers within 6 sigma of the noise (norm of a 3D Gaussian of sigma 1e-3).
  auto isInlier = [&](int i, const Sim3& sim) {
    return (dst[i] - sim.apply(src[i])).norm() < 6e-3;
  };
  const Sim3Estimate e = estimateSim3Ransac(src, dst, isInlier);
  ASSERT_TRUE(e.success);
  EXPECT_EQ(e.numInliers, 180);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(e.inliers[i] != 0, !isOutlier[i]) << i;
  // 180 points with 1 mm noise over a 10 m cube: the least-squares fit is good to ~1e-4.
  EXPECT_NEAR(e.sim.s, 2.5, 2.5e-4);
  EXPECT_LT(Eigen::AngleAxisd(e.sim.R * truth.R.transpose()).angle(), 1e-4);
  EXPECT_LT((e.sim.t - truth.t).norm(), 2e-3);
}

TEST(Sim3Ransac, DegenerateOrTooFewPointsFail) {
  std::vector<Vec3> line, line2;
  for (int i = 0; i < 20; ++i) {
    line.emplace_back(i, 2 * i, 0.5 * i);
    line2.emplace_back(2 * i + 1, 4 * i, i);
  }
  auto any = [](int, const Sim3&) { return true; };
  EXPECT_FALSE(estimateSim3Ransac(line, line2, any).success);  // collinear: rotation unknown
  EXPECT_FALSE(
      estimateSim3Ransac({Vec3(0, 0, 1), Vec3(1, 0, 1)}, {Vec3(0, 0, 1), Vec3(1, 0, 1)}, any)
          .success);
  EXPECT_THROW(estimateSim3Ransac(line, {Vec3::Zero()}, any), Error);
}

TEST(Sim3Ransac, TransformedPoseProjectsTheTransformedPointAlike) {
  geometry::Pose pose;
  pose.R = Eigen::AngleAxisd(0.3, Eigen::Vector3d(0, 1, 0.2).normalized()).toRotationMatrix();
  pose.t = {0.4, -0.2, 1.5};
  Sim3 sim;
  sim.s = 0.37;
  sim.R = Eigen::AngleAxisd(-1.1, Eigen::Vector3d(0.3, 0.1, 1).normalized()).toRotationMatrix();
  sim.t = {-2, 5, 1};
  const geometry::Pose moved = transformPose(pose, sim);
  for (const Vec3& X : {Vec3(0.5, 0.2, 4.0), Vec3(-1, 1, 7), Vec3(2, -0.5, 3)}) {
    const Vec3 a = pose.apply(X), b = moved.apply(sim.apply(X));
    EXPECT_LT((a.hnormalized() - b.hnormalized()).norm(), 1e-12);
    EXPECT_NEAR(b.z(), sim.s * a.z(), 1e-12);  // depths scale with the world
  }
  EXPECT_LT((moved.center() - sim.apply(pose.center())).norm(), 1e-12);
}

}  // namespace
}  // namespace vidmap::sfm
