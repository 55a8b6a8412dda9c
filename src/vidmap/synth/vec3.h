// A plain 3-vector of doubles for the per-pixel code of the synthetic renderer (host and
// device; Eigen stays in the host-side API).
#pragma once

#include <cmath>

#include "vidmap/core/hd.h"

namespace vidmap::synth {

struct Vec3 {
  double x = 0, y = 0, z = 0;
};

VIDMAP_HD inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
VIDMAP_HD inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
VIDMAP_HD inline Vec3 operator*(Vec3 a, double k) { return {a.x * k, a.y * k, a.z * k}; }
VIDMAP_HD inline Vec3 mul(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
VIDMAP_HD inline double dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
VIDMAP_HD inline Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
VIDMAP_HD inline Vec3 normalized(Vec3 a) { return a * (1.0 / sqrt(dot(a, a))); }
VIDMAP_HD inline Vec3 lerp(Vec3 a, Vec3 b, double w) { return a + (b - a) * w; }

}  // namespace vidmap::synth
