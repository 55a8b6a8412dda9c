#include "vidmap/ba/rotation.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>

namespace vidmap::ba {
namespace {

TEST(Rotation, AngleAxisMatchesEigen) {
  std::mt19937 rng(3);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int n = 0; n < 100; ++n) {
    const Eigen::Vector3d w(g(rng), g(rng), g(rng)), X(g(rng), g(rng), g(rng));
    double out[3], R[9];
    angleAxisRotate(w.data(), X.data(), out, R, nullptr);
    const Eigen::Matrix3d Re = Eigen::AngleAxisd(w.norm(), w.normalized()).toRotationMatrix();
    const Eigen::Vector3d ref = Re * X;
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(out[k], ref[k], 1e-12);
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(R[k], Re(k / 3, k % 3), 1e-12);
  }
}

TEST(Rotation, AngleAxisJacobianMatchesDifferencesAtAllAngles) {
  // Large, small (series branch) and tiny (first-order branch) angles.
  for (double scale : {2.0, 1e-3, 3e-5, 1e-9}) {
    const double w[3] = {0.3 * scale, -0.5 * scale, 0.8 * scale}, X[3] = {0.7, -1.2, 2.5};
    double out[3], dw[9];
    angleAxisRotate(w, X, out, nullptr, dw);
    for (int j = 0; j < 3; ++j) {
      const double h = 1e-6;
      double wp[3] = {w[0], w[1], w[2]}, wm[3] = {w[0], w[1], w[2]}, op[3], om[3];
      wp[j] += h, wm[j] -= h;
      angleAxisRotate(wp, X, op, nullptr, nullptr);
      angleAxisRotate(wm, X, om, nullptr, nullptr);
      for (int i = 0; i < 3; ++i)
        EXPECT_NEAR(dw[3 * i + j], (op[i] - om[i]) / (2 * h), 1e-7) << scale;
    }
  }
}

TEST(Rotation, QuaternionRotateNormalisesAndMatchesEigen) {
  const Eigen::Quaterniond q = Eigen::Quaterniond(0.3, -0.4, 0.5, 0.6).normalized();
  const double qs[4] = {2 * q.w(), 2 * q.x(), 2 * q.y(), 2 * q.z()};  // not unit on purpose
  const double X[3] = {1.0, 2.0, -3.0};
  double out[3];
  quaternionRotate(qs, X, out, nullptr, nullptr);
  const Eigen::Vector3d ref = q * Eigen::Vector3d(1.0, 2.0, -3.0);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(out[k], ref[k], 1e-12);
}

TEST(Rotation, QuaternionPlusRotatesByTwiceTheDelta) {
  // Ceres' QuaternionManifold: exp(delta) = [cos|d|, sin|d| d/|d|], a rotation by 2|d|.
  const double q[4] = {1, 0, 0, 0}, d[3] = {0, 0, 0.1};
  double out[4];
  quaternionPlus(q, d, out);
  const Eigen::Quaterniond e(out[0], out[1], out[2], out[3]);
  EXPECT_NEAR(Eigen::AngleAxisd(e).angle(), 0.2, 1e-14);
}

}  // namespace
}  // namespace vidmap::ba
