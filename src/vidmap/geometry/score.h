// Per-(model, correspondence) residuals and the MSAC cost, shared by the CPU RANSAC loop, the
// CPU batched scorer and the CUDA scorer (one source for host and device; no CUDA types here).
// Models are row-major doubles: 3x3 (E, F, H) or 3x4 (a projection P = [R | t]).
// MSAC: P. Torr and A. Zisserman, "MLESAC: A new robust estimator with application to
// estimating image geometry", CVIU 78(1), 2000 (the truncated quadratic cost).
#pragma once

#include "vidmap/core/hd.h"

namespace vidmap::geometry {

// A residual that counts as an outlier in every threshold (degenerate model or point).
constexpr double kHugeResidual = 1e300;

// Squared Sampson distance of (x1, y1) <-> (x2, y2) to the epipolar model M (E or F) with
// (x2, y2, 1) M (x1, y1, 1)^T = 0 (in the units of the points).
VIDMAP_HD inline double sampsonSq(const double* M, double x1, double y1, double x2, double y2) {
  const double a0 = M[0] * x1 + M[1] * y1 + M[2];
  const double a1 = M[3] * x1 + M[4] * y1 + M[5];
  const double a2 = M[6] * x1 + M[7] * y1 + M[8];
  const double b0 = M[0] * x2 + M[3] * y2 + M[6];
  const double b1 = M[1] * x2 + M[4] * y2 + M[7];
  const double c = x2 * a0 + y2 * a1 + a2;
  const double den = a0 * a0 + a1 * a1 + b0 * b0 + b1 * b1;
  if (!(den > 0)) return kHugeResidual;
  return c * c / den;
}

// Squared transfer error |H p1 - p2|^2 in image 2 (COLMAP's homography residual).
VIDMAP_HD inline double homographySq(const double* H, double x1, double y1, double x2, double y2) {
  const double w = H[6] * x1 + H[7] * y1 + H[8];
  if (!(w != 0)) return kHugeResidual;
  const double u = (H[0] * x1 + H[1] * y1 + H[2]) / w - x2;
  const double v = (H[3] * x1 + H[4] * y1 + H[5]) / w - y2;
  return u * u + v * v;
}

// Squared reprojection error of world point (X, Y, Z) in the 3x4 projection P against (u, v);
// a point on or behind the camera is an outlier.
VIDMAP_HD inline double reprojectionSq(const double* P, double X, double Y, double Z, double u,
                                       double v) {
  const double z = P[8] * X + P[9] * Y + P[10] * Z + P[11];
  if (!(z > 0)) return kHugeResidual;
  const double du = (P[0] * X + P[1] * Y + P[2] * Z + P[3]) / z - u;
  const double dv = (P[4] * X + P[5] * Y + P[6] * Z + P[7]) / z - v;
  return du * du + dv * dv;
}

// MSAC's truncated quadratic cost.
VIDMAP_HD inline double msacCost(double r2, double t2) { return r2 < t2 ? r2 : t2; }

// The kinds of hypotheses a batched scorer knows, and their data layouts:
// kEpipolar (Sampson, 3x3 model) and kHomography (transfer, 3x3): points (x1, y1, x2, y2);
// kProjection (reprojection, 3x4 model): points (X, Y, Z, u, v).
enum class ModelKind : int { kEpipolar = 0, kHomography = 1, kProjection = 2 };

VIDMAP_HD inline int modelStride(ModelKind k) { return k == ModelKind::kProjection ? 12 : 9; }
VIDMAP_HD inline int pointStride(ModelKind k) { return k == ModelKind::kProjection ? 5 : 4; }

// The residual of one (model, point) pair of a batch: the unit every scorer shares.
VIDMAP_HD inline double batchResidualSq(ModelKind k, const double* model, const double* p) {
  switch (k) {
    case ModelKind::kEpipolar:
      return sampsonSq(model, p[0], p[1], p[2], p[3]);
    case ModelKind::kHomography:
      return homographySq(model, p[0], p[1], p[2], p[3]);
    default:
      return reprojectionSq(model, p[0], p[1], p[2], p[3], p[4]);
  }
}

}  // namespace vidmap::geometry
