// The camera models of vidmap: one enum for the mapper (sfm), the bundle adjuster (ba, host and
// CUDA) and the COLMAP files (io), and the lens distortion of each, written once as VIDMAP_HD
// functions that sfm::Camera, mvs and ba/camera_models.h (CPU oracle and CUDA kernels) call.
// COLMAP's models keep COLMAP's ids (colmap/sensor/models.h); the BAL camera (Agarwal et al.,
// "Bundle Adjustment in the Large", ECCV 2010) has an id COLMAP does not use. No CUDA types here.
#pragma once

#include "vidmap/core/hd.h"

namespace vidmap {

// Parameters, with u = x/z, v = y/z looking down +z, r2 = u^2 + v^2 (BAL: (u, v) = -(x/z, y/z)):
enum class CameraModel : int {
  kSimplePinhole = 0,  // f, cx, cy                px = f u + cx
  kPinhole = 1,        // fx, fy, cx, cy           px = fx u + cx, py = fy v + cy
  kSimpleRadial = 2,   // f, cx, cy, k             px = f u (1 + k r2) + cx
  kRadial = 3,         // f, cx, cy, k1, k2        px = f u (1 + k1 r2 + k2 r2^2) + cx
  kOpenCV = 4,         // fx, fy, cx, cy, k1, k2, p1, p2 (radial and tangential)
  kFullOpenCV = 6,     // fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6 (rational radial)
  kBal = 1000,         // f, k1, k2                px = f u (1 + k1 r2 + k2 r2^2), no COLMAP id
};

constexpr const char* modelName(CameraModel m) {
  switch (m) {
    case CameraModel::kSimplePinhole:
      return "SIMPLE_PINHOLE";
    case CameraModel::kPinhole:
      return "PINHOLE";
    case CameraModel::kSimpleRadial:
      return "SIMPLE_RADIAL";
    case CameraModel::kRadial:
      return "RADIAL";
    case CameraModel::kOpenCV:
      return "OPENCV";
    case CameraModel::kFullOpenCV:
      return "FULL_OPENCV";
    case CameraModel::kBal:
      return "BAL";
  }
  return nullptr;  // not a model
}

// The number of parameters; 0 for a value that is not a model.
constexpr int modelNumParams(CameraModel m) {
  switch (m) {
    case CameraModel::kSimplePinhole:
    case CameraModel::kBal:
      return 3;
    case CameraModel::kPinhole:
    case CameraModel::kSimpleRadial:
      return 4;
    case CameraModel::kRadial:
      return 5;
    case CameraModel::kOpenCV:
      return 8;
    case CameraModel::kFullOpenCV:
      return 12;
  }
  return 0;
}

// Focal lengths first (1: f, 2: fx, fy), then the principal point (none for BAL), then the
// distortion coefficients from modelDistortionIndex on.
constexpr int modelNumFocals(CameraModel m) {
  return m == CameraModel::kPinhole || m == CameraModel::kOpenCV || m == CameraModel::kFullOpenCV
             ? 2
             : 1;
}
constexpr int modelDistortionIndex(CameraModel m) {
  return m == CameraModel::kBal ? 1 : modelNumFocals(m) + 2;
}

// The models the bundle adjuster refines (ba/camera_models.h); OPENCV and FULL_OPENCV cameras
// are projected and undistorted but held constant by the mapper.
constexpr bool adjusterRefines(CameraModel m) {
  return m == CameraModel::kSimplePinhole || m == CameraModel::kPinhole ||
         m == CameraModel::kSimpleRadial || m == CameraModel::kRadial || m == CameraModel::kBal;
}

// The radial factor 1 + k1 r2 + k2 r2^2 of SIMPLE_RADIAL (k2 = 0), RADIAL, OPENCV and BAL, and
// its derivative by r2. Evaluated in this order everywhere (the written models depend on it).
VIDMAP_HD inline double radialFactor(double r2, double k1, double k2) {
  return 1.0 + r2 * (k1 + k2 * r2);
}
VIDMAP_HD inline double radialFactorDerivative(double r2, double k1, double k2) {
  return k1 + 2.0 * k2 * r2;
}

// The distorted normalized point d of an undistorted one (u, v), as COLMAP's models.h; k points
// at the model's parameter modelDistortionIndex(m).
VIDMAP_HD inline void distortNormalized(CameraModel m, const double* k, double u, double v,
                                        double* d) {
  const double u2 = u * u, v2 = v * v, uv = u * v, r2 = u2 + v2;
  double f = 1.0;
  switch (m) {
    case CameraModel::kSimplePinhole:
    case CameraModel::kPinhole:
      break;
    case CameraModel::kSimpleRadial:
      f = radialFactor(r2, k[0], 0.0);
      break;
    case CameraModel::kRadial:
    case CameraModel::kBal:
      f = radialFactor(r2, k[0], k[1]);
      break;
    case CameraModel::kOpenCV:
    case CameraModel::kFullOpenCV: {
      f = m == CameraModel::kOpenCV ? radialFactor(r2, k[0], k[1])
                                    : (1.0 + r2 * (k[0] + r2 * (k[1] + r2 * k[4]))) /
                                          (1.0 + r2 * (k[5] + r2 * (k[6] + r2 * k[7])));
      d[0] = u * f + 2.0 * k[2] * uv + k[3] * (r2 + 2.0 * u2);
      d[1] = v * f + 2.0 * k[3] * uv + k[2] * (r2 + 2.0 * v2);
      return;
    }
  }
  d[0] = u * f;
  d[1] = v * f;
}

}  // namespace vidmap
