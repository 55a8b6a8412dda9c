// Minimal solvers on exact random problems: the true model is among the solutions, and every
// solution satisfies the constraints it was built from.
#include <gtest/gtest.h>

#include <Eigen/SVD>
#include <cmath>
#include <random>

#include "vidmap/geometry/essential_5pt.h"
#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/fundamental_7pt.h"
#include "vidmap/geometry/fundamental_8pt.h"
#include "vidmap/geometry/homography_4pt.h"
#include "vidmap/geometry/p3p.h"
#include "vidmap/geometry/poly.h"
#include "vidmap/geometry/test_scene.h"

namespace vidmap::geometry {
namespace {

using testing::makeTwoViewScene;
using testing::SceneOptions;

// Distance between two matrices defined up to scale and sign.
double projectiveDistance(const Mat3& A, const Mat3& B) {
  const Mat3 a = A / A.norm(), b = B / B.norm();
  return std::min((a - b).norm(), (a + b).norm());
}

// A homography near a small shift and shear, perturbed (Eigen's Random) by 1% and its
// projective row by 0.001%: images of 640 x 480 points stay near the image.
Mat3 nearIdentityHomography() {
  Mat3 H;
  H << 1.1, 0.05, 20, -0.03, 0.95, -15, 1e-4, -2e-4, 1;
  H += 0.01 * Mat3::Random();
  H(2, 0) *= 0.001;
  H(2, 1) *= 0.001;
  return H;
}

TEST(Poly, QuadraticAndCubicRoots) {
  double r[3];
  ASSERT_EQ(solveQuadratic(1, -3, 2, r), 2);
  EXPECT_NEAR(std::min(r[0], r[1]), 1, 1e-14);
  EXPECT_NEAR(std::max(r[0], r[1]), 2, 1e-14);
  EXPECT_EQ(solveQuadratic(1, 0, 1, r), 0);
  ASSERT_EQ(solveQuadratic(0, 2, -4, r), 1);  // linear
  EXPECT_DOUBLE_EQ(r[0], 2);
  // (x - 1)(x - 2)(x + 3) = x^3 - 7x + 6
  ASSERT_EQ(solveCubic(1, 0, -7, 6, r), 3);
  std::sort(r, r + 3);
  EXPECT_NEAR(r[0], -3, 1e-12);
  EXPECT_NEAR(r[1], 1, 1e-12);
  EXPECT_NEAR(r[2], 2, 1e-12);
  ASSERT_EQ(solveCubic(2, 0, 0, -16, r), 1);  // 2x^3 = 16
  EXPECT_NEAR(r[0], 2, 1e-12);
  // Scaled coefficients and a tiny leading term fall back to the quadratic.
  ASSERT_EQ(solveCubic(1e-20, 1, -3, 2, r), 2);
}

TEST(Essential5pt, RecoversTheTruthOnExactData) {
  SceneOptions o;
  o.noise_px = 0;
  o.num_points = 5;
  int found = 0;
  const int trials = 200;
  for (int t = 0; t < trials; ++t) {
    const auto s = makeTwoViewScene(o, 1000 + t);
    Vec3 x1[5], x2[5];
    for (int i = 0; i < 5; ++i) {
      x1[i] = s.cam.normalize(s.px1[i]).homogeneous();
      x2[i] = s.cam.normalize(s.px2[i]).homogeneous();
    }
    std::vector<Mat3> Es;
    const int n = essential5pt(x1, x2, &Es);
    ASSERT_EQ(n, static_cast<int>(Es.size()));
    ASSERT_LE(n, 10);
    const Mat3 Et = essentialFromPose(s.rel);
    double best = 1e9;
    for (const Mat3& E : Es) {
      best = std::min(best, projectiveDistance(E, Et));
      // Every solution is an essential matrix satisfying the five constraints.
      for (int i = 0; i < 5; ++i) EXPECT_NEAR(x2[i].dot(E * x1[i]), 0, 1e-9);
      Eigen::JacobiSVD<Mat3> svd(E);
      const Vec3 sv = svd.singularValues();
      EXPECT_NEAR(sv(0), sv(1), 1e-5 * sv(0));
      EXPECT_NEAR(sv(2), 0, 1e-5 * sv(0));
    }
    if (best < 1e-6) ++found;
  }
  EXPECT_GE(found, trials - 1) << "truth missed in " << trials - found << " of " << trials;
}

TEST(Essential5pt, PoseFromEssentialPicksTheTruth) {
  SceneOptions o;
  o.noise_px = 0;
  o.num_points = 50;
  for (int t = 0; t < 20; ++t) {
    const auto s = makeTwoViewScene(o, 2000 + t);
    const Vec3List x1 = toNormalized(s.px1, s.cam), x2 = toNormalized(s.px2, s.cam);
    Pose rel;
    std::vector<char> front;
    const int n = poseFromEssential(-3.0 * essentialFromPose(s.rel), x1, x2, {}, &rel, &front);
    EXPECT_EQ(n, 50);
    EXPECT_LT(testing::rotationErrorDeg(rel.R, s.rel.R), 1e-5);  // acos resolution
    EXPECT_LT(testing::directionErrorDeg(rel.t, s.rel.t), 1e-5);
    EXPECT_NEAR(rel.t.norm(), 1, 1e-12);
  }
}

TEST(Fundamental7pt, RecoversTheTruthOnExactData) {
  SceneOptions o;
  o.noise_px = 0;
  o.num_points = 7;
  int found = 0;
  const int trials = 100;
  for (int t = 0; t < trials; ++t) {
    const auto s = makeTwoViewScene(o, 3000 + t);
    const Mat3 Ft =
        s.cam.K().inverse().transpose() * essentialFromPose(s.rel) * s.cam.K().inverse();
    std::vector<Mat3> Fs;
    const int n = fundamental7pt(s.px1.data(), s.px2.data(), &Fs);
    ASSERT_LE(n, 3);
    double best = 1e9;
    for (const Mat3& F : Fs) {
      best = std::min(best, projectiveDistance(F, Ft));
      EXPECT_NEAR(F.determinant(), 0, 1e-10);
    }
    if (best < 1e-6) ++found;
  }
  EXPECT_GE(found, trials - 1);
}

TEST(Fundamental8pt, RecoversTheTruthAndIsRankTwo) {
  SceneOptions o;
  o.noise_px = 0;
  o.num_points = 30;
  for (int t = 0; t < 20; ++t) {
    const auto s = makeTwoViewScene(o, 4000 + t);
    const Mat3 Ft =
        s.cam.K().inverse().transpose() * essentialFromPose(s.rel) * s.cam.K().inverse();
    Mat3 F;
    ASSERT_TRUE(fundamental8pt(s.px1.data(), s.px2.data(), 30, &F));
    EXPECT_LT(projectiveDistance(F, Ft), 1e-7);
    EXPECT_NEAR(Eigen::JacobiSVD<Mat3>(F).singularValues()(2), 0, 1e-12);
  }
  Mat3 F;
  EXPECT_FALSE(fundamental8pt(nullptr, nullptr, 7, &F));
}

TEST(HomographyDlt, RecoversTheTruth) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 640);
  for (int t = 0; t < 50; ++t) {
    const Mat3 Ht = nearIdentityHomography();
    Vec2 a[6], b[6];
    for (int i = 0; i < 6; ++i) {
      a[i] = Vec2(u(rng), u(rng));
      b[i] = (Ht * a[i].homogeneous()).hnormalized();
    }
    Mat3 H;
    ASSERT_TRUE(homographyDlt(a, b, 4, &H));
    EXPECT_LT(projectiveDistance(H, Ht), 1e-8);
    ASSERT_TRUE(homographyDlt(a, b, 6, &H));
    EXPECT_LT(projectiveDistance(H, Ht), 1e-8);
  }
  // Collinear points do not fix a homography.
  Vec2 a[4] = {{0, 0}, {1, 1}, {2, 2}, {3, 3}}, b[4] = {{0, 0}, {1, 2}, {2, 4}, {3, 6}};
  Mat3 H;
  EXPECT_FALSE(homographyDlt(a, b, 4, &H));
}

