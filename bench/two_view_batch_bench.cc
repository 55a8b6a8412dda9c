// Pair verification of a keyframe's pairs: per pair (estimateRelativePose, parallelForDynamic
// over the pairs, the mapper's CPU path) against the lock-step batched verifier with the CPU
// batch scorer and, with a device, the CUDA one (two_view_batch.h). Synthetic video pairs with
// known truth (test_scene.h): a few degrees of rotation, a short baseline, 10% wrong matches,
// the true E as the guide's prior, F only when E fails (the mapper's options once the focal
// length is known). Prints JSON: the median wall time of each path over the repeats, the
// batched rounds and hypotheses, and whether every pair's geometry equals the per-pair one.
// Usage: two_view_batch_bench [pairs] [points] [repeats] [keyframes]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <vector>

#include "median_wall.h"
#include "vidmap/core/parallel.h"
#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/geometry/two_view_batch.h"
#include "vidmap/gpu/device.h"
#if defined(VIDMAP_HAVE_CUDA)
#include "vidmap/geometry/score_batch_cuda.h"
#endif

using namespace vidmap::geometry;
namespace t = vidmap::geometry::testing;

namespace {

bool same(const TwoViewGeometry& a, const TwoViewGeometry& b) {
  return a.config == b.config && a.E == b.E && a.F == b.F && a.H == b.H &&
         a.relative.R == b.relative.R && a.relative.t == b.relative.t &&
         a.inlier_mask == b.inlier_mask && a.point_indices == b.point_indices &&
         a.median_triangulation_angle_deg == b.median_triangulation_angle_deg;
}

}  // namespace

int main(int argc, char** argv) {
  const int P = argc > 1 ? std::atoi(argv[1]) : 8;
  const int N = argc > 2 ? std::atoi(argv[2]) : 800;
  const int R = argc > 3 ? std::atoi(argv[3]) : 5;
  const int K = argc > 4 ? std::atoi(argv[4]) : 10;  // keyframes (calls) per repeat
  std::deque<t::TwoViewScene> scenes;
  std::vector<TwoViewPair> pairs;
  for (int p = 0; p < P; ++p) {
    t::SceneOptions o;
    o.num_points = N;
    o.outlier_ratio = 0.1;
    o.max_rotation_deg = 5;
    o.baseline = 0.2 + 0.1 * p;
    const auto& s = scenes.emplace_back(t::makeTwoViewScene(o, 1000 + p));
    TwoViewPair q;
    q.pts1 = &s.px1;
    q.pts2 = &s.px2;
    q.cam1 = q.cam2 = s.cam;
    q.options.fundamental = TwoViewOptions::Fundamental::kWhenEssentialFails;
    q.essential_prior = essentialFromPose(s.rel);
    pairs.push_back(q);
  }
  std::vector<TwoViewGeometry> one(P);
  const double perPair = vidmap::bench::medianWallMs(R, [&] {
    for (int k = 0; k < K; ++k)
      vidmap::parallelForDynamic(
          P,
          [&](std::int64_t i) {
            const auto& q = pairs[i];
            one[i] = estimateRelativePose(*q.pts1, *q.pts2, q.cam1, q.cam2, q.options,
                                          &*q.essential_prior);
          },
          1);
  });
  auto run = [&](BatchScorer& scorer, const char* name, bool comma) {
    std::vector<TwoViewGeometry> g;
    TwoViewBatchStats st;
    const double ms = vidmap::bench::medianWallMs(R, [&] {
      for (int k = 0; k < K; ++k) g = estimateRelativePoses(pairs, scorer, {}, &st);
    });
    bool eq = g.size() == one.size();
    for (size_t i = 0; eq && i < g.size(); ++i) eq = same(g[i], one[i]);
    std::printf("  \"%s\": {\"ms\": %.3f, \"rounds\": %d, \"hypotheses\": %ld, \"equal\": %s}%s\n",
                name, ms / K, st.rounds, st.hypotheses, eq ? "true" : "false", comma ? "," : "");
  };
  std::printf("{\n  \"pairs\": %d, \"points\": %d, \"repeats\": %d, \"threads\": %d,\n", P, N, R,
              vidmap::maxThreads());
  std::printf("  \"per_pair\": {\"ms\": %.3f},\n", perPair / K);
  CpuBatchScorer cpu;
  const bool dev = vidmap::gpu::deviceCount() > 0;
  run(cpu, "batched_cpu", dev);
#if defined(VIDMAP_HAVE_CUDA)
  if (dev) {
    vidmap::gpu::Context ctx;
    CudaBatchScorer gpu(ctx);
    run(gpu, "batched_cuda", false);
  }
#endif
  std::printf("}\n");
  return 0;
}
