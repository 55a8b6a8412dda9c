// Triangulation: exact recovery, Lindstrom's correction onto the epipolar constraint, accuracy
// of the optimal method against the midpoint, and the filters of triangulateTrack.
#include <gtest/gtest.h>

#include <random>

#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/geometry/triangulation.h"

namespace vidmap::geometry {
namespace {

Pose lookingAt(const Vec3& centre, std::mt19937_64& rng) {
  const Mat3 R = testing::randomRotation(rng, 10);
  return {R, -R * centre};
}

TEST(Triangulation, ExactDataIsRecoveredByEveryMethod) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int t = 0; t < 50; ++t) {
    std::vector<Pose> poses;
    for (int v = 0; v < 4; ++v) poses.push_back(lookingAt(Vec3(u(rng), u(rng), u(rng) * 0.2), rng));
    const Vec3 X(u(rng), u(rng), 6 + u(rng));
    Vec2List xn;
    for (const auto& p : poses) xn.push_back(p.apply(X).hnormalized());
    EXPECT_LT((*triangulateMidpoint(poses[0], poses[1], xn[0], xn[1]) - X).norm(), 1e-9);
    EXPECT_LT((*triangulateOptimal(poses[0], poses[1], xn[0], xn[1]) - X).norm(), 1e-9);
    EXPECT_LT((*triangulateDlt(poses, xn) - X).norm(), 1e-9);
  }
}

TEST(Triangulation, CorrectionSatisfiesTheEpipolarConstraintMinimally) {
  std::mt19937_64 rng(2);
  std::normal_distribution<double> g(0, 0.002);
  const Pose rel{testing::randomRotation(rng, 15), Vec3(1, 0.1, 0.05)};
  const Mat3 E = essentialFromPose(rel);
  for (int t = 0; t < 100; ++t) {
    const Vec3 X(g(rng) * 500, g(rng) * 500, 5);
    Vec2 a = X.hnormalized() + Vec2(g(rng), g(rng));
    Vec2 b = rel.apply(X).hnormalized() + Vec2(g(rng), g(rng));
    Vec2 ac, bc;
    correctToEpipolar(E, a, b, &ac, &bc);
    EXPECT_NEAR(bc.homogeneous().dot(E * ac.homogeneous()), 0, 1e-12);
    // The correction is the Sampson step to first order: no larger than the noise put in.
    EXPECT_LT((ac - a).norm() + (bc - b).norm(), 6 * 0.002 * 2);
  }
}

TEST(Triangulation, OptimalIsMoreAccurateThanMidpointOnNoisyData) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0, 1.0 / 500);  // 1 px at f = 500
  std::uniform_real_distribution<double> u(-1, 1);
  double err_opt = 0, err_mid = 0;
  // A wide-angle pair with unequal distances, where the midpoint is biased.
  const Pose p1, p2{testing::randomRotation(rng, 30), Vec3(-2, 0, 1)};
  for (int t = 0; t < 2000; ++t) {
    const Vec3 X(u(rng) * 2, u(rng) * 2, 4 + 2 * u(rng));
    const Vec2 a = p1.apply(X).hnormalized() + Vec2(g(rng), g(rng));
    const Vec2 b = p2.apply(X).hnormalized() + Vec2(g(rng), g(rng));
    // Compare reprojection errors (the optimal method minimises them).
    const Vec3 Xo = *triangulateOptimal(p1, p2, a, b), Xm = *triangulateMidpoint(p1, p2, a, b);
    err_opt += (p1.apply(Xo).hnormalized() - a).squaredNorm() +
               (p2.apply(Xo).hnormalized() - b).squaredNorm();
    err_mid += (p1.apply(Xm).hnormalized() - a).squaredNorm() +
               (p2.apply(Xm).hnormalized() - b).squaredNorm();
  }
  EXPECT_LT(err_opt, err_mid);
}

TEST(Triangulation, TrackFiltersNameTheReason) {
  const Pinhole cam{500, 500, 320, 240};
  const Pose p1, p2{Mat3::Identity(), Vec3(-1, 0, 0)};
  const Vec3 X(0.2, -0.1, 5);
  auto obs = [&](const Pose& p, const Vec3& Y, Vec2 d = Vec2::Zero()) {
    return TrackObservation{p, cam, cam.project(p.apply(Y).hnormalized()) + d};
  };
  TrackTriangulation r = triangulateTrack({obs(p1, X), obs(p2, X)});
  ASSERT_TRUE(r.ok()) << toString(r.status);
  EXPECT_LT((r.X - X).norm(), 1e-9);
  EXPECT_NEAR(r.angle_deg, triangulationAngle(p1.center(), p2.center(), X) * 180 / M_PI, 1e-9);
  EXPECT_EQ(triangulateTrack({obs(p1, X)}).status, TriangulationStatus::kTooFewViews);
  // Far away: the rays are almost parallel.
  EXPECT_EQ(triangulateTrack({obs(p1, Vec3(0, 0, 500)), obs(p2, Vec3(0, 0, 500))}).status,
            TriangulationStatus::kSmallAngle);
  // Behind both cameras.
  const Pose q1{Mat3::Identity(), Vec3(0, 0, 0)}, q2{Mat3::Identity(), Vec3(-1, 0, 0)};
  std::vector<TrackObservation> behind = {obs(q1, X), obs(q2, X)};
  behind[0].pixel = cam.project(Vec2(0.2 / 5, -0.1 / 5));
  behind[1].pixel = cam.project(Vec2((0.2 - 1) / 5 * -1, -0.1 / 5));
  EXPECT_NE(triangulateTrack(behind).status, TriangulationStatus::kOk);
  // Three views, one of them 20 px off.
  const Pose p3{Mat3::Identity(), Vec3(1, 0.5, 0)};
  EXPECT_EQ(triangulateTrack({obs(p1, X), obs(p2, X), obs(p3, X, Vec2(20, 0))}).status,
            TriangulationStatus::kLargeError);
  // NaN pixel.
  auto bad = obs(p2, X);
  bad.pixel.x() = std::nan("");
  EXPECT_EQ(triangulateTrack({obs(p1, X), bad}).status, TriangulationStatus::kDegenerate);
  TriangulationOptions o;
  o.min_angle_deg = -1;
  EXPECT_THROW(triangulateTrack({obs(p1, X), obs(p2, X)}, o), Error);
}

}  // namespace
}  // namespace vidmap::geometry
