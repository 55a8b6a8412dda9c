// Ground-truth correspondences between two views of a synthetic scene: where the surface
// point seen through a pixel of one camera appears in another, or nothing when it is
// hidden there (occluded, behind the camera) or when the pixel sees only the sky. For scoring
// trackers and matchers on rendered sequences (e.g. KLT end-point error against the truth).
#pragma once

#include <optional>

#include <Eigen/Core>

#include "vidmap/synth/camera.h"
#include "vidmap/synth/scene3d.h"

namespace vidmap::synth {

struct Correspondence {
  Eigen::Vector2d uv;     // pixel coordinates in view b (OpenCV convention, may be outside)
  Eigen::Vector3d point;  // the surface point in the world
  double depthA = 0;      // its camera z in view a and b
  double depthB = 0;
  int face = -1;  // the face it lies on (Scene::faces())
};

// The surface point through pixel (u, v) of view a (pose a) seen in view b. Visibility in b:
// nothing nearer on the ray from b's centre to the point (relative tolerance 1e-9).
std::optional<Correspondence> trueCorrespondence(const Scene& scene, const PinholeCamera& camera,
                                                 const Pose& a, const Pose& b, double u, double v);

}  // namespace vidmap::synth
