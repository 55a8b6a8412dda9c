#include "vidmap/mvs/testing/synthetic.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "vidmap/synth/render3d.h"

namespace vidmap::mvs::testing {

Workspace workspaceOf(const SyntheticMvs& s, const WorkspaceOptions& options) {
  return buildWorkspace(
      s.model, [&](const io::ColmapImage& im) { return s.images.at(im.id); }, options);
}

SyntheticMvs makeFacadeMvs(int width, int height, int views, double baseline, std::uint32_t seed) {
  SyntheticMvs s{synth::makeScene("facade", seed), {}, {}, {}, {}, {}};
  synth::PinholeCamera cam = synth::PinholeCamera::fromHfov(width, height, 60);
  io::ColmapCamera cc;
  cc.id = 1;
  cc.model = io::CameraModelId::kPinhole;
  cc.width = width, cc.height = height;
  cc.params = {cam.fx, cam.fy, cam.cx + 0.5, cam.cy + 0.5};
  s.model.cameras[1] = cc;
  for (int i = 0; i < views; ++i) {
    double a = views > 1 ? double(i) / (views - 1) - 0.5 : 0;
    Eigen::Vector3d eye(a * baseline, -1.0, 1.6 + 0.1 * std::sin(3.0 * i));
    synth::Pose pose = synth::Pose::lookAt(eye, Eigen::Vector3d(0.3 * a, 5.0, 1.0));
    s.cameras.push_back(cam);
    s.poses.push_back(pose);
    io::ColmapImage im;
    im.id = static_cast<std::uint32_t>(i + 1);
    im.camera_id = 1;
    im.name = "view_" + std::to_string(i) + ".png";
    Eigen::Quaterniond q = pose.q.conjugate();
    Eigen::Vector3d t = -(q * pose.t);
    im.qvec = {q.w(), q.x(), q.y(), q.z()};
    im.tvec = {t.x(), t.y(), t.z()};
    s.model.images[im.id] = im;
    s.images[im.id] = synth::renderImage(s.scene, cam, pose);
    s.depth.push_back(synth::renderDepth(s.scene, cam, pose));
  }
  // Sparse points: every 8th pixel of every view, tracked in the views that see it.
  std::uint64_t pid = 1;
  for (int i = 0; i < views; ++i) {
    for (int y = 4; y < height; y += 8) {
      for (int x = 4; x < width; x += 8) {
        float z = s.depth[i](x, y);
        if (!(z > 0)) continue;
        Eigen::Vector3d X = s.poses[i].toWorld(cam.unproject(x, y) * z);
        io::ColmapPoint3D p;
        p.id = pid;
        p.xyz = {X.x(), X.y(), X.z()};
        for (int j = 0; j < views; ++j) {
          Eigen::Vector3d xc = s.poses[j].toCamera(X);
          if (xc.z() <= 0) continue;
          Eigen::Vector2d uv = cam.project(xc);
          int u = static_cast<int>(std::lround(uv.x())), v = static_cast<int>(std::lround(uv.y()));
          if (u < 0 || v < 0 || u >= width || v >= height) continue;
          if (std::abs(s.depth[j](u, v) - xc.z()) > 0.01 * xc.z()) continue;
          io::ColmapImage& im = s.model.images[static_cast<std::uint32_t>(j + 1)];
          io::ColmapPoint2D p2;
          p2.x = uv.x() + 0.5, p2.y = uv.y() + 0.5;
          p2.point3d_id = pid;
          p.track.push_back({im.id, static_cast<std::uint32_t>(im.points2d.size())});
          im.points2d.push_back(p2);
        }
        if (p.track.size() >= 2) {
          s.model.points3d[pid] = p;
          ++pid;
        } else {
          for (const auto& e : p.track)
            s.model.images[e.image_id].points2d.back().point3d_id =
                io::ColmapPoint2D::kInvalidPoint3D;
        }
      }
    }
  }
  return s;
}

DepthScore scoreDepth(const DepthMap& m, const Image<float>& truth, double relTol) {
  DepthScore sc;
  std::int64_t truthPixels = 0, good = 0;
  std::vector<double> errs;
  for (int y = 0; y < truth.height(); ++y)
    for (int x = 0; x < truth.width(); ++x) {
      float t = truth(x, y);
      if (!(t > 0)) continue;
      ++truthPixels;
      float d = m.depth[static_cast<size_t>(y) * m.width + x];
      if (!(d > 0)) continue;
      double e = std::abs(d - t) / t;
      errs.push_back(e);
      if (e <= relTol) ++good;
    }
  sc.estimates = static_cast<std::int64_t>(errs.size());
  sc.completeness = truthPixels ? double(good) / truthPixels : 0;
  sc.accuracy = errs.empty() ? 0 : double(good) / errs.size();
  if (!errs.empty()) {
    std::nth_element(errs.begin(), errs.begin() + errs.size() / 2, errs.end());
    sc.medianRelError = errs[errs.size() / 2];
  }
  return sc;
}

namespace {

// Points hashed into cubes of side tau: a point within tau lies in the 27 cubes around.
struct Grid {
  double cell;
  std::unordered_map<std::int64_t, std::vector<Eigen::Vector3f>> cells;
  static std::int64_t key(std::int64_t x, std::int64_t y, std::int64_t z) {
    return (x & 0x1FFFFF) | ((y & 0x1FFFFF) << 21) | ((z & 0x1FFFFF) << 42);
  }
  void add(const Eigen::Vector3f& p) {
    cells[key(std::floor(p.x() / cell), std::floor(p.y() / cell), std::floor(p.z() / cell))]
        .push_back(p);
  }
  bool near(const Eigen::Vector3f& p) const {
    std::int64_t cx = std::floor(p.x() / cell), cy = std::floor(p.y() / cell),
                 cz = std::floor(p.z() / cell);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          auto it = cells.find(key(cx + dx, cy + dy, cz + dz));
          if (it == cells.end()) continue;
          for (const auto& q : it->second)
            if ((q - p).squaredNorm() <= cell * cell) return true;
        }
    return false;
  }
};

}  // namespace

CloudScore scoreCloud(const std::vector<io::PlyPoint>& points, const SyntheticMvs& s, double tau,
                      int step) {
  CloudScore sc;
  if (points.empty()) return sc;
  std::int64_t acc = 0;
  Grid g{tau, {}};
  for (const auto& p : points) {
    Eigen::Vector3d X(p.xyz[0], p.xyz[1], p.xyz[2]);
    if (s.scene.distanceToSurface(X) <= tau) ++acc;
    g.add(X.cast<float>());
  }
  sc.accuracy = double(acc) / points.size();
  std::int64_t total = 0, hit = 0;
  for (size_t i = 0; i < s.depth.size(); ++i)
    for (int y = step / 2; y < s.depth[i].height(); y += step)
      for (int x = step / 2; x < s.depth[i].width(); x += step) {
        float z = s.depth[i](x, y);
        if (!(z > 0)) continue;
        Eigen::Vector3d X = s.poses[i].toWorld(s.cameras[i].unproject(x, y) * z);
        ++total;
        if (g.near(X.cast<float>())) ++hit;
      }
  sc.completeness = total ? double(hit) / total : 0;
  sc.f1 = sc.accuracy + sc.completeness > 0
              ? 2 * sc.accuracy * sc.completeness / (sc.accuracy + sc.completeness)
              : 0;
  return sc;
}

}  // namespace vidmap::mvs::testing
