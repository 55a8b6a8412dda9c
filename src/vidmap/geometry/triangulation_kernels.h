// The per-track arithmetic of triangulateTrack (triangulation.h) as plain doubles, one source
// for the CPU (triangulateTrack, triangulateBatch) and the CUDA kernel
// (triangulation_batch_cuda.h); no Eigen and no CUDA types here.
// - Two views: Lindstrom's niter2 correction onto the epipolar constraint (P. Lindstrom,
//   "Triangulation made easy", CVPR 2010), then the midpoint of the corrected rays; the
//   operations in the order of the Eigen expressions of triangulateOptimal, so the point is
//   that function's bit for bit (triangulation_batch_test checks it).
// - Several views: the linear method (R. Hartley and A. Zisserman, Multiple View Geometry,
//   section 12.2) on the normalised rows, summed as triangulateDlt sums them. The null vector
//   of the 4x4 normal matrix: on the host Eigen's SelfAdjointEigenSolver, as triangulateDlt
//   (so the CPU keeps the models it made before); on the device cyclic Jacobi rotations
//   (G. Golub and C. Van Loan, Matrix Computations, section 8.5), equal to it up to rounding
//   (about eps / eigenvalue gap).
// - Checks: positive depth, the largest reprojection error, the largest angle between two rays
//   (acos of the smallest clamped cosine: acos is monotone, so this is the largest of the
//   pairs' angles exactly; the device's acos may differ from glibc's in the last bit).
#pragma once

#include <math.h>

#include "vidmap/core/hd.h"

