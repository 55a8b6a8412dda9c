// Ray casting against the primitives of a synthetic 3D scene: rectangles (walls, floors) and
// boxes turned about the vertical axis. Analytic intersections in double precision, shared
// by the CPU renderer and any device port (VIDMAP_HD, no CUDA types, no Eigen).
//
// Conventions: the world is right-handed with z up, lengths in metres. A rectangle is
// origin + s * axisS + t * axisT with s in [0, lenS], t in [0, lenT]; (s, t) are its texture
// coordinates in metres. Rectangles are two-sided. Boxes are solid and seen from outside
// only (slab test, Kay & Kajiya 1986); each box face is also stored as a rectangle, which
// gives its texture coordinates and plane.
#pragma once

#include <cmath>
#include <cstdint>

#include "vidmap/core/hd.h"
#include "vidmap/synth/surface_texture.h"

namespace vidmap::synth {

struct Face {
  Vec3 origin;
  Vec3 axisS;   // unit
  Vec3 axisT;   // unit, orthogonal to axisS
  Vec3 normal;  // axisS x axisT (outward for box faces)
  double lenS = 0;
  double lenT = 0;
  SurfaceTexture texture;
};

// A box with its own frame turned by yaw about world z. Faces firstFace + k, k = 0..5, are
// its -x, +x, -y, +y, -z, +z sides in the box frame.
struct BoxPrimitive {
  Vec3 center;
  Vec3 half;  // half sizes along the box axes
  double cosYaw = 1;
  double sinYaw = 0;
  int firstFace = 0;
};

// What the kernels see of a scene: faces [0, numRects) are free rectangles, the faces of
// the boxes follow.
struct SceneView {
  const Face* faces = nullptr;
  int numRects = 0;
  const BoxPrimitive* boxes = nullptr;
  int numBoxes = 0;
  Vec3 skyHorizon;
  Vec3 skyZenith;
};

struct Hit {
  double t = 0;   // ray parameter: point = origin + t * dir
  int face = -1;  // -1: nothing was hit (sky)
};

// Rays start a little in front of their origin so a surface point does not hit itself.
constexpr double kRayMinT = 1e-9;

VIDMAP_HD inline bool hitRect(const Face& f, Vec3 o, Vec3 d, double tMax, double* tHit) {
  double denom = dot(f.normal, d);
  if (fabs(denom) < 1e-15) return false;
  double t = dot(f.normal, f.origin - o) / denom;
  if (!(t > kRayMinT && t < tMax)) return false;
  Vec3 q = o + d * t - f.origin;
  double s = dot(q, f.axisS);
  double u = dot(q, f.axisT);
  if (s < 0 || s > f.lenS || u < 0 || u > f.lenT) return false;
  *tHit = t;
  return true;
}

// Slab test in the box frame. Returns the entry face (0..5) or -1; a ray starting inside the
// box sees nothing of it (cameras are kept outside solids).
VIDMAP_HD inline int hitBox(const BoxPrimitive& b, Vec3 o, Vec3 d, double tMax, double* tHit) {
  Vec3 p = o - b.center;
  // Most rays miss most boxes: reject by the bounding sphere first (no division).
  double pd = dot(p, d), dd = dot(d, d), r2 = dot(b.half, b.half);
  if (pd * pd - dd * (dot(p, p) - r2) < 0) return -1;
  double lo[3] = {b.cosYaw * p.x + b.sinYaw * p.y, -b.sinYaw * p.x + b.cosYaw * p.y, p.z};
  double ld[3] = {b.cosYaw * d.x + b.sinYaw * d.y, -b.sinYaw * d.x + b.cosYaw * d.y, d.z};
  double h[3] = {b.half.x, b.half.y, b.half.z};
  double tNear = -1e300, tFar = 1e300;
  int nearFace = -1;
  for (int a = 0; a < 3; ++a) {
    if (fabs(ld[a]) < 1e-15) {
      if (lo[a] < -h[a] || lo[a] > h[a]) return -1;
      continue;
    }
    double inv = 1.0 / ld[a];
    double t0 = (-h[a] - lo[a]) * inv;  // plane of the -a face
    double t1 = (h[a] - lo[a]) * inv;   // plane of the +a face
    int face0 = 2 * a;                  // the face the ray enters through on this axis
    if (t0 > t1) {
      double tt = t0;
      t0 = t1;
      t1 = tt;
      face0 = 2 * a + 1;
    }
    if (t0 > tNear) {
      tNear = t0;
      nearFace = face0;
    }
    if (t1 < tFar) tFar = t1;
  }
  if (nearFace < 0 || tNear > tFar || !(tNear > kRayMinT && tNear < tMax)) return -1;
  *tHit = tNear;
  return nearFace;
}

// The nearest surface along the ray o + t d, t > kRayMinT.
VIDMAP_HD inline Hit castRay(const SceneView& scene, Vec3 o, Vec3 d) {
  Hit best;
  double tBest = 1e300;
  for (int i = 0; i < scene.numRects; ++i) {
    double t;
    if (hitRect(scene.faces[i], o, d, tBest, &t)) {
      tBest = t;
      best.face = i;
    }
  }
  for (int i = 0; i < scene.numBoxes; ++i) {
    double t;
    int k = hitBox(scene.boxes[i], o, d, tBest, &t);
    if (k >= 0) {
      tBest = t;
      best.face = scene.boxes[i].firstFace + k;
    }
  }
  best.t = best.face >= 0 ? tBest : 0;
  return best;
}

}  // namespace vidmap::synth
