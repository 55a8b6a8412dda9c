#include "vidmap/synth/correspondence.h"

#include <cmath>

namespace vidmap::synth {

std::optional<Correspondence> trueCorrespondence(const Scene& scene, const PinholeCamera& camera,
                                                 const Pose& a, const Pose& b, double u, double v) {
  const Eigen::Vector3d dirA = a.q * camera.unproject(u, v);  // camera z = 1: t is depth
  auto hitA = scene.intersect(a.t, dirA);
  if (!hitA) return std::nullopt;
  Correspondence c;
  c.point = hitA->point;
  c.depthA = hitA->t;
  c.face = hitA->face;
  const Eigen::Vector3d inB = b.toCamera(c.point);
  if (!(inB.z() > 1e-9)) return std::nullopt;
  // Along b's ray to the point (t = 1 at the point) nothing may come first.
  auto hitB = scene.intersect(b.t, c.point - b.t);
  if (!hitB || hitB->t < 1 - 1e-9) return std::nullopt;
  c.depthB = inB.z();
  c.uv = camera.project(inB);
  return c;
}

}  // namespace vidmap::synth
