// Self-calibration of the focal length from two-view models made from known cameras: pure
// rotations (H = K R K^-1) and general motion (F = K^-T [t]x R K^-1), with the minimum found
// and reported at the range's end when the truth lies outside the search range; the calibrated
// profile (profileFocal) on matches projected here from known cameras and points.
#include "vidmap/sfm/focal_estimation.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>

#include "vidmap/geometry/homography_4pt.h"

namespace vidmap::sfm {
namespace {

Eigen::Matrix3d intrinsics(double f) {
  Eigen::Matrix3d K;
  K << f, 0, 320, 0, f, 240, 0, 0, 1;
  return K;
}

Eigen::Matrix3d randomRotation(std::mt19937& rng, double maxAngle) {
  std::uniform_real_distribution<double> u(-1, 1);
  return Eigen::AngleAxisd(maxAngle * u(rng), Eigen::Vector3d(u(rng), u(rng), u(rng)).normalized())
      .toRotationMatrix();
}

FocalObservation rotation(double f, const Eigen::Matrix3d& R) {
  FocalObservation o;
  o.kind = FocalObservation::kRotation;
  const Eigen::Matrix3d K = intrinsics(f);
  o.M = K * R * K.inverse();
  o.weight = 100;
  return o;
}

FocalObservation fundamental(double f, const Eigen::Matrix3d& R, const Eigen::Vector3d& t) {
  FocalObservation o;
  o.kind = FocalObservation::kFundamental;
  Eigen::Matrix3d tx;
  tx << 0, -t.z(), t.y(), t.z(), 0, -t.x(), -t.y(), t.x(), 0;
  const Eigen::Matrix3d Kinv = intrinsics(f).inverse();
  o.M = Kinv.transpose() * tx * R * Kinv;
  o.weight = 100;
  return o;
}

TEST(FocalEstimation, RotationsAndParallaxRecoverTheFocalLength) {
  std::mt19937 rng(3);
  for (double f : {300.0, 525.0, 1100.0}) {
    std::vector<FocalObservation> rot, par;
    for (int k = 0; k < 3; ++k) {
      rot.push_back(rotation(f, randomRotation(rng, 0.2)));
      par.push_back(fundamental(f, randomRotation(rng, 0.1),
                                Eigen::Vector3d(1, 0.2 * k - 0.2, 0.1).normalized()));
    }
    for (const auto* obs : {&rot, &par}) {
      const auto e = estimateFocal(*obs, 320, 240, 0.3 * 640, 3.0 * 640);
      ASSERT_TRUE(e.has_value());
      EXPECT_NEAR(e->focal, f, 0.005 * f) << (obs == &rot ? "rotations" : "parallax");
      EXPECT_FALSE(e->atBoundary);
      EXPECT_GT(e->sharpness, 2.0);
    }
  }
}

// A truth below the range: the best focal length is the range's lower end, flagged as such
// (the mapper keeps its initial guess then).
TEST(FocalEstimation, ATruthOutsideTheRangeIsFlagged) {
  std::mt19937 rng(4);
  std::vector<FocalObservation> obs;
  for (int k = 0; k < 3; ++k) obs.push_back(rotation(120, randomRotation(rng, 0.2)));
  const auto e = estimateFocal(obs, 320, 240, 0.3 * 640, 3.0 * 640);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->atBoundary);
  EXPECT_NEAR(e->focal, 0.3 * 640, 0.02 * 0.3 * 640);
  EXPECT_FALSE(estimateFocal({}, 320, 240, 100, 1000).has_value());
}

// Views of a pan walked sideways, as the synthetic pan: view k yawed by k * yawDeg and moved
// k * step along the first view's x axis, points 2-6 m deep, pixels with Gaussian noise (sigma px).
struct PanViews {
  std::vector<Eigen::Matrix3d> R;  // world -> camera
  std::vector<Eigen::Vector3d> C;  // centres
  std::vector<Eigen::Vector3d> X;  // points
};

PanViews panViews(int n, double yawDeg, double step, std::mt19937& rng) {
  PanViews v;
  for (int k = 0; k < n; ++k) {
    v.R.push_back(Eigen::AngleAxisd(k * yawDeg * M_PI / 180, Eigen::Vector3d::UnitY())
                      .toRotationMatrix()
                      .transpose());
    v.C.push_back(Eigen::Vector3d(k * step, 0, 0));
  }
  std::uniform_real_distribution<double> u(-1, 1), depth(2, 6);
  for (int i = 0; i < 3000; ++i) {
    const double z = depth(rng);
    v.X.push_back(Eigen::Vector3d(u(rng) * 1.2 * z, u(rng) * 0.6 * z, z));
  }
  return v;
}

// The matches of views a and b that both see, in pixels at focal f.
FocalPair project(const PanViews& v, int a, int b, double f, double sigma, std::mt19937& rng) {
  std::normal_distribution<double> noise(0, sigma);
  FocalPair p;
  for (const auto& X : v.X) {
    Eigen::Vector2d q[2];
    bool seen = true;
    for (int k = 0; k < 2; ++k) {
      const int view = k == 0 ? a : b;
      const Eigen::Vector3d x = v.R[view] * (X - v.C[view]);
      q[k] = Eigen::Vector2d(f * x.x() / x.z() + 320 + noise(rng),
                             f * x.y() / x.z() + 240 + noise(rng));
      seen =
          seen && x.z() > 0 && q[k].x() >= 0 && q[k].x() < 640 && q[k].y() >= 0 && q[k].y() < 480;
    }
    if (!seen) continue;
    p.p1.push_back(q[0]);
    p.p2.push_back(q[1]);
  }
  p.relative.R = v.R[b] * v.R[a].transpose();  // the rotation known, the translation not
  return p;
}

// A pan walked sideways (7 degrees and 4 cm between views, points 2-6 m deep): the homographies
// of its pairs, read as rotations, give a lens that is too long (the translation taken for more
// rotation); the calibrated profile of the same matches finds the focal length from either side.
TEST(FocalProfile, APanWalkedSidewaysIsNotReadAsALongerLens) {
  std::mt19937 rng(12);
  const double f = 554.26;
  const PanViews v = panViews(3, 7, 0.04, rng);
  std::vector<FocalPair> pairs;
  std::vector<FocalObservation> homographies;
  for (const auto& [a, b] : {std::pair{0, 1}, {1, 2}, {0, 2}}) {
    pairs.push_back(project(v, a, b, f, 0.3, rng));
    FocalObservation o;
    o.kind = FocalObservation::kRotation;
    ASSERT_TRUE(geometry::homographyDlt(pairs.back().p1.data(), pairs.back().p2.data(),
                                        static_cast<int>(pairs.back().p1.size()), &o.M));
    homographies.push_back(o);
  }
  const auto h = estimateFocal(homographies, 320, 240, 0.3 * 640, 3.0 * 640);
  ASSERT_TRUE(h.has_value());
  EXPECT_GT(std::abs(h->focal - f), 0.015 * f) << "the homographies: " << h->focal;
  for (double start : {h->focal, 0.97 * f, 1.03 * f}) {
    const auto p = profileFocal(pairs, 320, 240, start, start / 1.25, start * 1.25);
    ASSERT_TRUE(p.has_value());
    EXPECT_FALSE(p->atBoundary);
    EXPECT_NEAR(p->focal, f, 0.005 * f) << "from " << start;
    EXPECT_GT(p->ratio, 6.63) << "from " << start;  // the start rejected
  }
}

// A pure rotation (no translation at all) also fits E = [t]x R only at the true focal length.
TEST(FocalProfile, APureRotationFindsTheFocalLength) {
  std::mt19937 rng(13);
  const double f = 417.0;
  const PanViews v = panViews(3, 10, 0.0, rng);
  std::vector<FocalPair> pairs;
  for (const auto& [a, b] : {std::pair{0, 1}, {1, 2}})
    pairs.push_back(project(v, a, b, f, 0.3, rng));
  const auto p = profileFocal(pairs, 320, 240, 1.03 * f, 0.8 * f, 1.3 * f);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->atBoundary);
  EXPECT_NEAR(p->focal, f, 0.005 * f);
  EXPECT_FALSE(profileFocal({}, 320, 240, f, 0.8 * f, 1.2 * f).has_value());
  EXPECT_FALSE(profileFocal(pairs, 320, 240, 2 * f, 0.8 * f, 1.2 * f).has_value());
}

}  // namespace
}  // namespace vidmap::sfm
