// Robust losses rho(s) of the squared residual norm s, with rho' and rho'', exactly as Ceres
// defines them (include/ceres/loss_function.h), and the residual/Jacobian correction of Triggs
// et al., "Bundle Adjustment - A Modern Synthesis" (2000), section 4.3, in the clamped form of
// Ceres' corrector.cc: with rho'' <= 0 (every loss here outside the inlier core) the residual
// and the Jacobian are only scaled by sqrt(rho'). Host and device.
#pragma once

#include <cfloat>
#include <cmath>

#include "vidmap/ba/types.h"
#include "vidmap/core/hd.h"

namespace vidmap::ba {

struct LossParams {
  LossType type = LossType::kTrivial;
  double a = 1.0;  // Ceres' scale a
  double b = 1.0;  // a^2
  double c = 1.0;  // 1 / a^2
};

inline LossParams makeLoss(LossType type, double a) {
  LossParams p;
  p.type = type;
  p.a = a;
  p.b = a * a;
  p.c = 1.0 / p.b;
  return p;
}

VIDMAP_HD inline void evaluateLoss(const LossParams& L, double s, double* rho) {
  switch (L.type) {
    case LossType::kTrivial:
      rho[0] = s, rho[1] = 1.0, rho[2] = 0.0;
      return;
    case LossType::kHuber:
      if (s > L.b) {
        const double r = sqrt(s);
        rho[0] = 2.0 * L.a * r - L.b;
        rho[1] = fmax(DBL_MIN, L.a / r);
        rho[2] = -rho[1] / (2.0 * s);
      } else {
        rho[0] = s, rho[1] = 1.0, rho[2] = 0.0;
      }
      return;
    case LossType::kSoftL1: {
      const double sum = 1.0 + s * L.c;
      const double tmp = sqrt(sum);
      rho[0] = 2.0 * L.b * (tmp - 1.0);
      rho[1] = fmax(DBL_MIN, 1.0 / tmp);
      rho[2] = -(L.c * rho[1]) / (2.0 * sum);
      return;
    }
    case LossType::kCauchy: {
      const double sum = 1.0 + s * L.c;
      const double inv = 1.0 / sum;
      rho[0] = L.b * log(sum);
      rho[1] = fmax(DBL_MIN, inv);
      rho[2] = -L.c * (inv * inv);
      return;
    }
  }
}

// The correction of one residual: cost = 0.5 rho(|r|^2); the Jacobian rows become
// sqrtRho1 (J - alphaSqNorm r r^T J) and the residual residualScaling * r (Ceres' corrector.cc).
struct LossCorrection {
  double cost = 0.0;
  double sqrtRho1 = 1.0;
  double residualScaling = 1.0;
  double alphaSqNorm = 0.0;
  bool trivial = true;
};

VIDMAP_HD inline LossCorrection lossCorrection(const LossParams& L, double r0, double r1) {
  LossCorrection k;
  const double s = r0 * r0 + r1 * r1;
  if (L.type == LossType::kTrivial) {
    k.cost = 0.5 * s;
    return k;
  }
  double rho[3] = {0.0, 1.0, 0.0};
  evaluateLoss(L, s, rho);
  k.trivial = false;
  k.cost = 0.5 * rho[0];
  k.sqrtRho1 = sqrt(rho[1]);
  k.residualScaling = k.sqrtRho1;
  if (s != 0.0 && rho[2] > 0.0) {
    const double D = 1.0 + 2.0 * s * rho[2] / rho[1];
    const double alpha = 1.0 - sqrt(D);
    k.residualScaling = k.sqrtRho1 / (1.0 - alpha);
    k.alphaSqNorm = alpha / s;
  }
  return k;
}

// Corrects a 2 x cols row-major Jacobian block with the uncorrected residual r.
VIDMAP_HD inline void correctJacobian(const LossCorrection& k, const double* r, double* J,
                                      int cols) {
  if (k.trivial) return;
  for (int c = 0; c < cols; ++c) {
    double& j0 = J[c];
    double& j1 = J[cols + c];
    if (k.alphaSqNorm == 0.0) {
      j0 *= k.sqrtRho1;
      j1 *= k.sqrtRho1;
    } else {
      const double rtj = j0 * r[0] + j1 * r[1];
      j0 = k.sqrtRho1 * (j0 - k.alphaSqNorm * r[0] * rtj);
      j1 = k.sqrtRho1 * (j1 - k.alphaSqNorm * r[1] * rtj);
    }
  }
}

VIDMAP_HD inline void correctResidual(const LossCorrection& k, double* r) {
  if (k.trivial) return;
  r[0] *= k.residualScaling;
  r[1] *= k.residualScaling;
}

// The cost 0.5 rho(|r|^2) alone.
VIDMAP_HD inline double lossCost(const LossParams& L, double r0, double r1) {
  const double s = r0 * r0 + r1 * r1;
  if (L.type == LossType::kTrivial) return 0.5 * s;
  double rho[3] = {0.0, 1.0, 0.0};
  evaluateLoss(L, s, rho);
  return 0.5 * rho[0];
}

}  // namespace vidmap::ba
