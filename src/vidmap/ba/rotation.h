// Rotations of the bundle adjuster, host and device: the angle-axis rotation written the way
// Ceres' rotation.h evaluates it (so BAL costs agree with Ceres to rounding), its Jacobian by
// the left Jacobian of SO(3) (Barfoot, "State Estimation for Robotics", eq. 7.86), and unit
// quaternions (w, x, y, z) with Ceres' QuaternionManifold update.
#pragma once

#include <cfloat>
#include <cmath>

#include "vidmap/core/hd.h"

namespace vidmap::ba {

// out = R(w) X. R is the 3x3 rotation (row-major) so that d out / d X = R.
// dw (optional, row-major 3x3) = d out / d w, the derivative in the additive angle-axis update.
VIDMAP_HD inline void angleAxisRotate(const double* w, const double* X, double* out, double* R,
                                      double* dw) {
  const double theta2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
  if (theta2 > DBL_EPSILON) {
    const double theta = sqrt(theta2);
    const double c = cos(theta), s = sin(theta);
    const double inv = 1.0 / theta;
    const double n[3] = {w[0] * inv, w[1] * inv, w[2] * inv};
    const double nx[3] = {n[1] * X[2] - n[2] * X[1], n[2] * X[0] - n[0] * X[2],
                          n[0] * X[1] - n[1] * X[0]};
    const double tmp = (n[0] * X[0] + n[1] * X[1] + n[2] * X[2]) * (1.0 - c);
    for (int i = 0; i < 3; ++i) out[i] = X[i] * c + nx[i] * s + n[i] * tmp;
    if (R) {
      const double oc = 1.0 - c;
      R[0] = c + n[0] * n[0] * oc;
      R[1] = n[0] * n[1] * oc - n[2] * s;
      R[2] = n[0] * n[2] * oc + n[1] * s;
      R[3] = n[1] * n[0] * oc + n[2] * s;
      R[4] = c + n[1] * n[1] * oc;
      R[5] = n[1] * n[2] * oc - n[0] * s;
      R[6] = n[2] * n[0] * oc - n[1] * s;
      R[7] = n[2] * n[1] * oc + n[0] * s;
      R[8] = c + n[2] * n[2] * oc;
    }
    if (dw) {
      // d(R X)/dw = -[R X]x J_l(w), J_l = I + a [w]x + b [w]x^2. The series avoids the
      // cancellation of 1 - cos and theta - sin at small angles.
      double a, b;
      if (theta < 1e-4) {
        a = 0.5 - theta2 / 24.0 + theta2 * theta2 / 720.0;
        b = 1.0 / 6.0 - theta2 / 120.0 + theta2 * theta2 / 5040.0;
      } else {
        a = (1.0 - c) / theta2;
        b = (theta - s) / (theta2 * theta);
      }
      double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
      double J[9];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          double w2 = W[i * 3 + 0] * W[0 * 3 + j] + W[i * 3 + 1] * W[1 * 3 + j] +
                      W[i * 3 + 2] * W[2 * 3 + j];
          J[i * 3 + j] = (i == j ? 1.0 : 0.0) + a * W[i * 3 + j] + b * w2;
        }
      const double y[3] = {out[0], out[1], out[2]};
      const double Y[9] = {0, -y[2], y[1], y[2], 0, -y[0], -y[1], y[0], 0};
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          dw[i * 3 + j] = -(Y[i * 3 + 0] * J[0 * 3 + j] + Y[i * 3 + 1] * J[1 * 3 + j] +
                            Y[i * 3 + 2] * J[2 * 3 + j]);
    }
  } else {
    // First order, as Ceres evaluates (and differentiates) it near zero.
    const double nx[3] = {w[1] * X[2] - w[2] * X[1], w[2] * X[0] - w[0] * X[2],
                          w[0] * X[1] - w[1] * X[0]};
    for (int i = 0; i < 3; ++i) out[i] = X[i] + nx[i];
    if (R) {
      R[0] = 1;
      R[1] = -w[2];
      R[2] = w[1];
      R[3] = w[2];
      R[4] = 1;
      R[5] = -w[0];
      R[6] = -w[1];
      R[7] = w[0];
      R[8] = 1;
    }
    if (dw) {  // d(w x X)/dw = -[X]x
      dw[0] = 0;
      dw[1] = X[2];
      dw[2] = -X[1];
      dw[3] = -X[2];
      dw[4] = 0;
      dw[5] = X[0];
      dw[6] = X[1];
      dw[7] = -X[0];
      dw[8] = 0;
    }
  }
}

