#include "vidmap/ba/loss.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vidmap::ba {
namespace {

double closedForm(LossType t, double a, double s) {
  const double b = a * a;
  switch (t) {
    case LossType::kTrivial:
      return s;
    case LossType::kHuber:
      return s <= b ? s : 2 * a * std::sqrt(s) - b;
    case LossType::kCauchy:
      return b * std::log1p(s / b);
    case LossType::kSoftL1:
      return 2 * b * (std::sqrt(1 + s / b) - 1);
  }
  return 0;
}

TEST(Loss, ValuesAndDerivativesMatchCeresDefinitions) {
  for (auto t : {LossType::kTrivial, LossType::kHuber, LossType::kCauchy, LossType::kSoftL1})
    for (double a : {0.5, 1.0, 3.0})
      for (double s : {0.01, 0.2, 1.0, 4.0, 50.0}) {
        const LossParams L = makeLoss(t, a);
        double rho[3] = {}, rp[3] = {}, rm[3] = {};
        evaluateLoss(L, s, rho);
        EXPECT_NEAR(rho[0], closedForm(t, a, s), 1e-12 * (1 + rho[0]));
        const double h = 1e-6 * s;
        evaluateLoss(L, s + h, rp);
        evaluateLoss(L, s - h, rm);
        if (t == LossType::kHuber && std::fabs(s - a * a) < 2 * h) continue;
        EXPECT_NEAR(rho[1], (rp[0] - rm[0]) / (2 * h), 1e-6);
        EXPECT_NEAR(rho[2], (rp[1] - rm[1]) / (2 * h), 1e-5 * (1 + std::fabs(rho[2])));
      }
}

TEST(Loss, CorrectedGradientIsTheRobustGradient) {
  // Triggs' correction keeps the gradient: J~' r~ = rho'(|r|^2) J' r.
  for (auto t : {LossType::kHuber, LossType::kCauchy, LossType::kSoftL1}) {
    const LossParams L = makeLoss(t, 1.5);
    double r[2] = {2.0, -1.0};
    double J[6] = {1, 2, 3, -1, 0.5, 4};  // 2 x 3
    double rho[3] = {};
    evaluateLoss(L, r[0] * r[0] + r[1] * r[1], rho);
    double want[3];
    for (int c = 0; c < 3; ++c) want[c] = rho[1] * (J[c] * r[0] + J[3 + c] * r[1]);
    const LossCorrection k = lossCorrection(L, r[0], r[1]);
    correctJacobian(k, r, J, 3);
    correctResidual(k, r);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(J[c] * r[0] + J[3 + c] * r[1], want[c], 1e-12);
    EXPECT_NEAR(k.cost, 0.5 * rho[0], 1e-15);
  }
}

TEST(Loss, HuberIsQuadraticInsideItsScale) {
  const LossParams L = makeLoss(LossType::kHuber, 2.0);
  const LossCorrection k = lossCorrection(L, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(k.cost, 1.0);
  EXPECT_DOUBLE_EQ(k.residualScaling, 1.0);
}

}  // namespace
}  // namespace vidmap::ba
