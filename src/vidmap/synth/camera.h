// The pinhole camera and camera poses of the synthetic 3D scenes.
//
// Conventions (the same as OpenCV and COLMAP):
//   - camera axes: x right, y down, z forward (the viewing direction);
//   - Pose is camera-to-world: x_world = R * x_camera + t, so t is the camera centre in the
//     world and R's columns are the camera axes in the world (TUM groundtruth.txt stores
//     this pose; COLMAP images.txt stores its inverse, world-to-camera);
//   - image coordinates: pixel centres at integers (OpenCV); pixel (x, y) covers
//     [x - 0.5, x + 0.5] x [y - 0.5, y + 0.5]. COLMAP puts the centre of the top-left pixel
//     at (0.5, 0.5): its cx, cy are these plus 0.5 (cameras.txt is written that way).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace vidmap::synth {

struct PinholeCamera {
  int width = 640;
  int height = 480;
  double fx = 0, fy = 0, cx = 0, cy = 0;  // pixels, OpenCV convention (see above)

  // Square pixels, principal point at the image centre, horizontal field of view in degrees.
  static PinholeCamera fromHfov(int width, int height, double hfovDeg);

  // Pixel coordinates of a point given in camera coordinates (z > 0 in front).
  Eigen::Vector2d project(const Eigen::Vector3d& xCam) const {
    return {fx * xCam.x() / xCam.z() + cx, fy * xCam.y() / xCam.z() + cy};
  }
  // The ray through pixel (u, v) in camera coordinates, scaled to z = 1.
  Eigen::Vector3d unproject(double u, double v) const {
    return {(u - cx) / fx, (v - cy) / fy, 1.0};
  }
  // Throws vidmap::Error naming the bad field.
  void check() const;
};

// A rigid camera-to-world transform. The quaternion is the stored truth (unit, w >= 0);
// everything else is derived from it.
struct Pose {
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  Eigen::Vector3d t = Eigen::Vector3d::Zero();  // camera centre in the world

  Eigen::Matrix3d rotation() const { return q.toRotationMatrix(); }
  Eigen::Vector3d toWorld(const Eigen::Vector3d& xCam) const { return q * xCam + t; }
  Eigen::Vector3d toCamera(const Eigen::Vector3d& xWorld) const {
    return q.conjugate() * (xWorld - t);
  }

  // A camera at eye looking at target with the image's "up" (-y) towards worldUp.
  static Pose lookAt(const Eigen::Vector3d& eye, const Eigen::Vector3d& target,
                     const Eigen::Vector3d& worldUp = Eigen::Vector3d::UnitZ());
  // From a rotation matrix (camera axes as columns) and a centre; normalises the quaternion
  // and makes w >= 0.
  static Pose fromRotation(const Eigen::Matrix3d& r, const Eigen::Vector3d& center);
};

}  // namespace vidmap::synth
