// The Schur complement of the bundle adjustment normal equations, piece by piece (host and
// device). After Ceres' internal/ceres/schur_eliminator.h, written for one observation at a time.
//
// The Levenberg-Marquardt step solves the damped normal equations of the (Jacobi-scaled)
// Jacobian J = [F E] (F: camera-side columns, E: point columns) and residual r:
//
//   [ U + Df^2    W      ] [y_f]   [g_f]        U = F'F,  W = F'E,  V = E'E (block diagonal,
//   [ W'          V + De^2] [y_e] = [g_e],       one 3x3 block per point),  g = J'r,
//
// and the step is -y (Ceres solves J y = r). Eliminating the points, whose blocks are 3x3:
//
//   S y_f = g_f - W (V + De^2)^-1 g_e,     S = U + Df^2 - W (V + De^2)^-1 W',
//   y_e   = (V + De^2)^-1 (g_e - W' y_f).
//
// Per observation a (image i(a), point j(a)) with camera-side rows Jc_a (2 x C) and point rows
// Jp_a (2 x 3), and Vinv_j = (V_j + De_j^2)^-1, let P_a = Jp_a Vinv_j (2 x 3). Then the block of
// S between the camera-side columns of images i and k is
//
//   S_ik = sum over points j seen by both, a in (i, j), b in (k, j):
//            Jc_a' (delta_ab I - P_a Jp_b') Jc_b            (+ Df^2 on the diagonal)
//
// (delta_ab I gives U = sum Jc_a' Jc_a), the reduced right-hand side of image i is
//
//   b_i = sum over a in i: Jc_a' (r_a - P_a g_j),   g_j = sum over b in j: Jp_b' r_b,
//
// the back-substitution is y_j = Vinv_j (g_j - sum over a in j: Jp_a' Jc_a y_i(a)), and the
// product S x needed by conjugate gradients, without forming S, is
//
//   z_a = Jc_a x_i(a),  t_j = sum over a in j: P_a' z_a,  (S x)_i = sum over a in i:
//   Jc_a' (z_a - Jp_a t_j)  (+ Df^2 x_i).
//
// Each "camera side" here is the image's expanded column set (pose, then its camera's
// intrinsics); the host folds the columns of intrinsics shared by several images (structure.h).
#pragma once

#include <cmath>

#include "vidmap/ba/observation.h"
#include "vidmap/core/hd.h"

