// Per-pixel rendering of a synthetic 3D scene by ray casting (host and device).
//
// Camera: pinhole, OpenCV/COLMAP axes (x right, y down, z forward), pixel centres at integer
// coordinates: pixel (x, y) covers [x - 0.5, x + 0.5] x [y - 0.5, y + 0.5] and its centre
// ray has direction R * ((x - cx) / fx, (y - cy) / fy, 1), R the camera-to-world rotation.
// Because the camera-z component of that direction is 1, the ray parameter of a hit is the
// hit's depth (camera z).
//
// Anti-aliasing (like multisampling): four rays on a rotated grid find the surfaces inside the
// pixel. Where all four hit the same face, the texture is shaded once at the centre ray,
// prefiltered by the pixel footprint; the footprint on the face comes from ray differentials
// (Igehy, "Tracing ray differentials", SIGGRAPH 1999). On silhouettes each of the four
// samples is shaded with half the footprint and the results are averaged.
#pragma once

#include <cmath>

#include "vidmap/core/hd.h"
#include "vidmap/synth/raycast.h"
#include "vidmap/synth/surface_texture.h"
#include "vidmap/synth/vec3.h"

namespace vidmap::synth {

struct CameraView {
  Vec3 center;      // camera centre in the world
  Vec3 rx, ry, rz;  // columns of the camera-to-world rotation (camera axes in the world)
  double fx = 1, fy = 1, cx = 0, cy = 0;
};

VIDMAP_HD inline Vec3 pixelRay(const CameraView& cam, double u, double v) {
  return cam.rx * ((u - cam.cx) / cam.fx) + cam.ry * ((v - cam.cy) / cam.fy) + cam.rz;
}

VIDMAP_HD inline Vec3 skyColor(const SceneView& scene, Vec3 d) {
  double up = d.z / sqrt(dot(d, d));
  return lerp(scene.skyHorizon, scene.skyZenith, clamp01(up));
}

// The albedo seen along ray d from the camera at hit h, the texture prefiltered by the
// footprint of `scale` pixels (1: a whole pixel, 0.5: a quarter-pixel sample).
VIDMAP_HD inline Vec3 shadeHit(const SceneView& scene, const CameraView& cam, Vec3 d, Hit h,
                               double scale) {
  if (h.face < 0) return skyColor(scene, d);
  const Face& f = scene.faces[h.face];
  Vec3 q = cam.center + d * h.t - f.origin;
  double s = dot(q, f.axisS), t = dot(q, f.axisT);
  // dP/du = t * (dd/du - d * (n . dd/du) / (n . d)) for the plane with normal n.
  double dn = dot(f.normal, d);
  Vec3 ddu = cam.rx * (scale / cam.fx), ddv = cam.ry * (scale / cam.fy);
  Vec3 dPu = (ddu - d * (dot(f.normal, ddu) / dn)) * h.t;
  Vec3 dPv = (ddv - d * (dot(f.normal, ddv) / dn)) * h.t;
  Footprint fp;
  fp.ws = fabs(dot(dPu, f.axisS)) + fabs(dot(dPv, f.axisS));
  fp.wt = fabs(dot(dPu, f.axisT)) + fabs(dot(dPv, f.axisT));
  // Grazing rays: a footprint of many metres only means "the mean colour".
  if (!(fp.ws < 100)) fp.ws = 100;
  if (!(fp.wt < 100)) fp.wt = 100;
  return evalSurfaceTexture(f.texture, s, t, fp);
}

// Rotated-grid sample offsets (in pixels) of the four anti-aliasing rays.
VIDMAP_HD inline void rotatedGridOffset(int k, double* ox, double* oy) {
  const double a = 0.125, b = 0.375;
  switch (k) {
    case 0:
      *ox = -a;
      *oy = -b;
      break;
    case 1:
      *ox = b;
      *oy = -a;
      break;
    case 2:
      *ox = a;
      *oy = b;
      break;
    default:
      *ox = -b;
      *oy = a;
      break;
  }
}

// The colour (linear [0, 1]) of pixel (x, y). antialias = false: one ray at the centre with
// the texture point-sampled (the reference of a plain pinhole render).
VIDMAP_HD inline Vec3 renderPixel(const SceneView& scene, const CameraView& cam, int x, int y,
                                  bool antialias) {
  if (!antialias) {
    Vec3 d = pixelRay(cam, x, y);
    return shadeHit(scene, cam, d, castRay(scene, cam.center, d), 0.0);
  }
  Vec3 dirs[4];
  Hit hits[4];
  bool same = true;
  for (int k = 0; k < 4; ++k) {
    double ox, oy;
    rotatedGridOffset(k, &ox, &oy);
    dirs[k] = pixelRay(cam, x + ox, y + oy);
    hits[k] = castRay(scene, cam.center, dirs[k]);
    if (hits[k].face != hits[0].face) same = false;
  }
  if (same) {
    Vec3 d = pixelRay(cam, x, y);
    Hit h = hits[0];
    if (h.face >= 0) {
      // The centre ray meets the same (convex) face: intersect its plane directly.
      const Face& f = scene.faces[h.face];
      h.t = dot(f.normal, f.origin - cam.center) / dot(f.normal, d);
    }
    return shadeHit(scene, cam, d, h, 1.0);
  }
  Vec3 sum;
  for (int k = 0; k < 4; ++k) sum = sum + shadeHit(scene, cam, dirs[k], hits[k], 0.5);
  return sum * 0.25;
}

// The depth (camera z, metres) of the surface at the centre of pixel (x, y); 0 for the sky.
VIDMAP_HD inline double renderDepthPixel(const SceneView& scene, const CameraView& cam, int x,
                                         int y) {
  Hit h = castRay(scene, cam.center, pixelRay(cam, x, y));
  return h.face >= 0 ? h.t : 0.0;
}

}  // namespace vidmap::synth
