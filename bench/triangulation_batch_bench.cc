// Batched triangulation and PnP on CPU and CUDA (issue 13): the crossover of the mapper's
// choices. (1) triangulateBatch on the CPU (one thread and all threads) against
// CudaTriangulator (uploads, kernel, download) on batches of 64 to 65536 tracks of 2 to 6
// views (triangulation_batch_cases.h, known truth); (2) estimatePnP per sample against its
// lock-step form with the CPU and the CUDA batch scorer on video-like PnP problems (300 and
// 2000 correspondences, 10% wrong). Prints one JSON object a line: median wall ms of each
// path and whether the results equal the CPU's (triangulation: every status and point within
// 1e-10 relative; PnP: pose and inliers bit for bit).
// Usage: triangulation_batch_bench [repeats]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "median_wall.h"
#include "vidmap/core/parallel.h"
#include "vidmap/geometry/pnp.h"
#include "vidmap/geometry/score_batch.h"
#include "vidmap/geometry/triangulation_batch_cases.h"
#include "vidmap/gpu/device.h"
#if defined(VIDMAP_HAVE_CUDA)
#include "vidmap/geometry/score_batch_cuda.h"
#include "vidmap/geometry/triangulation_batch_cuda.h"
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

using namespace vidmap::geometry;
using vidmap::bench::medianWallMs;

namespace {

bool close(const std::vector<TrackTriangulation>& a, const std::vector<TrackTriangulation>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].status != b[i].status) return false;
    if ((a[i].X - b[i].X).norm() > 1e-10 * std::max(1.0, a[i].X.norm())) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int R = argc > 1 ? std::atoi(argv[1]) : 21;
  const bool device = vidmap::gpu::deviceCount() > 0;
#if defined(VIDMAP_HAVE_CUDA)
  std::unique_ptr<vidmap::gpu::Context> ctx;
  std::unique_ptr<CudaTriangulator> cudaTri;
  std::unique_ptr<CudaBatchScorer> cudaScorer;
  if (device) {
    ctx = std::make_unique<vidmap::gpu::Context>();
    cudaTri = std::make_unique<CudaTriangulator>(*ctx);
    cudaScorer = std::make_unique<CudaBatchScorer>(*ctx);
  }
#endif
  const int threads = vidmap::maxThreads();
  for (int n : {64, 256, 1024, 4096, 16384, 65536}) {
    const auto c = testing::makeTriangulationCase(n, 100 + n);
    std::vector<TrackTriangulation> cpu, cpu1, gpu;
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    const double ms1 = medianWallMs(R, [&] { cpu1 = triangulateBatch(c.batch); });
#if defined(_OPENMP)
    omp_set_num_threads(threads);
#endif
    const double msN = medianWallMs(R, [&] { cpu = triangulateBatch(c.batch); });
    double msG = -1, devMs = -1;
    bool eq = true;
#if defined(VIDMAP_HAVE_CUDA)
    if (device) {
      gpu = cudaTri->triangulate(c.batch);  // warm-up
      msG = medianWallMs(R, [&] { gpu = cudaTri->triangulate(c.batch); });
      devMs = cudaTri->lastDeviceMs();
      eq = close(cpu, gpu);
    }
#endif
    std::printf(
        "{\"bench\": \"triangulate\", \"tracks\": %d, \"observations\": %zu, "
        "\"cpu_1_thread_ms\": %.4f, \"cpu_%d_threads_ms\": %.4f, \"cuda_wall_ms\": %.4f, "
        "\"cuda_device_ms\": %.4f, \"cuda_equal\": %s, \"threads_equal\": %s}\n",
        n, c.batch.view_of.size(), ms1, threads, msN, msG, devMs, eq ? "true" : "false",
        close(cpu, cpu1) ? "true" : "false");
  }
  for (int points : {300, 2000}) {
    testing::SceneOptions o;
    o.num_points = points;
    o.noise_px = 1.0;
    o.outlier_ratio = 0.1;
    const auto s = testing::makePnPScene(o, 77);
    PnPResult a, b, g;
    const double msA = medianWallMs(R, [&] { a = estimatePnP(s.px, s.X, s.cam); });
    CpuBatchScorer cpuScorer;
    const double msB =
        medianWallMs(R, [&] { b = estimatePnP(s.px, s.X, s.cam, PnPOptions{}, cpuScorer); });
    double msG = -1;
    bool gEq = true;
#if defined(VIDMAP_HAVE_CUDA)
    if (device) {
      g = estimatePnP(s.px, s.X, s.cam, PnPOptions{}, *cudaScorer);
      msG = medianWallMs(R, [&] { g = estimatePnP(s.px, s.X, s.cam, PnPOptions{}, *cudaScorer); });
      gEq = g.pose.R == a.pose.R && g.pose.t == a.pose.t && g.inlier_mask == a.inlier_mask;
    }
#endif
    const bool bEq = b.pose.R == a.pose.R && b.pose.t == a.pose.t && b.inlier_mask == a.inlier_mask;
    std::printf(
        "{\"bench\": \"pnp\", \"points\": %d, \"iterations\": %d, \"per_sample_ms\": %.4f, "
        "\"lockstep_cpu_ms\": %.4f, \"lockstep_cuda_ms\": %.4f, \"rounds_cpu\": %ld, "
        "\"cpu_equal\": %s, \"cuda_equal\": %s}\n",
        points, a.iterations, msA, msB, msG, cpuScorer.calls() / (R > 0 ? R : 1),
        bEq ? "true" : "false", gEq ? "true" : "false");
  }
  return 0;
}
