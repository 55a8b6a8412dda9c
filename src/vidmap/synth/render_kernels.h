// Per-pixel rendering of a synthetic 3D scene by ray casting (host and device).
//
// Camera: pinhole, OpenCV/COLMAP axes (x right, y down, z forward), pixel centres at integer
// coordinates: pixel (x, y) covers [x - 0.5, x + 0.5] x [y - 0.5, y + 0.5] and its centre
// ray has direction R * ((x - cx) / fx, (y - cy) / fy, 1), R the camera-to-world rotation.
// Because the camera-z component of that direction is 1, the ray parameter of a hit is the
// hit's depth (camera z).
//
// Anti-aliasing (like multisampling), in two passes: first one ray through every pixel
// centre finds the surface there (centreHit). A pixel whose 3x3 neighbourhood of centres
// all meet the same face lies inside that face's image (faces are convex), so its texture
// is shaded once at the centre ray, prefiltered by the pixel footprint; the footprint on the
// face comes from ray differentials (Igehy, "Tracing ray differentials", SIGGRAPH 1999).
// Other pixels (silhouettes, the image border) cast four rays on a rotated grid, shade each
// with half the footprint and average them.
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

// Pass 1: the surface at the centre of pixel (x, y).
VIDMAP_HD inline Hit centreHit(const SceneView& scene, const CameraView& cam, int x, int y) {
  return castRay(scene, cam.center, pixelRay(cam, x, y));
}

// The average of four rotated-grid rays, each shaded with half the pixel footprint.
VIDMAP_HD inline Vec3 supersampledPixel(const SceneView& scene, const CameraView& cam, int x,
                                        int y) {
  Vec3 sum;
  for (int k = 0; k < 4; ++k) {
    double ox, oy;
    rotatedGridOffset(k, &ox, &oy);
    Vec3 d = pixelRay(cam, x + ox, y + oy);
    sum = sum + shadeHit(scene, cam, d, castRay(scene, cam.center, d), 0.5);
  }
  return sum * 0.25;
}

// Pass 2: the anti-aliased colour (linear [0, 1]) of pixel (x, y), given the centre hits of
// all pixels (row-major, width x height).
VIDMAP_HD inline Vec3 antialiasedPixel(const SceneView& scene, const CameraView& cam,
                                       const Hit* centres, int width, int height, int x, int y) {
  const Hit h = centres[static_cast<long>(y) * width + x];
  bool interior = x > 0 && y > 0 && x + 1 < width && y + 1 < height;
  for (int dy = -1; dy <= 1 && interior; ++dy)
    for (int dx = -1; dx <= 1 && interior; ++dx)
      interior = centres[static_cast<long>(y + dy) * width + x + dx].face == h.face;
  if (interior) return shadeHit(scene, cam, pixelRay(cam, x, y), h, 1.0);
  return supersampledPixel(scene, cam, x, y);
}

// One ray through the pixel centre, the texture point-sampled (aliases; the reference of a
// plain pinhole render).
VIDMAP_HD inline Vec3 pointSampledPixel(const SceneView& scene, const CameraView& cam, int x,
                                        int y) {
  Vec3 d = pixelRay(cam, x, y);
  return shadeHit(scene, cam, d, castRay(scene, cam.center, d), 0.0);
}

// The depth (camera z, metres) of the surface at the centre of pixel (x, y); 0 for the sky.
VIDMAP_HD inline double renderDepthPixel(const SceneView& scene, const CameraView& cam, int x,
                                         int y) {
  Hit h = castRay(scene, cam.center, pixelRay(cam, x, y));
  return h.face >= 0 ? h.t : 0.0;
}

}  // namespace vidmap::synth
