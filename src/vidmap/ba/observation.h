// One observation's residual and Jacobian (host and device): the reprojection error
// r = project(intr, R X + t) - observed, corrected by the robust loss, with the analytic
// Jacobian in the local (tangent) coordinates of each parameter block and Jacobi-scaled
// columns. This is the per-observation work that the CPU backend runs in OpenMP loops and the
// CUDA backend runs one thread per observation.
//
// Record layout per observation (doubles): r[2], Jp[2x3] (point), Jc[2xC] (camera side:
// rotation 3, translation 3, then the camera's intrinsics when C > 6), all row-major.
#pragma once

#include <cmath>

#include "vidmap/ba/camera_models.h"
#include "vidmap/ba/loss.h"
#include "vidmap/ba/rotation.h"
#include "vidmap/core/hd.h"

namespace vidmap::ba {

constexpr int recordSize(int C) { return 8 + 2 * C; }

VIDMAP_HD inline bool isFinite(double v) { return v - v == 0.0; }

template <RotationType R>
VIDMAP_HD inline void rotatePoint(const double* rot, const double* X, double* out, double* Rm,
                                  double* dRot) {
  if constexpr (R == RotationType::kAngleAxis)
    angleAxisRotate(rot, X, out, Rm, dRot);
  else
    quaternionRotate(rot, X, out, Rm, dRot);
}

// The residual (before the loss) of one observation. Returns false when it is not finite.
template <CameraModel M, RotationType R>
VIDMAP_HD inline bool reprojectionResidual(const double* rot, const double* t, const double* intr,
                                           const double* X, const double* xy, double* r) {
  double Pc[3], pix[2];
  rotatePoint<R>(rot, X, Pc, nullptr, nullptr);
  Pc[0] += t[0], Pc[1] += t[1], Pc[2] += t[2];
  Projection<M>::project(intr, Pc, pix, nullptr, nullptr);
  r[0] = pix[0] - xy[0];
  r[1] = pix[1] - xy[1];
  return isFinite(r[0]) && isFinite(r[1]);
}

// The cost 0.5 rho(|r|^2) of one observation, or +inf when the residual is not finite.
template <CameraModel M, RotationType R>
VIDMAP_HD inline double observationCost(const LossParams& L, const double* rot, const double* t,
                                        const double* intr, const double* X, const double* xy) {
  double r[2];
  if (!reprojectionResidual<M, R>(rot, t, intr, X, xy, r)) return HUGE_VAL;
  return lossCost(L, r[0], r[1]);
}

// Writes the record (see above) of one observation with C camera-side columns; column c of Jc
// is multiplied by scaleC[c] and column c of Jp by scaleP[c] (0 removes a constant coordinate).
// Returns the cost 0.5 rho(|r|^2), or +inf when anything is not finite. Camera false: the
// image's columns are all constant (scaleC all 0), and Jc is written as zeros without being
// evaluated (a local window's constant images hold about half of its observations).
template <CameraModel M, RotationType R, int C, bool Camera = true>
VIDMAP_HD inline double evaluateObservation(const LossParams& L, const double* rot, const double* t,
                                            const double* intr, const double* X, const double* xy,
                                            const double* scaleC, const double* scaleP,
                                            double* rec) {
  constexpr int K = Projection<M>::kParams;
  static_assert(C == kPoseDims || C == kPoseDims + K, "camera-side columns: pose, or pose+intr");
  double Pc[3], Rm[9], dRot[9], pix[2], dPc[6], dI[2 * K];
  rotatePoint<R>(rot, X, Pc, Rm, Camera ? dRot : nullptr);
  Pc[0] += t[0], Pc[1] += t[1], Pc[2] += t[2];
  // The intrinsics' derivatives only when they are columns.
  Projection<M>::project(intr, Pc, pix, dPc, Camera && C > kPoseDims ? dI : nullptr);
  double* r = rec;
  double* Jp = rec + 2;
  double* Jc = rec + 8;
  r[0] = pix[0] - xy[0];
  r[1] = pix[1] - xy[1];
  for (int i = 0; i < 2; ++i) {
    const double* a = dPc + 3 * i;
    for (int j = 0; j < 3; ++j) {
      Jp[3 * i + j] = a[0] * Rm[j] + a[1] * Rm[3 + j] + a[2] * Rm[6 + j];
      if constexpr (Camera) {
        Jc[C * i + j] = a[0] * dRot[j] + a[1] * dRot[3 + j] + a[2] * dRot[6 + j];
        Jc[C * i + 3 + j] = a[j];
      }
    }
    if constexpr (Camera && C > kPoseDims)
      for (int j = 0; j < K; ++j) Jc[C * i + kPoseDims + j] = dI[K * i + j];
  }
  const LossCorrection k = lossCorrection(L, r[0], r[1]);
  correctJacobian(k, r, Jp, 3);
  if constexpr (Camera) correctJacobian(k, r, Jc, C);
  correctResidual(k, r);
  bool finite = isFinite(k.cost);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      Jp[3 * i + j] *= scaleP[j];
      finite = finite && isFinite(Jp[3 * i + j]);
    }
    for (int j = 0; j < C; ++j) {
      if constexpr (Camera) {
        Jc[C * i + j] *= scaleC[j];
        finite = finite && isFinite(Jc[C * i + j]);
      } else {
        Jc[C * i + j] = 0.0;
      }
    }
  }
  finite = finite && isFinite(r[0]) && isFinite(r[1]);
  return finite ? k.cost : HUGE_VAL;
}

}  // namespace vidmap::ba
