// The batched hypothesis scorer: CPU (vidmap::parallelFor over hypotheses, all OpenMP threads
// unless OMP_NUM_THREADS says otherwise) against CUDA (one launch per batch, correspondences
// resident on the device), 512 hypotheses x 4096 correspondences by default, for essential
// matrices (Sampson) and absolute poses (reprojection). Prints JSON with the median wall time of
// each, the device time of the CUDA call (events: model upload, kernels, download) and the
// agreement of the scores. Usage: geometry_scorer [hypotheses] [points] [repeats].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "median_wall.h"
#include "vidmap/core/parallel.h"
#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/ransac_batched.h"
#include "vidmap/geometry/scorer.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/gpu/device.h"
#if defined(VIDMAP_HAVE_CUDA)
#include "vidmap/geometry/score_cuda.h"
#endif

using namespace vidmap::geometry;
namespace t = vidmap::geometry::testing;

namespace {

std::string run(const char* name, ModelKind kind, const std::vector<double>& models,
                const std::vector<double>& points, double t2, int repeats) {
  std::vector<HypothesisScore> cpu;
  const double cpu_ms = vidmap::bench::medianWallMs(
      repeats, [&] { cpu = scoreHypothesesCpu(kind, models, points, t2); });
  const int nm = static_cast<int>(models.size() / modelStride(kind));
  const int np = static_cast<int>(points.size() / pointStride(kind));
  char buf[768];
  std::string gpu = "null";
#if defined(VIDMAP_HAVE_CUDA)
  if (vidmap::gpu::deviceCount() > 0) {
    vidmap::gpu::Context ctx;
    CudaHypothesisScorer scorer(ctx);
    scorer.setPoints(kind, points);
    std::vector<HypothesisScore> dev = scorer.score(models, t2);  // warm-up
    std::vector<double> dev_ms;
    const double wall_ms = vidmap::bench::medianWallMs(repeats, [&] {
      dev = scorer.score(models, t2);
      dev_ms.push_back(scorer.lastDeviceMs());
    });
    std::sort(dev_ms.begin(), dev_ms.end());
    double max_rel = 0;
    int count_diff = 0;
    for (int m = 0; m < nm; ++m) {
      max_rel =
          std::max(max_rel, std::abs(dev[m].cost - cpu[m].cost) / std::max(cpu[m].cost, 1e-300));
      count_diff += std::abs(dev[m].inliers - cpu[m].inliers);
    }
    std::snprintf(buf, sizeof(buf),
                  "{\"wall_ms\": %.4f, \"device_ms\": %.4f, \"speedup_wall\": %.1f, "
                  "\"max_rel_cost_diff\": %.3g, \"inlier_count_diff\": %d, \"same_best\": %s}",
                  wall_ms, dev_ms[dev_ms.size() / 2], cpu_ms / wall_ms, max_rel, count_diff,
                  bestHypothesis(cpu) == bestHypothesis(dev) ? "true" : "false");
    gpu = buf;
  }
#endif
  std::snprintf(buf, sizeof(buf),
                "{\"case\": \"%s\", \"hypotheses\": %d, \"points\": %d, \"cpu\": {\"threads\": %d, "
                "\"ms\": %.4f, \"ns_per_pair\": %.3f}, \"cuda\": ",
                name, nm, np, vidmap::maxThreads(), cpu_ms, cpu_ms * 1e6 / (double(nm) * np));
  return std::string(buf) + gpu + "}";
}

// A whole essential-matrix RANSAC on the same correspondences: the sequential CPU loop, and the
// batched loop (batches of 512 samples) with the CPU and the CUDA scorer.
std::string ransacRun(const Vec2List& x1, const Vec2List& x2, int repeats) {
  EssentialEstimator est(x1, x2);
  RansacOptions ro;
  ro.max_error = 2.0 / 500;
  auto flatten = [](const Mat3R& m, std::vector<double>* f) { appendModel(m, f); };
  RansacResult<Mat3R> r;
  const double seq_ms = vidmap::bench::medianWallMs(repeats, [&] { r = ransac(est, ro); });
  const int seq_it = r.iterations, seq_inl = r.num_inliers;
  const double cpu_ms = vidmap::bench::medianWallMs(repeats, [&] {
    r = ransacBatched(est, ro, 512, flatten, [&](const std::vector<double>& f, double t2) {
      return scoreHypothesesCpu(ModelKind::kEpipolar, f, est.packed(), t2);
    });
  });
  const int b_it = r.iterations, b_inl = r.num_inliers;
  char buf[512];
  std::string gpu = "null";
#if defined(VIDMAP_HAVE_CUDA)
  if (vidmap::gpu::deviceCount() > 0) {
    vidmap::gpu::Context ctx;
    CudaHypothesisScorer scorer(ctx);
    const double gpu_ms = vidmap::bench::medianWallMs(repeats, [&] {
      scorer.setPoints(ModelKind::kEpipolar, est.packed());  // per pair, included
      r = ransacBatched(est, ro, 512, flatten, [&](const std::vector<double>& f, double t2) {
        return scorer.score(f, t2);
      });
    });
    std::snprintf(buf, sizeof(buf), "{\"ms\": %.3f, \"iterations\": %d, \"inliers\": %d}", gpu_ms,
                  r.iterations, r.num_inliers);
    gpu = buf;
  }
#endif
  std::snprintf(buf, sizeof(buf),
                "{\"case\": \"essential RANSAC, %d points, 50%% outliers\", "
                "\"sequential_cpu\": {\"ms\": %.3f, \"iterations\": %d, \"inliers\": %d}, "
                "\"batched_cpu\": {\"ms\": %.3f, \"iterations\": %d, \"inliers\": %d}, "
                "\"batched_cuda\": ",
                est.numData(), seq_ms, seq_it, seq_inl, cpu_ms, b_it, b_inl);
  return std::string(buf) + gpu + "}";
}

}  // namespace

