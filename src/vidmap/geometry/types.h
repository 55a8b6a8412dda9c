// Basic types of the geometry module: Eigen aliases, the pinhole camera, a rigid pose, and the
// small Lie-group helpers the solvers and refiners share. Convention (as COLMAP): a pose maps
// world to camera, x_cam = R X + t; a relative pose maps camera 1 to camera 2, so that
// x2 ~ R x1 + t and E = [t]x R with x2^T E x1 = 0 for normalized image points.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>
#include <string>
#include <vector>

#include "vidmap/core/error.h"

namespace vidmap::geometry {

using Vec2 = Eigen::Vector2d;
using Vec3 = Eigen::Vector3d;
using Vec4 = Eigen::Vector4d;
using Mat3 = Eigen::Matrix3d;
using Mat34 = Eigen::Matrix<double, 3, 4>;
using Vec2List = std::vector<Vec2>;
using Vec3List = std::vector<Vec3>;

// A pinhole camera without distortion (the mapper undistorts before geometry).
struct Pinhole {
  double fx = 1, fy = 1, cx = 0, cy = 0;

  Vec2 normalize(const Vec2& px) const { return {(px.x() - cx) / fx, (px.y() - cy) / fy}; }
  Vec2 project(const Vec2& n) const { return {fx * n.x() + cx, fy * n.y() + cy}; }
  Mat3 K() const {
    Mat3 k;
    k << fx, 0, cx, 0, fy, cy, 0, 0, 1;
    return k;
  }
  double meanFocal() const { return 0.5 * (fx + fy); }
  bool operator==(const Pinhole&) const = default;
  // Throws vidmap::Error unless the focal lengths are positive and everything is finite.
  void check(const std::string& what) const;
};

// World-to-camera rigid transform, x_cam = R X + t.
struct Pose {
  Mat3 R = Mat3::Identity();
  Vec3 t = Vec3::Zero();

  Vec3 apply(const Vec3& X) const { return R * X + t; }
  Vec3 center() const { return -R.transpose() * t; }
  Mat34 matrix() const {
    Mat34 P;
    P << R, t;
    return P;
  }
  Pose inverse() const { return {R.transpose(), -R.transpose() * t}; }
};

inline Mat3 skew(const Vec3& v) {
  Mat3 m;
  m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return m;
}

// Rodrigues' formula: the rotation exp([w]x).
inline Mat3 expSO3(const Vec3& w) {
  const double th2 = w.squaredNorm();
  const Mat3 W = skew(w);
  if (th2 < 1e-20) return Mat3::Identity() + W;
  const double th = std::sqrt(th2);
  return Mat3::Identity() + (std::sin(th) / th) * W + ((1 - std::cos(th)) / th2) * (W * W);
}

// Angle in radians between two rotations.
inline double rotationAngle(const Mat3& A, const Mat3& B) {
  const double c = 0.5 * ((A.transpose() * B).trace() - 1.0);
  return std::acos(std::max(-1.0, std::min(1.0, c)));
}

// Angle in radians between two directions (of any length, non-zero).
inline double angleBetween(const Vec3& a, const Vec3& b) {
  const double c = a.dot(b) / (a.norm() * b.norm());
  return std::acos(std::max(-1.0, std::min(1.0, c)));
}

// The nearest rotation (Frobenius) to a 3x3 matrix.
Mat3 nearestRotation(const Mat3& M);

// Homogeneous normalized coordinates (x, y, 1) of pixels.
Vec3List toNormalized(const Vec2List& px, const Pinhole& cam);

// Throws vidmap::Error naming `what` and the index if any coordinate is not finite.
void requireFinite(const Vec2List& v, const std::string& what);
void requireFinite(const Vec3List& v, const std::string& what);

}  // namespace vidmap::geometry
