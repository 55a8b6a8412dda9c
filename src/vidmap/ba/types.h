// Names and sizes shared by the bundle adjuster's host code and its CUDA kernels: camera models
// (named as COLMAP names them, plus the BAL camera of Agarwal et al. 2010), rotation
// parameterisations and robust losses. No CUDA types here.
#pragma once

namespace vidmap::ba {

// Intrinsics layouts (x_cam = R X + t; u = x/z, v = y/z looking down +z, except BAL):
//   SIMPLE_PINHOLE f, cx, cy          px = f u + cx
//   PINHOLE        fx, fy, cx, cy     px = fx u + cx, py = fy v + cy
//   SIMPLE_RADIAL  f, cx, cy, k       px = f u (1 + k r^2) + cx
//   RADIAL         f, cx, cy, k1, k2  px = f u (1 + k1 r^2 + k2 r^4) + cx
//   BAL            f, k1, k2          p = -x_cam / z (looks down -z), px = f p (1 + k1 |p|^2 + k2
//   |p|^4)
enum class CameraModel {
  kSimplePinhole = 0,
  kPinhole = 1,
  kSimpleRadial = 2,
  kRadial = 3,
  kBal = 4
};

// Angle-axis rotations are updated additively (as Ceres' BAL example does); quaternions
// (w, x, y, z) are updated on the manifold q' = [cos|d|, sin|d|/|d| d] * q (Ceres'
// QuaternionManifold).
enum class RotationType { kAngleAxis = 0, kQuaternion = 1 };

// Robust losses as Ceres defines them (loss_function.h); `scale` is Ceres' `a`.
enum class LossType { kTrivial = 0, kHuber = 1, kCauchy = 2, kSoftL1 = 3 };

inline constexpr int kMaxIntrinsics = 5;
inline constexpr int kPoseDims = 6;  // local rotation (3) + translation (3)
inline constexpr int kMaxCameraCols = kPoseDims + kMaxIntrinsics;

constexpr int numIntrinsics(CameraModel m) {
  switch (m) {
    case CameraModel::kSimplePinhole:
      return 3;
    case CameraModel::kPinhole:
      return 4;
    case CameraModel::kSimpleRadial:
      return 4;
    case CameraModel::kRadial:
      return 5;
    case CameraModel::kBal:
      return 3;
  }
  return 0;
}

constexpr int rotationParams(RotationType r) { return r == RotationType::kQuaternion ? 4 : 3; }

// Index of the focal length(s) in the intrinsics (checked to be positive and finite).
constexpr int numFocals(CameraModel m) { return m == CameraModel::kPinhole ? 2 : 1; }

}  // namespace vidmap::ba
