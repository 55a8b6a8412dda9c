// Self-calibration of the focal length from two-view models made from known cameras: pure
// rotations (H = K R K^-1) and general motion (F = K^-T [t]x R K^-1), with the minimum found
// and reported at the range's end when the truth lies outside the search range.
#include "vidmap/sfm/focal_estimation.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>

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

}  // namespace
}  // namespace vidmap::sfm
