// CUDA batched hypothesis scorer (see score_cuda.h). Kernel 1: grid (point blocks, models);
// each thread sums batchResidualSq over a strided set of points, the block reduces by warp
// shuffles and one shared-memory pass and writes one partial per (model, block). Kernel 2: one
// thread per model adds its partials in block order.
#include <algorithm>
#include <span>
#include <string>

#include "vidmap/geometry/score_cuda.h"
#include "vidmap/geometry/score_reduce.cuh"
#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/gpu/event_timer.h"

namespace vidmap::geometry {
namespace {

constexpr int kThreads = 256;
constexpr int kPointsPerThread = 4;
constexpr int kPointsPerBlock = kThreads * kPointsPerThread;

__global__ void scorePartials(ModelKind kind, const double* __restrict__ models,
                              const double* __restrict__ points, int num_points, double t2,
                              double* __restrict__ partial_cost, int* __restrict__ partial_inl) {
  const int ms = modelStride(kind), ps = pointStride(kind);
  __shared__ double model[12];
  const int m = blockIdx.y;
  if (threadIdx.x < ms) model[threadIdx.x] = models[static_cast<long>(m) * ms + threadIdx.x];
  __syncthreads();
  double cost = 0;
  int inl = 0;
  const int base = blockIdx.x * kPointsPerBlock;
  for (int k = 0; k < kPointsPerThread; ++k) {
    const int i = base + k * kThreads + threadIdx.x;
    if (i < num_points) {
      const double r2 = batchResidualSq(kind, model, points + static_cast<long>(i) * ps);
      inl += r2 < t2;
      cost += msacCost(r2, t2);
    }
  }
  // Every lane reaches the reduction (no early return above).
  double c = 0;
  int n = 0;
  blockSumCostInliers<kThreads>(cost, inl, &c, &n);
  if (threadIdx.x == 0) {
    partial_cost[static_cast<long>(m) * gridDim.x + blockIdx.x] = c;
    partial_inl[static_cast<long>(m) * gridDim.x + blockIdx.x] = n;
  }
}

// Grows a buffer to at least n elements (contents not kept).
template <class T>
void ensure(gpu::Context& ctx, gpu::DeviceBuffer<T>& buf, std::size_t n) {
  if (buf.size() < n) buf = gpu::DeviceBuffer<T>(ctx, std::max<std::size_t>(n, 1));
}

}  // namespace

struct CudaHypothesisScorer::Impl {
  explicit Impl(gpu::Context& c) : ctx(c), timer(c.device()) {}
  gpu::Context& ctx;
  gpu::EventTimer timer;
  ModelKind kind = ModelKind::kEpipolar;
  int num_points = 0;
  float last_ms = 0;
  gpu::DeviceBuffer<double> points, models, partial_cost;
  gpu::DeviceBuffer<int> partial_inl;
  gpu::DeviceBuffer<HypothesisScore> out;
};

CudaHypothesisScorer::CudaHypothesisScorer(gpu::Context& ctx)
    : impl_(std::make_unique<Impl>(ctx)) {}

CudaHypothesisScorer::~CudaHypothesisScorer() = default;

void CudaHypothesisScorer::setPoints(ModelKind kind, const std::vector<double>& points) {
  const size_t ps = pointStride(kind);
  require(points.size() % ps == 0, "CUDA scorer: points size " + std::to_string(points.size()) +
                                       " is not a multiple of " + std::to_string(ps));
  Impl& s = *impl_;
  s.ctx.makeCurrent();
  s.kind = kind;
  s.num_points = static_cast<int>(points.size() / ps);
  ensure(s.ctx, s.points, points.size());
  if (!points.empty()) s.points.upload(std::span<const double>(points));
}

std::vector<HypothesisScore> CudaHypothesisScorer::score(const std::vector<double>& models,
                                                         double threshold_sq) {
  Impl& s = *impl_;
  const size_t ms = modelStride(s.kind);
  require(models.size() % ms == 0, "CUDA scorer: models size " + std::to_string(models.size()) +
                                       " is not a multiple of " + std::to_string(ms));
  require(threshold_sq > 0, "CUDA scorer: threshold_sq must be positive");
  const int nm = static_cast<int>(models.size() / ms);
  std::vector<HypothesisScore> result(nm);
  if (nm == 0) return result;
  require(nm <= 65535, "CUDA scorer: " + std::to_string(nm) +
                           " hypotheses in one batch; at most 65535 (the grid's y extent)");
  s.ctx.makeCurrent();
  const int blocks = std::max(1, (s.num_points + kPointsPerBlock - 1) / kPointsPerBlock);
  ensure(s.ctx, s.points, 1);
  ensure(s.ctx, s.models, models.size());
  ensure(s.ctx, s.partial_cost, static_cast<size_t>(nm) * blocks);
  ensure(s.ctx, s.partial_inl, static_cast<size_t>(nm) * blocks);
  ensure(s.ctx, s.out, nm);
  const gpu::Stream& stream = s.ctx.stream();
  s.timer.start(stream);
  s.models.uploadAsync(std::span<const double>(models), stream);
  {
    auto t = s.ctx.profiler().time("geometry.score", stream);
    scorePartials<<<dim3(blocks, nm), kThreads, 0, stream.handle()>>>(
        s.kind, s.models.data(), s.points.data(), s.num_points, threshold_sq, s.partial_cost.data(),
        s.partial_inl.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
    sumPartials<HypothesisScore><<<(nm + 127) / 128, 128, 0, stream.handle()>>>(
        nm, blocks, s.partial_cost.data(), s.partial_inl.data(), s.out.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  s.out.downloadAsync(std::span<HypothesisScore>(result), stream);
  s.timer.stop(stream);
  s.last_ms = s.timer.elapsedMs();  // waits for the download
  return result;
}

float CudaHypothesisScorer::lastDeviceMs() const { return impl_->last_ms; }

}  // namespace vidmap::geometry