int main(int argc, char** argv) {
  const int nm = argc > 1 ? std::atoi(argv[1]) : 512;
  const int np = argc > 2 ? std::atoi(argv[2]) : 4096;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 20;
  t::SceneOptions o;
  o.num_points = np;
  o.outlier_ratio = 0.5;
  const auto s = t::makeTwoViewScene(o, 1);
  std::vector<double> pts;
  for (int i = 0; i < np; ++i) {
    const Vec2 a = s.cam.normalize(s.px1[i]), b = s.cam.normalize(s.px2[i]);
    pts.insert(pts.end(), {a.x(), a.y(), b.x(), b.y()});
  }
  std::mt19937_64 rng(2);
  std::vector<double> models;
  for (int m = 0; m < nm; ++m) {
    const Pose rel{t::randomRotation(rng, 2) * s.rel.R,
                   (s.rel.t + 0.05 * Vec3::Random()).normalized()};
    const Eigen::Matrix<double, 3, 3, Eigen::RowMajor> E = essentialFromPose(rel);
    models.insert(models.end(), E.data(), E.data() + 9);
  }
  const std::string e = run("essential (Sampson)", ModelKind::kEpipolar, models, pts,
                            std::pow(2.0 / 500, 2), repeats);
  const auto q = t::makePnPScene(o, 3);
  std::vector<double> pp, pm;
  for (int i = 0; i < np; ++i) {
    const Vec2 x = q.cam.normalize(q.px[i]);
    pp.insert(pp.end(), {q.X[i].x(), q.X[i].y(), q.X[i].z(), x.x(), x.y()});
  }
  for (int m = 0; m < nm; ++m) {
    Eigen::Matrix<double, 3, 4, Eigen::RowMajor> P;
    P << t::randomRotation(rng, 2) * q.pose.R, q.pose.t + 0.05 * Vec3::Random();
    pm.insert(pm.end(), P.data(), P.data() + 12);
  }
  const std::string p = run("absolute pose (reprojection)", ModelKind::kProjection, pm, pp,
                            std::pow(3.0 / 500, 2), repeats);
  Vec2List x1, x2;
  for (int i = 0; i < np; ++i) {
    x1.push_back(s.cam.normalize(s.px1[i]));
    x2.push_back(s.cam.normalize(s.px2[i]));
  }
  const std::string r = ransacRun(x1, x2, std::max(1, repeats / 4));
  std::printf("{\n  \"benchmark\": \"geometry_scorer\",\n  \"repeats\": %d,\n", repeats);
  std::printf("  \"results\": [\n    %s,\n    %s,\n    %s\n  ]\n}\n", e.c_str(), p.c_str(),
              r.c_str());
  return 0;
}