// The minimal solver against the truth, the DLT on the same four points, and the collinear
// triples (of the first three points, and through the fourth) in either image.
TEST(Homography4pt, EqualsTheDltAndRefusesCollinearTriples) {
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> u(0, 640);
  std::normal_distribution<double> noise(0, 0.5);
  for (int t = 0; t < 200; ++t) {
    const Mat3 Ht = nearIdentityHomography();
    Vec2 a[4], b[4], bn[4];
    for (int i = 0; i < 4; ++i) {
      a[i] = Vec2(u(rng), u(rng));
      b[i] = (Ht * a[i].homogeneous()).hnormalized();
      bn[i] = b[i] + Vec2(noise(rng), noise(rng));  // any four points fix an H exactly
    }
    Mat3 H, Hd;
    ASSERT_TRUE(homography4pt(a, b, &H));
    EXPECT_LT(projectiveDistance(H, Ht), 1e-8);
    ASSERT_TRUE(homography4pt(a, bn, &H));
    ASSERT_TRUE(homographyDlt(a, bn, 4, &Hd));
    EXPECT_LT(projectiveDistance(H, Hd), 1e-8);
    for (int i = 0; i < 4; ++i)
      EXPECT_LT(((H * a[i].homogeneous()).hnormalized() - bn[i]).norm(), 1e-6);
  }
  const Vec2 good[4] = {{10, 20}, {600, 40}, {580, 460}, {30, 440}};
  Mat3 H;
  ASSERT_TRUE(homography4pt(good, good, &H));
  for (int k = 0; k < 4; ++k) {  // point k on the line through the two that follow it
    Vec2 bad[4] = {good[0], good[1], good[2], good[3]};
    bad[k] = 0.3 * bad[(k + 1) % 4] + 0.7 * bad[(k + 2) % 4];
    EXPECT_FALSE(homography4pt(bad, good, &H)) << k;
    EXPECT_FALSE(homography4pt(good, bad, &H)) << k;
  }
  const Vec2 nan[4] = {{std::nan(""), 0}, {1, 0}, {0, 1}, {1, 1}};
  EXPECT_FALSE(homography4pt(nan, good, &H));
}

