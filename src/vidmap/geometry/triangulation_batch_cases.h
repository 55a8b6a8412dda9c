// A keyframe's worth of tracks with known truth for the batched triangulation tests (CPU and
// CUDA): a ring of views around points 4-8 units away, tracks of 2 to 6 views with 0.5 px of
// noise, and the cases each check must catch (a view 30 px off, a point behind the cameras,
// far points with almost parallel rays, a non-finite pixel).
#pragma once

#include <random>
#include <vector>

#include "vidmap/geometry/test_scene.h"
#include "vidmap/geometry/triangulation_batch.h"

namespace vidmap::geometry::testing {

struct TriangulationCase {
  TriangulationBatch batch;
  std::vector<Pose> poses;  // of the views
  std::vector<Vec3> truth;  // of the tracks
  std::vector<int> kind;    // 0 clean, 1 one view off, 2 behind, 3 far, 4 NaN pixel
  Pinhole camera{525, 520, 319.5, 239.5};
};

inline TriangulationCase makeTriangulationCase(int tracks, std::uint64_t seed) {
  TriangulationCase c;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::normal_distribution<double> noise(0, 0.5);
  for (int v = 0; v < 8; ++v) {
    const double a = 0.08 * v;
    const Vec3 centre(2 * std::sin(a), 0.1 * u(rng), 2 - 2 * std::cos(a));
    const Mat3 R = randomRotation(rng, 4);
    c.poses.push_back({R, -R * centre});
    c.batch.addView(c.poses.back(), c.camera);
  }
  for (int t = 0; t < tracks; ++t) {
    const int kind = t % 10 < 6 ? 0 : t % 10 - 5;  // 60% clean, 10% each other case
    Vec3 X(2 * u(rng), 1.5 * u(rng), 6 + 2 * u(rng));
    if (kind == 3) X *= 25;  // 100-200 units: at most about 0.5 degrees of parallax
    const int n = 2 + static_cast<int>(rng() % 5);
    std::vector<int> views;
    while (static_cast<int>(views.size()) < n) {
      const int v = static_cast<int>(rng() % 8);
      bool dup = false;
      for (int w : views) dup |= w == v;
      if (!dup) views.push_back(v);
    }
    std::vector<Vec2> px;
    for (int v : views) {
      const Vec3 p = c.poses[v].apply(X);
      px.push_back(c.camera.project(p.hnormalized()) + Vec2(noise(rng), noise(rng)));
    }
    if (kind == 1) px[rng() % n] += Vec2(30, -20);
    if (kind == 2)  // the mirror image through the first camera: rays meet behind it
      for (int i = 0; i < n; ++i)
        px[i] = c.camera.project(c.poses[views[i]].apply(-X).hnormalized());
    if (kind == 4) px[rng() % n].y() = std::nan("");
    c.batch.addTrack(views.data(), px.data(), n);
    c.truth.push_back(X);
    c.kind.push_back(kind);
  }
  return c;
}

}  // namespace vidmap::geometry::testing
