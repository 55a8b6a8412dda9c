// Similarities against known truth: Umeyama's fit, the RANSAC estimator with outliers (the
// default 3D residual and a caller's residual), degenerate input, the pose transform against a
// direct projection, and the rotation about a known centre.
#include "vidmap/geometry/similarity.h"

#include <gtest/gtest.h>

#include <random>

#include "vidmap/core/error.h"

namespace vidmap::geometry {
namespace {

Sim3 knownSim() {
  Sim3 truth;
  truth.s = 2.5;
  truth.R = Eigen::AngleAxisd(0.7, Vec3(1, -2, 0.5).normalized()).toRotationMatrix();
  truth.t = {3, -1, 8};
  return truth;
}

// 300 correspondences in a 10 m cube, 40 % of them wrong (anywhere in the volume), the rest
// with 1 mm Gaussian noise.
struct Scene {
  Vec3List src, dst;
  std::vector<char> outlier;
};
Scene makeScene(const Sim3& truth) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-5, 5);
  std::normal_distribution<double> noise(0, 1e-3);
  Scene s;
  for (int i = 0; i < 300; ++i) {
    const Vec3 x(u(rng), u(rng), u(rng));
    s.src.push_back(x);
    const bool out = i % 10 < 4;
    s.outlier.push_back(out);
    s.dst.push_back(out ? Vec3(3 * u(rng), 3 * u(rng), 3 * u(rng))
                        : Vec3(truth.apply(x) + Vec3(noise(rng), noise(rng), noise(rng))));
  }
  return s;
}

void expectNear(const Sim3& e, const Sim3& truth, double tol) {
  EXPECT_NEAR(e.s, truth.s, tol * truth.s);
  EXPECT_LT(Eigen::AngleAxisd(e.R * truth.R.transpose()).angle(), tol);
  EXPECT_LT((e.t - truth.t).norm(), 20 * tol);
}

