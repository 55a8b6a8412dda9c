#include "vidmap/synth/camera.h"

#include <cmath>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"

namespace vidmap::synth {

PinholeCamera PinholeCamera::fromHfov(int width, int height, double hfovDeg) {
  checkRange("width", width, 1, 1 << 15);
  checkRange("height", height, 1, 1 << 15);
  checkRange("hfov (degrees)", hfovDeg, 1.0, 170.0);
  PinholeCamera c;
  c.width = width;
  c.height = height;
  c.fx = 0.5 * width / std::tan(0.5 * hfovDeg * M_PI / 180.0);
  c.fy = c.fx;
  c.cx = 0.5 * (width - 1);
  c.cy = 0.5 * (height - 1);
  return c;
}

void PinholeCamera::check() const {
  checkRange("camera width", width, 1, 1 << 15);
  checkRange("camera height", height, 1, 1 << 15);
  checkRange("camera fx", fx, 1e-6, 1e9);
  checkRange("camera fy", fy, 1e-6, 1e9);
  checkRange("camera cx", cx, -1e9, 1e9);
  checkRange("camera cy", cy, -1e9, 1e9);
}

Pose Pose::fromRotation(const Eigen::Matrix3d& r, const Eigen::Vector3d& center) {
  Pose p;
  p.q = Eigen::Quaterniond(r).normalized();
  if (p.q.w() < 0) p.q.coeffs() = -p.q.coeffs();
  p.t = center;
  return p;
}

Pose Pose::lookAt(const Eigen::Vector3d& eye, const Eigen::Vector3d& target,
                  const Eigen::Vector3d& worldUp) {
  Eigen::Vector3d z = target - eye;
  require(z.norm() > 1e-12, "lookAt: the target equals the eye");
  z.normalize();
  Eigen::Vector3d x = z.cross(worldUp);
  require(x.norm() > 1e-9, "lookAt: the viewing direction is parallel to the up vector");
  x.normalize();
  Eigen::Vector3d y = z.cross(x);  // x right, y down, z forward: x cross y = z
  Eigen::Matrix3d r;
  r.col(0) = x;
  r.col(1) = y;
  r.col(2) = z;
  return fromRotation(r, eye);
}

}  // namespace vidmap::synth
