// Projection of a point in camera coordinates to pixels for each camera model the adjuster
// refines (core/camera_model.h, whose radial factor it uses), with its derivatives (host and
// device). COLMAP's models (src/colmap/sensor/models.h) look down +z;
// the BAL camera (Agarwal et al., "Bundle Adjustment in the Large", ECCV 2010) looks down -z and
// is written as Ceres' examples/snavely_reprojection_error.h evaluates it.
#pragma once

#include "vidmap/ba/types.h"
#include "vidmap/core/hd.h"

namespace vidmap::ba {

// pix = project(intr, Pc). dPc (2x3 row-major) = d pix / d Pc and dIntr (2 x numIntrinsics,
// row-major) = d pix / d intr are written when not null.
template <CameraModel M>
struct Projection;

namespace detail {

// Shared by the models with a radial factor fac(r2) = radialFactor(r2, k1, k2) applied to the
// normalised coordinates (u, v) = sign * (x/z, y/z); pix = f * fac * (u, v) + c.
VIDMAP_HD inline void radialProject(double sign, double fx, double fy, double cx, double cy,
                                    double k1, double k2, const double* Pc, double* pix,
                                    double* dPc, double* dUv /* d pix / d(fac terms): 2x3 */) {
  const double iz = 1.0 / Pc[2];
  const double u = sign * Pc[0] * iz, v = sign * Pc[1] * iz;
  const double r2 = u * u + v * v;
  const double fac = radialFactor(r2, k1, k2);
  pix[0] = fx * fac * u + cx;
  pix[1] = fy * fac * v + cy;
  if (dPc) {
    const double dfac = radialFactorDerivative(r2, k1, k2);
    // d pix / d(u, v)
    const double a00 = fx * (fac + 2.0 * u * u * dfac), a01 = fx * 2.0 * u * v * dfac;
    const double a10 = fy * 2.0 * u * v * dfac, a11 = fy * (fac + 2.0 * v * v * dfac);
    // d(u, v) / d Pc = sign * [1/z 0 -x/z^2; 0 1/z -y/z^2]; note sign*x/z^2 = u/z.
    const double du0 = sign * iz, du2 = -u * iz, dv1 = sign * iz, dv2 = -v * iz;
    dPc[0] = a00 * du0;
    dPc[1] = a01 * dv1;
    dPc[2] = a00 * du2 + a01 * dv2;
    dPc[3] = a10 * du0;
    dPc[4] = a11 * dv1;
    dPc[5] = a10 * du2 + a11 * dv2;
  }
  if (dUv) {  // d pix / d f (common focal), d pix / d k1, d pix / d k2
    dUv[0] = fac * u;
    dUv[1] = (fx * u) * r2;
    dUv[2] = (fx * u) * (r2 * r2);
    dUv[3] = fac * v;
    dUv[4] = (fy * v) * r2;
    dUv[5] = (fy * v) * (r2 * r2);
  }
}

}  // namespace detail

template <>
struct Projection<CameraModel::kSimplePinhole> {
  static constexpr int kParams = 3;
  VIDMAP_HD static void project(const double* p, const double* Pc, double* pix, double* dPc,
                                double* dI) {
    const double iz = 1.0 / Pc[2];
    const double u = Pc[0] * iz, v = Pc[1] * iz;
    pix[0] = p[0] * u + p[1];
    pix[1] = p[0] * v + p[2];
    if (dPc) {
      dPc[0] = p[0] * iz;
      dPc[1] = 0;
      dPc[2] = -p[0] * u * iz;
      dPc[3] = 0;
      dPc[4] = p[0] * iz;
      dPc[5] = -p[0] * v * iz;
    }
    if (dI) {
      dI[0] = u, dI[1] = 1, dI[2] = 0;
      dI[3] = v, dI[4] = 0, dI[5] = 1;
    }
  }
};

template <>
struct Projection<CameraModel::kPinhole> {
  static constexpr int kParams = 4;
  VIDMAP_HD static void project(const double* p, const double* Pc, double* pix, double* dPc,
                                double* dI) {
    const double iz = 1.0 / Pc[2];
    const double u = Pc[0] * iz, v = Pc[1] * iz;
    pix[0] = p[0] * u + p[2];
    pix[1] = p[1] * v + p[3];
    if (dPc) {
      dPc[0] = p[0] * iz;
      dPc[1] = 0;
      dPc[2] = -p[0] * u * iz;
      dPc[3] = 0;
      dPc[4] = p[1] * iz;
      dPc[5] = -p[1] * v * iz;
    }
    if (dI) {
      dI[0] = u, dI[1] = 0, dI[2] = 1, dI[3] = 0;
      dI[4] = 0, dI[5] = v, dI[6] = 0, dI[7] = 1;
    }
  }
};

template <>
struct Projection<CameraModel::kSimpleRadial> {
  static constexpr int kParams = 4;  // f, cx, cy, k
  VIDMAP_HD static void project(const double* p, const double* Pc, double* pix, double* dPc,
                                double* dI) {
    double d[6];
    detail::radialProject(1.0, p[0], p[0], p[1], p[2], p[3], 0.0, Pc, pix, dPc, dI ? d : nullptr);
    if (dI) {
      dI[0] = d[0], dI[1] = 1, dI[2] = 0, dI[3] = d[1];
      dI[4] = d[3], dI[5] = 0, dI[6] = 1, dI[7] = d[4];
    }
  }
};

template <>
struct Projection<CameraModel::kRadial> {
  static constexpr int kParams = 5;  // f, cx, cy, k1, k2
  VIDMAP_HD static void project(const double* p, const double* Pc, double* pix, double* dPc,
                                double* dI) {
    double d[6];
    detail::radialProject(1.0, p[0], p[0], p[1], p[2], p[3], p[4], Pc, pix, dPc, dI ? d : nullptr);
    if (dI) {
      dI[0] = d[0], dI[1] = 1, dI[2] = 0, dI[3] = d[1], dI[4] = d[2];
      dI[5] = d[3], dI[6] = 0, dI[7] = 1, dI[8] = d[4], dI[9] = d[5];
    }
  }
};

template <>
struct Projection<CameraModel::kBal> {
  static constexpr int kParams = 3;  // f, k1, k2
  VIDMAP_HD static void project(const double* p, const double* Pc, double* pix, double* dPc,
                                double* dI) {
    double d[6];
    detail::radialProject(-1.0, p[0], p[0], 0.0, 0.0, p[1], p[2], Pc, pix, dPc, dI ? d : nullptr);
    if (dI) {
      dI[0] = d[0], dI[1] = d[1], dI[2] = d[2];
      dI[3] = d[3], dI[4] = d[4], dI[5] = d[5];
    }
  }
};

}  // namespace vidmap::ba
