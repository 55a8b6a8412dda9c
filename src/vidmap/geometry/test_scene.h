// Synthetic scenes with known truth for the geometry tests and benchmarks. They are generated
// here, from first principles (random rigid motions, points in the field of view, Gaussian pixel
// noise, uniform outliers), independently of the solvers they test.
#pragma once

#include <random>

#include "vidmap/geometry/types.h"

namespace vidmap::geometry::testing {

inline Mat3 randomRotation(std::mt19937_64& rng, double max_angle_deg) {
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  Vec3 axis(g(rng), g(rng), g(rng));
  axis.normalize();
  return Eigen::AngleAxisd(u(rng) * max_angle_deg * M_PI / 180.0, axis).toRotationMatrix();
}

struct SceneOptions {
  int num_points = 200;
  double noise_px = 1.0;
  double outlier_ratio = 0.0;
  double baseline = 1.0;  // distance between the centres (0: pure rotation)
  double max_rotation_deg = 20;
  double min_depth = 4, max_depth = 8;
  bool planar = false;  // points on one plane
  int width = 640, height = 480;
  double focal = 500;
};

struct TwoViewScene {
  Pinhole cam;
  Pose rel;    // camera 1 -> camera 2 (|t| = baseline)
  Vec3List X;  // in camera 1's frame
  Vec2List px1, px2;
  std::vector<char> inlier;  // false for the planted outliers
};

inline TwoViewScene makeTwoViewScene(const SceneOptions& o, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g(0, 1);
  TwoViewScene s;
  s.cam = {o.focal, o.focal, o.width / 2.0, o.height / 2.0};
  // Camera 2 looks at the middle of the point cloud from a random side position.
  const Mat3 R = randomRotation(rng, o.max_rotation_deg);
  Vec3 dir(g(rng), 0.3 * g(rng), 0.2 * g(rng));
  dir.normalize();
  const Vec3 c2 = o.baseline * dir;
  s.rel = {R, -R * c2};
  Vec3 plane_n(0.2 * g(rng), 0.2 * g(rng), 1);
  plane_n.normalize();
  const double plane_d = 0.5 * (o.min_depth + o.max_depth);
  auto inImage = [&](const Vec2& p) {
    return p.x() >= 0 && p.y() >= 0 && p.x() < o.width && p.y() < o.height;
  };
  while (static_cast<int>(s.X.size()) < o.num_points) {
    const Vec2 p1(u(rng) * o.width, u(rng) * o.height);
    const Vec3 ray = s.cam.normalize(p1).homogeneous();
    double depth = o.min_depth + u(rng) * (o.max_depth - o.min_depth);
    if (o.planar) depth = plane_d / plane_n.dot(ray);  // n . X = d
    const Vec3 X = depth * ray;
    const Vec3 q = s.rel.apply(X);
    if (q.z() <= 0.1) continue;
    const Vec2 p2 = s.cam.project(q.hnormalized());
    if (!inImage(p2)) continue;
    s.X.push_back(X);
    s.px1.push_back(p1 + o.noise_px * Vec2(g(rng), g(rng)));
    s.px2.push_back(p2 + o.noise_px * Vec2(g(rng), g(rng)));
    s.inlier.push_back(1);
  }
  const int n_out = static_cast<int>(o.outlier_ratio * o.num_points + 0.5);
  for (int k = 0; k < n_out; ++k) {
    s.px2[k] = Vec2(u(rng) * o.width, u(rng) * o.height);
    s.inlier[k] = 0;
  }
  // Shuffle so that outliers are not the first points.
  for (int i = o.num_points - 1; i > 0; --i) {
    const int j = static_cast<int>(u(rng) * (i + 1)) % (i + 1);
    std::swap(s.X[i], s.X[j]);
    std::swap(s.px1[i], s.px1[j]);
    std::swap(s.px2[i], s.px2[j]);
    std::swap(s.inlier[i], s.inlier[j]);
  }
  return s;
}

struct PnPScene {
  Pinhole cam;
  Pose pose;  // world to camera
  Vec3List X;
  Vec2List px;
  std::vector<char> inlier;
};

inline PnPScene makePnPScene(const SceneOptions& o, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g(0, 1);
  PnPScene s;
  s.cam = {o.focal, o.focal, o.width / 2.0, o.height / 2.0};
  s.pose.R = randomRotation(rng, 180);
  s.pose.t = Vec3(g(rng), g(rng), g(rng));
  while (static_cast<int>(s.X.size()) < o.num_points) {
    const Vec2 p(u(rng) * o.width, u(rng) * o.height);
    double depth = o.min_depth + u(rng) * (o.max_depth - o.min_depth);
    const Vec3 ray = s.cam.normalize(p).homogeneous();
    if (o.planar)
      depth = 0.5 * (o.min_depth + o.max_depth) / Vec3(0.1, 0.2, 1).normalized().dot(ray);
    const Vec3 Xc = depth * ray;
    s.X.push_back(s.pose.R.transpose() * (Xc - s.pose.t));
    s.px.push_back(p + o.noise_px * Vec2(g(rng), g(rng)));
    s.inlier.push_back(1);
  }
  const int n_out = static_cast<int>(o.outlier_ratio * o.num_points + 0.5);
  for (int k = 0; k < n_out; ++k) {
    s.px[k] = Vec2(u(rng) * o.width, u(rng) * o.height);
    s.inlier[k] = 0;
  }
  for (int i = o.num_points - 1; i > 0; --i) {
    const int j = static_cast<int>(u(rng) * (i + 1)) % (i + 1);
    std::swap(s.X[i], s.X[j]);
    std::swap(s.px[i], s.px[j]);
    std::swap(s.inlier[i], s.inlier[j]);
  }
  return s;
}

// Rotation error in degrees and translation direction error in degrees (sign-sensitive).
inline double rotationErrorDeg(const Mat3& A, const Mat3& B) {
  return rotationAngle(A, B) * 180.0 / M_PI;
}
inline double directionErrorDeg(const Vec3& a, const Vec3& b) {
  return angleBetween(a, b) * 180.0 / M_PI;
}

}  // namespace vidmap::geometry::testing
