// The analytic Jacobians of every camera model and rotation against central differences of the
// residual, through the manifold update of each block.
#include <gtest/gtest.h>

#include <cmath>

#include "vidmap/ba/dispatch.h"
#include "vidmap/ba/observation.h"
#include "vidmap/ba/problem.h"
#include "vidmap/ba/update.h"

namespace vidmap::ba {
namespace {

template <CameraModel M, RotationType R>
void checkJacobian() {
  constexpr int K = Projection<M>::kParams;
  constexpr int C = kPoseDims + K;
  const bool bal = M == CameraModel::kBal;
  double rot[4] = {0.2, -0.3, 0.1, 0.0};
  if (R == RotationType::kQuaternion) rot[0] = 0.9, rot[1] = 0.1, rot[2] = -0.2, rot[3] = 0.3;
  double t[3] = {0.1, -0.2, bal ? -5.0 : 5.0};
  double intr[5] = {500, 320, 240, -0.1, 0.03};
  if (M == CameraModel::kPinhole) intr[1] = 510, intr[2] = 320, intr[3] = 240;
  if (bal) intr[0] = 500, intr[1] = -0.1, intr[2] = 0.03;
  double X[3] = {0.4, -0.3, 0.5};
  const double xy[2] = {100.0, 80.0};
  double ones[C], onesP[3] = {1, 1, 1};
  for (double& v : ones) v = 1.0;
  double rec[recordSize(C)];
  const LossParams L;
  ASSERT_TRUE(
      std::isfinite(evaluateObservation<M, R, C>(L, rot, t, intr, X, xy, ones, onesP, rec)));
  auto residual = [&](const double* ro, const double* tt, const double* in, const double* P,
                      double* r) { reprojectionResidual<M, R>(ro, tt, in, P, xy, r); };
  const double h = 1e-6;
  for (int c = 0; c < C; ++c) {
    double rp[2], rm[2];
    double ro[2][4], tt[2][3], in[2][5];
    for (int s = 0; s < 2; ++s) {
      std::copy(rot, rot + 4, ro[s]);
      std::copy(t, t + 3, tt[s]);
      std::copy(intr, intr + 5, in[s]);
      const double step = s == 0 ? h : -h;
      if (c < 3) {
        double d[3] = {0, 0, 0};
        d[c] = step;
        plusRotation<R>(rot, d, ro[s]);
      } else if (c < 6) {
        tt[s][c - 3] += step * 1e2;
      } else {
        in[s][c - 6] += step * (c == 6 ? 1e3 : 1.0);
      }
    }
    residual(ro[0], tt[0], in[0], X, rp);
    residual(ro[1], tt[1], in[1], X, rm);
    const double hh = 2 * h * (c >= 3 && c < 6 ? 1e2 : (c == 6 ? 1e3 : 1.0));
    for (int i = 0; i < 2; ++i) {
      const double num = (rp[i] - rm[i]) / hh;
      EXPECT_NEAR(rec[8 + C * i + c], num, 1e-5 * (1.0 + std::fabs(num)))
          << modelName(M) << " column " << c << " row " << i;
    }
  }
  for (int c = 0; c < 3; ++c) {
    double Xp[3] = {X[0], X[1], X[2]}, Xm[3] = {X[0], X[1], X[2]}, rp[2], rm[2];
    Xp[c] += h, Xm[c] -= h;
    residual(rot, t, intr, Xp, rp);
    residual(rot, t, intr, Xm, rm);
    for (int i = 0; i < 2; ++i)
      EXPECT_NEAR(rec[2 + 3 * i + c], (rp[i] - rm[i]) / (2 * h),
                  1e-5 * (1.0 + std::fabs(rec[2 + 3 * i + c])));
  }
}

TEST(CameraModels, AnalyticJacobiansMatchCentralDifferences) {
  for (auto r : {RotationType::kAngleAxis, RotationType::kQuaternion})
    for (auto m : {CameraModel::kSimplePinhole, CameraModel::kPinhole, CameraModel::kSimpleRadial,
                   CameraModel::kRadial, CameraModel::kBal})
      dispatchModel(m, r, [](auto mt, auto rt) {
        checkJacobian<decltype(mt)::value, decltype(rt)::value>();
      });
}

TEST(CameraModels, BalLooksDownNegativeZ) {
  // A point 5 in front of a BAL camera (z = -5) at x = 1 projects to -f * (-1/-5) = f/5... with
  // p = -P/P.z = (0.2, 0): px = f * 0.2.
  const double intr[3] = {500, 0, 0}, P[3] = {1, 0, -5};
  double pix[2];
  Projection<CameraModel::kBal>::project(intr, P, pix, nullptr, nullptr);
  EXPECT_DOUBLE_EQ(pix[0], 100.0);
  EXPECT_DOUBLE_EQ(pix[1], 0.0);
}

}  // namespace
}  // namespace vidmap::ba