// out = R(q) X with q = (w, x, y, z) normalised first (Ceres' QuaternionRotatePoint).
// dq (optional) = d out / d delta for the manifold update q' = exp(delta) * q: -2 [R X]x.
VIDMAP_HD inline void quaternionRotate(const double* qIn, const double* X, double* out, double* R,
                                       double* dq) {
  const double scale =
      1.0 / sqrt(qIn[0] * qIn[0] + qIn[1] * qIn[1] + qIn[2] * qIn[2] + qIn[3] * qIn[3]);
  const double q[4] = {scale * qIn[0], scale * qIn[1], scale * qIn[2], scale * qIn[3]};
  const double t2 = q[0] * q[1], t3 = q[0] * q[2], t4 = q[0] * q[3], t5 = -q[1] * q[1];
  const double t6 = q[1] * q[2], t7 = q[1] * q[3], t8 = -q[2] * q[2], t9 = q[2] * q[3];
  const double t1 = -q[3] * q[3];
  out[0] = 2.0 * ((t8 + t1) * X[0] + (t6 - t4) * X[1] + (t3 + t7) * X[2]) + X[0];
  out[1] = 2.0 * ((t4 + t6) * X[0] + (t5 + t1) * X[1] + (t9 - t2) * X[2]) + X[1];
  out[2] = 2.0 * ((t7 - t3) * X[0] + (t2 + t9) * X[1] + (t5 + t8) * X[2]) + X[2];
  if (R) {
    R[0] = 2.0 * (t8 + t1) + 1.0;
    R[1] = 2.0 * (t6 - t4);
    R[2] = 2.0 * (t3 + t7);
    R[3] = 2.0 * (t4 + t6);
    R[4] = 2.0 * (t5 + t1) + 1.0;
    R[5] = 2.0 * (t9 - t2);
    R[6] = 2.0 * (t7 - t3);
    R[7] = 2.0 * (t2 + t9);
    R[8] = 2.0 * (t5 + t8) + 1.0;
  }
  if (dq) {
    const double* y = out;
    dq[0] = 0;
    dq[1] = 2.0 * y[2];
    dq[2] = -2.0 * y[1];
    dq[3] = -2.0 * y[2];
    dq[4] = 0;
    dq[5] = 2.0 * y[0];
    dq[6] = 2.0 * y[1];
    dq[7] = -2.0 * y[0];
    dq[8] = 0;
  }
}

// Hamilton product zw = z * w (Ceres' QuaternionProduct).
VIDMAP_HD inline void quaternionProduct(const double* z, const double* w, double* zw) {
  zw[0] = z[0] * w[0] - z[1] * w[1] - z[2] * w[2] - z[3] * w[3];
  zw[1] = z[0] * w[1] + z[1] * w[0] + z[2] * w[3] - z[3] * w[2];
  zw[2] = z[0] * w[2] - z[1] * w[3] + z[2] * w[0] + z[3] * w[1];
  zw[3] = z[0] * w[3] + z[1] * w[2] - z[2] * w[1] + z[3] * w[0];
}

// Ceres' QuaternionManifold::Plus: out = [cos|d|, sin|d|/|d| d] * q (no renormalisation).
VIDMAP_HD inline void quaternionPlus(const double* q, const double* d, double* out) {
  const double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  if (n > 0.0) {
    const double sdd = sin(n) / n;
    const double qd[4] = {cos(n), sdd * d[0], sdd * d[1], sdd * d[2]};
    quaternionProduct(qd, q, out);
  } else {
    for (int i = 0; i < 4; ++i) out[i] = q[i];
  }
}

}  // namespace vidmap::ba