TEST(P3P, RecoversTheTruthOnExactData) {
  SceneOptions o;
  o.noise_px = 0;
  o.num_points = 3;
  int found = 0;
  const int trials = 500;
  for (int t = 0; t < trials; ++t) {
    const auto s = testing::makePnPScene(o, 5000 + t);
    Vec3 y[3];
    for (int i = 0; i < 3; ++i) y[i] = s.cam.normalize(s.px[i]).homogeneous();
    std::vector<Pose> poses;
    const int n = p3pLambdaTwist(y, s.X.data(), &poses);
    ASSERT_LE(n, 4);
    double best = 1e9;
    for (const Pose& p : poses) {
      // Every solution maps the points onto their rays, in front of the camera.
      for (int i = 0; i < 3; ++i) {
        const Vec3 q = p.apply(s.X[i]);
        EXPECT_GT(q.z(), 0);
        EXPECT_LT(angleBetween(q, y[i]), 1e-6);
      }
      EXPECT_NEAR((p.R * p.R.transpose() - Mat3::Identity()).norm(), 0, 1e-9);
      best = std::min(best, (p.R - s.pose.R).norm() + (p.t - s.pose.t).norm());
    }
    if (best < 1e-6) ++found;
  }
  EXPECT_GE(found, trials * 99 / 100) << "truth missed in " << trials - found << " of " << trials;
}

TEST(P3P, CollinearWorldPointsGiveNoSolution) {
  Vec3 y[3] = {{0, 0, 1}, {0.1, 0, 1}, {0.2, 0, 1}};
  Vec3 X[3] = {{0, 0, 5}, {1, 0, 5}, {2, 0, 5}};
  std::vector<Pose> poses;
  EXPECT_EQ(p3pLambdaTwist(y, X, &poses), 0);
}

}  // namespace
}  // namespace vidmap::geometry
