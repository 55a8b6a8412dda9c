// Names and sizes shared by the bundle adjuster's host code and its CUDA kernels: camera models
// (vidmap's one enum, core/camera_model.h), rotation parameterisations and robust losses. No
// CUDA types here.
#pragma once

#include "vidmap/core/camera_model.h"

namespace vidmap::ba {

// The camera models (layouts in core/camera_model.h): the adjuster refines SIMPLE_PINHOLE,
// PINHOLE, SIMPLE_RADIAL, RADIAL and BAL (adjusterRefines); a problem of another model is
// refused by Problem::check.
using vidmap::CameraModel;

// Angle-axis rotations are updated additively (as Ceres' BAL example does); quaternions
// (w, x, y, z) are updated on the manifold q' = [cos|d|, sin|d|/|d| d] * q (Ceres'
// QuaternionManifold).
enum class RotationType { kAngleAxis = 0, kQuaternion = 1 };

// Robust losses as Ceres defines them (loss_function.h); `scale` is Ceres' `a`.
enum class LossType { kTrivial = 0, kHuber = 1, kCauchy = 2, kSoftL1 = 3 };

inline constexpr int kMaxIntrinsics = 5;
inline constexpr int kPoseDims = 6;  // local rotation (3) + translation (3)
inline constexpr int kMaxCameraCols = kPoseDims + kMaxIntrinsics;

constexpr int numIntrinsics(CameraModel m) { return modelNumParams(m); }

constexpr int rotationParams(RotationType r) { return r == RotationType::kQuaternion ? 4 : 3; }

// Index of the focal length(s) in the intrinsics (checked to be positive and finite).
constexpr int numFocals(CameraModel m) { return modelNumFocals(m); }

}  // namespace vidmap::ba