namespace vidmap::ba {

// Symmetric 3x3 stored as (00, 01, 02, 11, 12, 22).
VIDMAP_HD inline void accumulatePoint(const double* rec, double* V, double* g) {
  const double* r = rec;
  const double* Jp = rec + 2;
  V[0] += Jp[0] * Jp[0] + Jp[3] * Jp[3];
  V[1] += Jp[0] * Jp[1] + Jp[3] * Jp[4];
  V[2] += Jp[0] * Jp[2] + Jp[3] * Jp[5];
  V[3] += Jp[1] * Jp[1] + Jp[4] * Jp[4];
  V[4] += Jp[1] * Jp[2] + Jp[4] * Jp[5];
  V[5] += Jp[2] * Jp[2] + Jp[5] * Jp[5];
  g[0] += Jp[0] * r[0] + Jp[3] * r[1];
  g[1] += Jp[1] * r[0] + Jp[4] * r[1];
  g[2] += Jp[2] * r[0] + Jp[5] * r[1];
}

// Vinv (full 3x3, row-major) = (V + diag(d2))^-1 by Cholesky. Returns false when the matrix is
// not positive definite (or not finite).
VIDMAP_HD inline bool invertPoint(const double* V, const double* d2, double* Vinv) {
  const double a00 = V[0] + d2[0], a01 = V[1], a02 = V[2];
  const double a11 = V[3] + d2[1], a12 = V[4], a22 = V[5] + d2[2];
  if (!(a00 > 0.0)) return false;
  const double l00 = sqrt(a00);
  const double l10 = a01 / l00, l20 = a02 / l00;
  const double s11 = a11 - l10 * l10;
  if (!(s11 > 0.0)) return false;
  const double l11 = sqrt(s11);
  const double l21 = (a12 - l20 * l10) / l11;
  const double s22 = a22 - l20 * l20 - l21 * l21;
  if (!(s22 > 0.0)) return false;
  const double l22 = sqrt(s22);
  // L^-1 (lower triangular)
  const double i00 = 1.0 / l00, i11 = 1.0 / l11, i22 = 1.0 / l22;
  const double i10 = -l10 * i00 * i11;
  const double i21 = -l21 * i11 * i22;
  const double i20 = -(l20 * i00 + l21 * i10) * i22;
  // Vinv = L^-T L^-1
  Vinv[0] = i00 * i00 + i10 * i10 + i20 * i20;
  Vinv[1] = i10 * i11 + i20 * i21;
  Vinv[2] = i20 * i22;
  Vinv[4] = i11 * i11 + i21 * i21;
  Vinv[5] = i21 * i22;
  Vinv[8] = i22 * i22;
  Vinv[3] = Vinv[1], Vinv[6] = Vinv[2], Vinv[7] = Vinv[5];
  return isFinite(Vinv[0]) && isFinite(Vinv[4]) && isFinite(Vinv[8]);
}

// P = Jp Vinv (2x3).
VIDMAP_HD inline void pointProjector(const double* rec, const double* Vinv, double* P) {
  const double* Jp = rec + 2;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      P[3 * i + j] =
          Jp[3 * i] * Vinv[j] + Jp[3 * i + 1] * Vinv[3 + j] + Jp[3 * i + 2] * Vinv[6 + j];
}

// M (2 x 2) = delta_ab I - P_a Jp_b', the residual-space middle of one pair's share of S.
VIDMAP_HD inline void pairMiddle(const double* Pa, const double* recB, bool same, double* M) {
  const double* JpB = recB + 2;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k)
      M[2 * i + k] = -(Pa[3 * i] * JpB[3 * k] + Pa[3 * i + 1] * JpB[3 * k + 1] +
                       Pa[3 * i + 2] * JpB[3 * k + 2]);
  if (same) M[0] += 1.0, M[3] += 1.0;
}

// N (2 x C) = (delta_ab I - P_a Jp_b') Jc_b, the right factor of one pair's share of S.
template <int C>
VIDMAP_HD inline void pairFactor(const double* Pa, const double* recB, bool same, double* N) {
  const double* JcB = recB + 8;
  double M[4];
  pairMiddle(Pa, recB, same, M);
  for (int c = 0; c < C; ++c) {
    N[c] = M[0] * JcB[c] + M[1] * JcB[C + c];
    N[C + c] = M[2] * JcB[c] + M[3] * JcB[C + c];
  }
}

// B (C x C, row-major) += Jc_a' N. The CUDA segment kernel adds the same terms in the same
// order, one output element per thread.
template <int C>
VIDMAP_HD inline void accumulatePair(const double* recA, const double* Pa, const double* recB,
                                     bool same, double* B) {
  const double* JcA = recA + 8;
  double N[2 * C];
  pairFactor<C>(Pa, recB, same, N);
  for (int r = 0; r < C; ++r) {
    const double a0 = JcA[r], a1 = JcA[C + r];
    double* row = B + r * C;
    for (int c = 0; c < C; ++c) row[c] += a0 * N[c] + a1 * N[C + c];
  }
}