namespace vidmap::geometry::tri {

// A view of a batch: R (row-major), t, then the pinhole fx, fy, cx, cy.
constexpr int kViewStride = 16;

// The values of TriangulationStatus (triangulation.h; static_assert there).
enum : int {
  kStatusOk = 0,
  kStatusTooFewViews = 1,
  kStatusDegenerate = 2,
  kStatusBehindCamera = 3,
  kStatusLargeError = 4,
  kStatusSmallAngle = 5
};

struct TrackResult {
  int status;
  double X[3];
  double max_error_px;
  double angle_deg;
};

VIDMAP_HD inline bool finite(double v) { return v - v == 0.0; }

// Row i of a 3x3 (column-major in Eigen) times a column: Eigen sums rows 0 and 1 as one SIMD
// packet, left to right, and row 2 as a scalar reduction, a0 + (a1 + a2). Written the same
// way, so the two-view point is the Eigen form's bit for bit (triangulation_batch_test).
VIDMAP_HD inline double rowDot(int i, double a0, double a1, double a2, double b0, double b1,
                               double b2) {
  return i < 2 ? a0 * b0 + a1 * b1 + a2 * b2 : a0 * b0 + (a1 * b1 + a2 * b2);
}

// c = -R^T t.
VIDMAP_HD inline void center(const double* v, double* c) {
  for (int i = 0; i < 3; ++i) c[i] = -v[i] * v[9] + -v[3 + i] * v[10] + -v[6 + i] * v[11];
}

// The midpoint of the rays c1 + s r1 and c2 + u r2 (triangulateMidpoint); false when parallel.
VIDMAP_HD inline bool midpoint(const double* c1, const double* r1, const double* c2,
                               const double* r2, double* X) {
  const double a = r1[0] * r1[0] + r1[1] * r1[1] + r1[2] * r1[2];
  const double b = r1[0] * r2[0] + r1[1] * r2[1] + r1[2] * r2[2];
  const double c = r2[0] * r2[0] + r2[1] * r2[1] + r2[2] * r2[2];
  const double w[3] = {c1[0] - c2[0], c1[1] - c2[1], c1[2] - c2[2]};
  const double d = r1[0] * w[0] + r1[1] * w[1] + r1[2] * w[2];
  const double e = r2[0] * w[0] + r2[1] * w[1] + r2[2] * w[2];
  const double den = a * c - b * b;
  if (!(den > 1e-14 * a * c)) return false;
  const double s = (b * e - c * d) / den, u = (a * e - b * d) / den;
  for (int i = 0; i < 3; ++i) X[i] = 0.5 * ((c1[i] + s * r1[i]) + (c2[i] + u * r2[i]));
  return finite(X[0]) && finite(X[1]) && finite(X[2]);
}

// The ray R^T (x, y, 1) of a view.
VIDMAP_HD inline void ray(const double* v, double x, double y, double* r) {
  for (int i = 0; i < 3; ++i) r[i] = v[i] * x + v[3 + i] * y + v[6 + i] * 1.0;
}

VIDMAP_HD inline bool midpointOfViews(const double* v1, const double* v2, double x1, double y1,
                                      double x2, double y2, double* X) {
  double c1[3], c2[3], r1[3], r2[3];
  center(v1, c1);
  center(v2, c2);
  ray(v1, x1, y1, r1);
  ray(v2, x2, y2, r2);
  return midpoint(c1, r1, c2, r2, X);
}

// Lindstrom's niter2 (correctToEpipolar) for E row-major.
VIDMAP_HD inline void correct(const double* E, double x1, double y1, double x2, double y2,
                              double* x1c, double* y1c, double* x2c, double* y2c) {
  double n1[2], n2[2];
  for (int j = 0; j < 2; ++j) n1[j] = E[j] * x2 + E[3 + j] * y2 + E[6 + j] * 1.0;
  for (int i = 0; i < 2; ++i) n2[i] = E[3 * i] * x1 + E[3 * i + 1] * y1 + E[3 * i + 2] * 1.0;
  double Eh1[3];
  for (int i = 0; i < 3; ++i) Eh1[i] = rowDot(i, E[3 * i], E[3 * i + 1], E[3 * i + 2], x1, y1, 1.0);
  const double c = x2 * Eh1[0] + y2 * Eh1[1] + 1.0 * Eh1[2];
  const double En1[2] = {E[0] * n1[0] + E[1] * n1[1], E[3] * n1[0] + E[4] * n1[1]};
  const double a = n2[0] * En1[0] + n2[1] * En1[1];
  const double b = 0.5 * ((n1[0] * n1[0] + n1[1] * n1[1]) + (n2[0] * n2[0] + n2[1] * n2[1]));
  const double disc = b * b - a * c;
  const double d = sqrt(disc > 0.0 ? disc : 0.0);
  double lambda = c / (b + d);
  if (!finite(lambda)) lambda = 0;
  const double d1[2] = {lambda * n1[0], lambda * n1[1]};
  const double d2[2] = {lambda * n2[0], lambda * n2[1]};
  n1[0] -= E[0] * d2[0] + E[3] * d2[1];
  n1[1] -= E[1] * d2[0] + E[4] * d2[1];
  n2[0] -= E[0] * d1[0] + E[1] * d1[1];
  n2[1] -= E[3] * d1[0] + E[4] * d1[1];
  const double nn = (n1[0] * n1[0] + n1[1] * n1[1]) + (n2[0] * n2[0] + n2[1] * n2[1]);
  if (nn > 0) lambda *= 2 * d / nn;
  *x1c = x1 - lambda * n1[0];
  *y1c = y1 - lambda * n1[1];
  *x2c = x2 - lambda * n2[0];
  *y2c = y2 - lambda * n2[1];
}

// triangulateOptimal: E of the relative pose view 1 -> view 2, the correction, the midpoint.
VIDMAP_HD inline bool optimal(const double* v1, const double* v2, double x1, double y1, double x2,
                              double y2, double* X) {
  double R[9], Rt1[3], t[3], E[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      R[3 * i + j] = rowDot(i, v2[3 * i], v2[3 * i + 1], v2[3 * i + 2], v1[3 * j], v1[3 * j + 1],
                            v1[3 * j + 2]);
  for (int i = 0; i < 3; ++i)
    Rt1[i] = rowDot(i, R[3 * i], R[3 * i + 1], R[3 * i + 2], v1[9], v1[10], v1[11]);
  for (int i = 0; i < 3; ++i) t[i] = v2[9 + i] - Rt1[i];
  const double S[9] = {0, -t[2], t[1], t[2], 0, -t[0], -t[1], t[0], 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      E[3 * i + j] = rowDot(i, S[3 * i], S[3 * i + 1], S[3 * i + 2], R[j], R[3 + j], R[6 + j]);
  double a, b, c, d;
  correct(E, x1, y1, x2, y2, &a, &b, &c, &d);
  if (!(finite(a) && finite(b) && finite(c) && finite(d)))
    return midpointOfViews(v1, v2, x1, y1, x2, y2, X);
  return midpointOfViews(v1, v2, a, b, c, d, X);
}

// The unit eigenvector of the smallest eigenvalue of the symmetric 4x4 A by Eigen's
// SelfAdjointEigenSolver (triangulation.cc): triangulateDlt's.
void smallestEigenvectorHost(const double A[4][4], double* h);

// The same by cyclic Jacobi sweeps (A overwritten); rotations that no longer change the
// diagonal are skipped, so it stops. The device's solver.
VIDMAP_HD inline void smallestEigenvectorJacobi(double A[4][4], double* h) {
  double V[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) V[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < 3; ++p)
      for (int q = p + 1; q < 4; ++q) {
        const double apq = A[p][q];
        const double g = 100.0 * fabs(apq);
        if (apq == 0.0) continue;
        if (fabs(A[p][p]) + g == fabs(A[p][p]) && fabs(A[q][q]) + g == fabs(A[q][q])) {
          A[p][q] = A[q][p] = 0.0;
          continue;
        }
        rotated = true;
        const double theta = (A[q][q] - A[p][p]) / (2.0 * apq);
        const double at = fabs(theta);
        double t = at > 1e150 ? 0.5 / at : 1.0 / (at + sqrt(theta * theta + 1.0));
        if (theta < 0) t = -t;
        const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < 4; ++k) {  // columns p, q
          const double akp = A[k][p], akq = A[k][q];
          A[k][p] = c * akp - s * akq;
          A[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 4; ++k) {  // rows p, q
          const double apk = A[p][k], aqk = A[q][k];
          A[p][k] = c * apk - s * aqk;
          A[q][k] = s * apk + c * aqk;
        }
        A[p][q] = A[q][p] = 0.0;
        for (int k = 0; k < 4; ++k) {
          const double vkp = V[k][p], vkq = V[k][q];
          V[k][p] = c * vkp - s * vkq;
          V[k][q] = s * vkp + c * vkq;
        }
      }
    if (!rotated) break;
  }
  int m = 0;
  for (int i = 1; i < 4; ++i)
    if (A[i][i] < A[m][m]) m = i;
  for (int k = 0; k < 4; ++k) h[k] = V[k][m];
}

// The linear triangulation of n >= 2 views (triangulateDlt's rows and test).
VIDMAP_HD inline bool dlt(const double* views, const int* view_of, const double* xn, int n,
                          double* X) {
  double A[4][4] = {};
  for (int i = 0; i < n; ++i) {
    const double* v = views + kViewStride * view_of[i];
    // Rows x P3 - P1 and y P3 - P2, each over its squared norm (Eigen's order: two packets).
    double r[2][4], sq[2];
    for (int row = 0; row < 2; ++row) {
      const double x = xn[2 * i + row];
      for (int k = 0; k < 3; ++k) r[row][k] = x * v[6 + k] - v[3 * row + k];
      r[row][3] = x * v[11] - v[9 + row];
      sq[row] = (r[row][0] * r[row][0] + r[row][2] * r[row][2]) +
                (r[row][1] * r[row][1] + r[row][3] * r[row][3]);
    }
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) A[a][b] += r[0][a] * r[0][b] / sq[0] + r[1][a] * r[1][b] / sq[1];
  }
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if (!finite(A[a][b])) return false;
  double h[4];
#if defined(VIDMAP_ON_DEVICE)
  smallestEigenvectorJacobi(A, h);
#else
  smallestEigenvectorHost(A, h);
#endif
  const double hn = sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
  if (fabs(h[3]) < 1e-12 * hn || h[3] == 0) return false;
  for (int k = 0; k < 3; ++k) X[k] = h[k] / h[3];
  return finite(X[0]) && finite(X[1]) && finite(X[2]);
}

// One track: n observations, view_of[i] indexing `views`, px[2 i .. 2 i + 1] its pixel;
// xn: scratch of 2 n doubles. The fields of TrackTriangulation, as triangulateTrack sets them.
VIDMAP_HD inline void triangulateTrack(const double* views, const int* view_of, const double* px,
                                       int n, double max_error_px, double min_angle_deg, double* xn,
                                       TrackResult* out) {
  out->status = kStatusDegenerate;
  out->X[0] = out->X[1] = out->X[2] = 0;
  out->max_error_px = 0;
  out->angle_deg = 0;
  if (n < 2) {
    out->status = kStatusTooFewViews;
    return;
  }
  for (int i = 0; i < n; ++i) {
    const double* v = views + kViewStride * view_of[i];
    bool ok = finite(px[2 * i]) && finite(px[2 * i + 1]);
    for (int k = 0; k < 12; ++k) ok = ok && finite(v[k]);
    if (!ok) return;
    xn[2 * i] = (px[2 * i] - v[14]) / v[12];
    xn[2 * i + 1] = (px[2 * i + 1] - v[15]) / v[13];
  }
  double X[3];
  const bool found = n == 2
                         ? optimal(views + kViewStride * view_of[0],
                                   views + kViewStride * view_of[1], xn[0], xn[1], xn[2], xn[3], X)
                         : dlt(views, view_of, xn, n, X);
  if (!found) return;
  for (int k = 0; k < 3; ++k) out->X[k] = X[k];
  for (int i = 0; i < n; ++i) {
    const double* v = views + kViewStride * view_of[i];
    double p[3];
    for (int r = 0; r < 3; ++r)
      p[r] = rowDot(r, v[3 * r], v[3 * r + 1], v[3 * r + 2], X[0], X[1], X[2]) + v[9 + r];
    if (!(p[2] > 1e-12 * sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]))) {
      out->status = kStatusBehindCamera;
      return;
    }
    const double du = (v[12] * (p[0] / p[2]) + v[14]) - px[2 * i];
    const double dv = (v[13] * (p[1] / p[2]) + v[15]) - px[2 * i + 1];
    const double e = sqrt(du * du + dv * dv);
    if (out->max_error_px < e) out->max_error_px = e;
  }
  // The smallest clamped cosine over the pairs of rays (std::min / std::max's NaN handling).
  double cmin = 1.0;
  for (int i = 0; i < n; ++i) {
    double ci[3];
    center(views + kViewStride * view_of[i], ci);
    const double a[3] = {X[0] - ci[0], X[1] - ci[1], X[2] - ci[2]};
    const double na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    for (int j = i + 1; j < n; ++j) {
      double cj[3];
      center(views + kViewStride * view_of[j], cj);
      const double b[3] = {X[0] - cj[0], X[1] - cj[1], X[2] - cj[2]};
      const double nb = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
      const double c = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (na * nb);
      const double lo = c < 1.0 ? c : 1.0;
      const double cl = -1.0 < lo ? lo : -1.0;
      if (cl < cmin) cmin = cl;
    }
  }
  out->angle_deg = acos(cmin) * 180.0 / 3.14159265358979323846;
  if (out->max_error_px > max_error_px)
    out->status = kStatusLargeError;
  else if (out->angle_deg < min_angle_deg)
    out->status = kStatusSmallAngle;
  else
    out->status = kStatusOk;
}

}  // namespace vidmap::geometry::tri
