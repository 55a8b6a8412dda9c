#include "vidmap/synth/scene3d.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Geometry>

#include "vidmap/core/error.h"

namespace vidmap::synth {

namespace {

Vec3 toVec3(const Eigen::Vector3d& v) { return {v.x(), v.y(), v.z()}; }
Eigen::Vector3d toEigen(Vec3 v) { return {v.x, v.y, v.z}; }

bool finite(const Eigen::Vector3d& v) { return v.allFinite(); }

// HSV (all in [0, 1]) to RGB.
Vec3 hsv(double h, double s, double v) {
  double hh = (h - std::floor(h)) * 6;
  int i = static_cast<int>(hh) % 6;
  double f = hh - std::floor(hh);
  double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  switch (i) {
    case 0:
      return {v, t, p};
    case 1:
      return {q, v, p};
    case 2:
      return {p, v, t};
    case 3:
      return {p, q, v};
    case 4:
      return {t, p, v};
    default:
      return {v, p, q};
  }
}

// Each face draws its own texture from the scene seed and its index, so faces differ and the
// same seed gives the same scene.
SurfaceTexture drawTexture(std::uint32_t sceneSeed, int face, const Eigen::Vector3d& normal,
                           const Eigen::Vector3d& lightDir) {
  std::uint32_t h =
      hashU32(sceneSeed ^ hashU32(static_cast<std::uint32_t>(face) * 0x9e3779b9U + 0x2545f491U));
  auto next = [&h] {
    h = hashU32(h + 0x6a09e667U);
    return unitFromHash(h);
  };
  SurfaceTexture tx;
  tx.seed = hashU32(h ^ 0xbb67ae85U);
  double hue = next();
  tx.tintA = hsv(hue, 0.2 + 0.4 * next(), 1.0);
  tx.tintB = hsv(hue + 0.15 + 0.35 * next(), 0.2 + 0.4 * next(), 0.9 + 0.1 * next());
  tx.shade = 0.72 + 0.28 * std::max(0.0, normal.dot(lightDir.normalized()));
  tx.noiseWavelength = 0.5 + 0.7 * next();
  tx.noiseOctaves = 7;
  tx.noiseAmp = 0.26 + 0.1 * next();
  tx.checkerPeriod = 0.2 + 0.4 * next();
  tx.checkerAmp = 0.04 + 0.06 * next();
  tx.blobCell = 0.1 + 0.14 * next();
  tx.blobAmp = 0.3 + 0.15 * next();
  tx.rectCell = 0.25 + 0.35 * next();
  tx.rectAmp = 0.15 + 0.12 * next();
  return tx;
}

Face makeFace(const Eigen::Vector3d& origin, const Eigen::Vector3d& edgeS,
              const Eigen::Vector3d& edgeT) {
  Face f;
  f.origin = toVec3(origin);
  f.lenS = edgeS.norm();
  f.lenT = edgeT.norm();
  f.axisS = toVec3(edgeS / f.lenS);
  f.axisT = toVec3(edgeT / f.lenT);
  f.normal = toVec3(edgeS.cross(edgeT).normalized());
  return f;
}

}  // namespace

Scene::Scene(SceneDesc desc, std::uint32_t seed) : desc_(std::move(desc)), seed_(seed) {
  const std::string where = "scene '" + desc_.name + "': ";
  for (size_t i = 0; i < desc_.rects.size(); ++i) {
    const RectDesc& r = desc_.rects[i];
    std::string what = where + "rectangle " + std::to_string(i);
    require(finite(r.origin) && finite(r.edgeS) && finite(r.edgeT), what + " is not finite");
    require(r.edgeS.norm() > 1e-9 && r.edgeT.norm() > 1e-9, what + " has a zero edge");
    require(std::abs(r.edgeS.normalized().dot(r.edgeT.normalized())) < 1e-9,
            what + " has edges that are not orthogonal");
    faces_.push_back(makeFace(r.origin, r.edgeS, r.edgeT));
  }
  for (size_t b = 0; b < desc_.boxes.size(); ++b) {
    const BoxDesc& box = desc_.boxes[b];
    std::string what = where + "box " + std::to_string(b);
    require(finite(box.center) && finite(box.halfSize) && std::isfinite(box.yawRad),
            what + " is not finite");
    require((box.halfSize.array() > 1e-9).all(), what + " has a size that is not positive");
    BoxPrimitive p;
    p.center = toVec3(box.center);
    p.half = toVec3(box.halfSize);
    p.cosYaw = std::cos(box.yawRad);
    p.sinYaw = std::sin(box.yawRad);
    p.firstFace = static_cast<int>(faces_.size());
    boxes_.push_back(p);
    const Eigen::Vector3d ex(p.cosYaw, p.sinYaw, 0), ey(-p.sinYaw, p.cosYaw, 0), ez(0, 0, 1);
    const Eigen::Vector3d hx = box.halfSize.x() * ex, hy = box.halfSize.y() * ey,
                          hz = box.halfSize.z() * ez;
    const Eigen::Vector3d& c = box.center;
    // Sides -x, +x, -y, +y, -z, +z with edgeS x edgeT pointing outward.
    faces_.push_back(makeFace(c - hx + hy - hz, -2 * hy, 2 * hz));
    faces_.push_back(makeFace(c + hx - hy - hz, 2 * hy, 2 * hz));
    faces_.push_back(makeFace(c - hx - hy - hz, 2 * hx, 2 * hz));
    faces_.push_back(makeFace(c + hx + hy - hz, -2 * hx, 2 * hz));
    faces_.push_back(makeFace(c - hx - hy - hz, 2 * hy, 2 * hx));
    faces_.push_back(makeFace(c - hx - hy + hz, 2 * hx, 2 * hy));
  }
  require(!faces_.empty(), where + "has no surfaces");
  for (size_t f = 0; f < faces_.size(); ++f)
    faces_[f].texture =
        drawTexture(seed_, static_cast<int>(f), toEigen(faces_[f].normal), desc_.lightDir);
}

Eigen::Vector3d Scene::facePoint(int face, double s, double u) const {
  require(face >= 0 && face < static_cast<int>(faces_.size()),
          "face " + std::to_string(face) + " is not in the scene");
  const Face& f = faces_[face];
  return toEigen(f.origin + f.axisS * s + f.axisT * u);
}

Eigen::Vector3d Scene::albedo(int face, double s, double u) const {
  require(face >= 0 && face < static_cast<int>(faces_.size()),
          "face " + std::to_string(face) + " is not in the scene");
  return toEigen(evalSurfaceTexture(faces_[face].texture, s, u, Footprint{}));
}

std::optional<SurfaceHit> Scene::intersect(const Eigen::Vector3d& origin,
                                           const Eigen::Vector3d& dir) const {
  Hit h = castRay(view(), toVec3(origin), toVec3(dir));
  if (h.face < 0) return std::nullopt;
  SurfaceHit out;
  out.t = h.t;
  out.face = h.face;
  out.point = origin + h.t * dir;
  const Face& f = faces_[h.face];
  Vec3 q = toVec3(out.point) - f.origin;
  out.s = dot(q, f.axisS);
  out.u = dot(q, f.axisT);
  return out;
}

double Scene::distanceToSurface(const Eigen::Vector3d& p) const {
  double best = std::numeric_limits<double>::infinity();
  Vec3 pv = toVec3(p);
  for (const Face& f : faces_) {
    Vec3 q = pv - f.origin;
    double s = std::clamp(dot(q, f.axisS), 0.0, f.lenS);
    double u = std::clamp(dot(q, f.axisT), 0.0, f.lenT);
    Vec3 d = q - f.axisS * s - f.axisT * u;
    best = std::min(best, std::sqrt(dot(d, d)));
  }
  return best;
}

bool Scene::insideBox(const Eigen::Vector3d& p) const {
  for (const BoxPrimitive& b : boxes_) {
    Vec3 q = toVec3(p) - b.center;
    double lx = b.cosYaw * q.x + b.sinYaw * q.y, ly = -b.sinYaw * q.x + b.cosYaw * q.y;
    if (std::abs(lx) < b.half.x && std::abs(ly) < b.half.y && std::abs(q.z) < b.half.z) return true;
  }
  return false;
}

SceneView Scene::view() const {
  SceneView v;
  v.faces = faces_.data();
  v.numRects = numRects();
  v.boxes = boxes_.data();
  v.numBoxes = static_cast<int>(boxes_.size());
  v.skyHorizon = toVec3(desc_.skyHorizon);
  v.skyZenith = toVec3(desc_.skyZenith);
  return v;
}

}  // namespace vidmap::synth