// In-place inverse of a small symmetric positive definite n x n matrix (row-major) by
// Cholesky; work holds n * n + n doubles. Returns false when it is not positive definite.
VIDMAP_HD inline bool invertSpd(double* A, int n, double* work) {
  // A = L L' with L in the lower triangle.
  for (int j = 0; j < n; ++j) {
    double d = A[j * n + j];
    for (int k = 0; k < j; ++k) d -= A[j * n + k] * A[j * n + k];
    if (!(d > 0.0)) return false;
    d = sqrt(d);
    A[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double v = A[i * n + j];
      for (int k = 0; k < j; ++k) v -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = v / d;
    }
  }
  // Column k of the inverse: L y = e_k, then L' x = y.
  double* W = work;
  double* y = work + n * n;
  for (int k = 0; k < n; ++k) {
    for (int i = 0; i < n; ++i) {
      double v = i == k ? 1.0 : 0.0;
      for (int m = 0; m < i; ++m) v -= A[i * n + m] * y[m];
      y[i] = v / A[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      double v = y[i];
      for (int m = i + 1; m < n; ++m) v -= A[m * n + i] * W[m * n + k];
      W[i * n + k] = v / A[i * n + i];
    }
  }
  for (int e = 0; e < n * n; ++e) A[e] = W[e];
  return true;
}

// Per-image sums of one observation: gradient Jc'r, squared column norms, and (with P) the
// reduced right-hand side Jc'(r - P g).
template <int C>
VIDMAP_HD inline void accumulateImageGradient(const double* rec, double* grad, double* colNorm) {
  const double* r = rec;
  const double* Jc = rec + 8;
  for (int c = 0; c < C; ++c) {
    grad[c] += Jc[c] * r[0] + Jc[C + c] * r[1];
    colNorm[c] += Jc[c] * Jc[c] + Jc[C + c] * Jc[C + c];
  }
}

template <int C>
VIDMAP_HD inline void accumulateReducedRhs(const double* rec, const double* P, const double* g,
                                           double* rhs) {
  const double* r = rec;
  const double* Jc = rec + 8;
  double v0 = r[0], v1 = r[1];
  if (P) {
    v0 -= P[0] * g[0] + P[1] * g[1] + P[2] * g[2];
    v1 -= P[3] * g[0] + P[4] * g[1] + P[5] * g[2];
  }
  for (int c = 0; c < C; ++c) rhs[c] += Jc[c] * v0 + Jc[C + c] * v1;
}

// z = Jc x (2-vector) for the image's expanded camera-side vector x.
template <int C>
VIDMAP_HD inline void cameraTimes(const double* rec, const double* x, double* z) {
  const double* Jc = rec + 8;
  double z0 = 0.0, z1 = 0.0;
  for (int c = 0; c < C; ++c) z0 += Jc[c] * x[c], z1 += Jc[C + c] * x[c];
  z[0] = z0, z[1] = z1;
}

// out += Jc' v for a 2-vector v.
template <int C>
VIDMAP_HD inline void cameraTransposeTimes(const double* rec, const double* v, double* out) {
  const double* Jc = rec + 8;
  for (int c = 0; c < C; ++c) out[c] += Jc[c] * v[0] + Jc[C + c] * v[1];
}

// Back-substitution accumulation: acc -= Jp' z, with z = Jc x (done by the caller).
VIDMAP_HD inline void pointTransposeTimes(const double* rec, const double* z, double* acc) {
  const double* Jp = rec + 2;
  acc[0] += Jp[0] * z[0] + Jp[3] * z[1];
  acc[1] += Jp[1] * z[0] + Jp[4] * z[1];
  acc[2] += Jp[2] * z[0] + Jp[5] * z[1];
}

VIDMAP_HD inline void sym3Times(const double* Vinv, const double* v, double* out) {
  for (int i = 0; i < 3; ++i)
    out[i] = Vinv[3 * i] * v[0] + Vinv[3 * i + 1] * v[1] + Vinv[3 * i + 2] * v[2];
}

// The observation's share of the model cost change m'(r - m/2) with m = J y (Ceres:
// -(J step)'(r + J step / 2) with step = -y).
template <int C>
VIDMAP_HD inline double modelCostChange(const double* rec, const double* yCam, const double* yPt) {
  const double* r = rec;
  const double* Jp = rec + 2;
  double m[2];
  cameraTimes<C>(rec, yCam, m);
  if (yPt) {
    m[0] += Jp[0] * yPt[0] + Jp[1] * yPt[1] + Jp[2] * yPt[2];
    m[1] += Jp[3] * yPt[0] + Jp[4] * yPt[1] + Jp[5] * yPt[2];
  }
  return m[0] * (r[0] - m[0] / 2.0) + m[1] * (r[1] - m[1] / 2.0);
}

}  // namespace vidmap::ba