TEST(Umeyama, ExactOnNoiseFreePointsAndInverseMapsBack) {
  const Sim3 truth = knownSim();
  const Vec3List src{{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {1, 1, 1}};
  Vec3List dst;
  for (const Vec3& x : src) dst.push_back(truth.apply(x));
  const Sim3 e = alignUmeyama(src, dst);
  expectNear(e, truth, 1e-12);
  for (size_t i = 0; i < src.size(); ++i)
    EXPECT_LT((e.applyInverse(dst[i]) - src[i]).norm(), 1e-12);
  // Without scale: the rotation is still the truth's, the scale stays 1.
  EXPECT_EQ(alignUmeyama(src, dst, false).s, 1.0);
}

TEST(SimilarityRansac, RecoversAKnownSimilarityDespiteOutliers) {
  const Sim3 truth = knownSim();
  const Scene s = makeScene(truth);
  RansacOptions o;
  o.max_error = 6e-3;  // 6 sigma of the noise
  const RansacResult<Sim3> e = estimateSimilarity(s.src, s.dst, o);
  ASSERT_TRUE(e.success);
  EXPECT_EQ(e.num_inliers, 180);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(e.inlier_mask[i] != 0, !s.outlier[i]) << i;
  // 180 points with 1 mm noise over a 10 m cube: the least-squares fit is good to ~1e-4.
  expectNear(e.model, truth, 1e-4);
  // Deterministic: the same seed gives the same model bit for bit.
  const RansacResult<Sim3> again = estimateSimilarity(s.src, s.dst, o);
  EXPECT_EQ(again.model.s, e.model.s);
  EXPECT_EQ(again.model.R, e.model.R);
  EXPECT_EQ(again.model.t, e.model.t);
}

TEST(SimilarityRansac, ACallersResidualDecidesTheInliers) {
  const Sim3 truth = knownSim();
  const Scene s = makeScene(truth);
  // The residual in the source frame (the inverse map): 1 mm noise there is 0.4 mm.
  auto inverse = [&](int i, const Sim3& m) {
    return (m.applyInverse(s.dst[i]) - s.src[i]).squaredNorm();
  };
  RansacOptions o;
  o.max_error = 6e-3 / truth.s;
  const RansacResult<Sim3> e = estimateSimilarity(s.src, s.dst, o, inverse);
  ASSERT_TRUE(e.success);
  EXPECT_EQ(e.num_inliers, 180);
  expectNear(e.model, truth, 1e-4);
}

TEST(SimilarityRansac, DegenerateOrTooFewPointsFail) {
  Vec3List line, line2;
  for (int i = 0; i < 20; ++i) {
    line.emplace_back(i, 2 * i, 0.5 * i);
    line2.emplace_back(2 * i + 1, 4 * i, i);
  }
  RansacOptions o;
  o.max_error = 1e9;
  EXPECT_FALSE(estimateSimilarity(line, line2, o).success);  // collinear: rotation unknown
  EXPECT_FALSE(estimateSimilarity({Vec3(0, 0, 1), Vec3(1, 0, 1)}, {Vec3(0, 0, 1), Vec3(1, 0, 1)}, o)
                   .success);
  EXPECT_THROW(estimateSimilarity(line, {Vec3::Zero()}, o), Error);
  EXPECT_THROW(alignUmeyama(line, line2), Error);
}

TEST(Similarity, TransformedPoseProjectsTheTransformedPointAlike) {
  Pose pose;
  pose.R = Eigen::AngleAxisd(0.3, Vec3(0, 1, 0.2).normalized()).toRotationMatrix();
  pose.t = {0.4, -0.2, 1.5};
  Sim3 sim;
  sim.s = 0.37;
  sim.R = Eigen::AngleAxisd(-1.1, Vec3(0.3, 0.1, 1).normalized()).toRotationMatrix();
  sim.t = {-2, 5, 1};
  const Pose moved = transformPose(pose, sim);
  for (const Vec3& X : {Vec3(0.5, 0.2, 4.0), Vec3(-1, 1, 7), Vec3(2, -0.5, 3)}) {
    const Vec3 a = pose.apply(X), b = moved.apply(sim.apply(X));
    EXPECT_LT((a.hnormalized() - b.hnormalized()).norm(), 1e-12);
    EXPECT_NEAR(b.z(), sim.s * a.z(), 1e-12);  // depths scale with the world
  }
  EXPECT_LT((moved.center() - sim.apply(pose.center())).norm(), 1e-12);
}

TEST(RotationAboutCentre, RecoversTheRotationOfACameraAtAKnownCentre) {
  Pose truth;
  truth.R = Eigen::AngleAxisd(0.4, Vec3(0.2, 1, -0.3).normalized()).toRotationMatrix();
  const Vec3 centre(1, -2, 0.5);
  truth.t = -truth.R * centre;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  Vec3List X;
  Vec2List x;
  std::vector<char> mask;
  for (int i = 0; i < 40; ++i) {
    const Vec3 inCam(u(rng), u(rng), 3 + u(rng));
    X.push_back(truth.R.transpose() * (inCam - truth.t));
    x.push_back(inCam.hnormalized());
    mask.push_back(i % 7 != 0);
    if (!mask.back()) x.back() += Vec2(0.3, -0.2);  // masked out: a wrong bearing
  }
  const Pose r = rotationAboutCentre(X, x, centre, mask);
  EXPECT_LT(Eigen::AngleAxisd(r.R * truth.R.transpose()).angle(), 1e-12);
  EXPECT_LT((r.center() - centre).norm(), 1e-12);
  // The wrong bearings, unmasked, pull the rotation away.
  EXPECT_GT(Eigen::AngleAxisd(rotationAboutCentre(X, x, centre).R * truth.R.transpose()).angle(),
            1e-4);
  EXPECT_THROW(rotationAboutCentre(X, {}, centre), Error);
}

}  // namespace
}  // namespace vidmap::geometry
