// CUDA scorer of hypothesis batches (see score_batch_cuda.h).
#include <algorithm>
#include <span>
#include <string>

#include "vidmap/geometry/score_batch_cuda.h"
#include "vidmap/geometry/score_reduce.cuh"
#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/gpu/event_timer.h"

namespace vidmap::geometry {
namespace {

constexpr int kThreads = 128;
constexpr int kPointsPerThread = 4;
constexpr int kPointsPerBlock = kThreads * kPointsPerThread;

__global__ void batchPartials(const BatchProblem* __restrict__ problems,
                              const double* __restrict__ points, const int* __restrict__ problem_of,
                              const double* __restrict__ models, double* __restrict__ partial_cost,
                              int* __restrict__ partial_inl) {
  __shared__ double model[kBatchModelStride];
  const long h = blockIdx.x;
  const BatchProblem p = problems[problem_of[h]];
  if (threadIdx.x < kBatchModelStride)
    model[threadIdx.x] = models[h * kBatchModelStride + threadIdx.x];
  __syncthreads();
  const int ps = pointStride(p.kind);
  const double* pts = points + p.offset;
  double cost = 0;
  int inl = 0;
  const int base = blockIdx.y * kPointsPerBlock;
  for (int k = 0; k < kPointsPerThread; ++k) {
    const int i = base + k * kThreads + threadIdx.x;
    if (i < p.num_points) {
      const double r2 = batchResidualSq(p.kind, model, pts + static_cast<long>(i) * ps);
      inl += r2 < p.threshold_sq;
      cost += msacCost(r2, p.threshold_sq);
    }
  }
  // Every lane reaches the reduction (no early return above).
  double c = 0;
  int n = 0;
  blockSumCostInliers<kThreads>(cost, inl, &c, &n);
  if (threadIdx.x == 0) {
    partial_cost[h * gridDim.y + blockIdx.y] = c;
    partial_inl[h * gridDim.y + blockIdx.y] = n;
  }
}

template <class T>
void ensure(gpu::Context& ctx, gpu::DeviceBuffer<T>& buf, std::size_t n) {
  if (buf.size() < n) buf = gpu::DeviceBuffer<T>(ctx, std::max<std::size_t>(n + n / 2, 1));
}

}  // namespace

struct CudaBatchScorer::Impl {
  explicit Impl(gpu::Context& c) : ctx(c), timer(c.device()) {}
  gpu::Context& ctx;
  gpu::EventTimer timer;
  int num_problems = 0;
  int max_points = 0;
  float last_ms = 0;
  gpu::DeviceBuffer<BatchProblem> problems;
  gpu::DeviceBuffer<double> points, models, partial_cost;
  gpu::DeviceBuffer<int> problem_of, partial_inl;
  gpu::DeviceBuffer<HypothesisScore> out;
};

CudaBatchScorer::CudaBatchScorer(gpu::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}

CudaBatchScorer::~CudaBatchScorer() = default;

void CudaBatchScorer::setProblems(const ScoreBatch& batch) {
  Impl& s = *impl_;
  s.max_points = 0;
  for (const BatchProblem& p : batch.problems) {
    require(p.offset >= 0 && p.num_points >= 0 &&
                p.offset + static_cast<long>(p.num_points) * pointStride(p.kind) <=
                    static_cast<long>(batch.points.size()),
            "CudaBatchScorer: a problem's points lie outside the batch");
    s.max_points = std::max(s.max_points, p.num_points);
  }
  s.ctx.makeCurrent();
  s.num_problems = static_cast<int>(batch.problems.size());
  ensure(s.ctx, s.problems, batch.problems.size());
  ensure(s.ctx, s.points, batch.points.size());
  if (!batch.problems.empty()) s.problems.upload(std::span<const BatchProblem>(batch.problems));
  if (!batch.points.empty()) s.points.upload(std::span<const double>(batch.points));
}

std::vector<HypothesisScore> CudaBatchScorer::scoreImpl(const HypothesisBatch& hyp) {
  Impl& s = *impl_;
  const int nh = hyp.size();
  require(hyp.models.size() == static_cast<size_t>(nh) * kBatchModelStride,
          "CudaBatchScorer: " + std::to_string(hyp.models.size()) + " model entries for " +
              std::to_string(nh) + " hypotheses");
  for (int p : hyp.problem)
    require(p >= 0 && p < s.num_problems, "CudaBatchScorer: a hypothesis names problem " +
                                              std::to_string(p) + " of " +
                                              std::to_string(s.num_problems));
  std::vector<HypothesisScore> result(nh);
  if (nh == 0) return result;
  s.ctx.makeCurrent();
  const int blocks = std::max(1, (s.max_points + kPointsPerBlock - 1) / kPointsPerBlock);
  require(blocks <= 65535, "CudaBatchScorer: a problem of " + std::to_string(s.max_points) +
                               " points; at most " + std::to_string(65535L * kPointsPerBlock));
  ensure(s.ctx, s.models, hyp.models.size());
  ensure(s.ctx, s.problem_of, hyp.problem.size());
  ensure(s.ctx, s.partial_cost, static_cast<size_t>(nh) * blocks);
  ensure(s.ctx, s.partial_inl, static_cast<size_t>(nh) * blocks);
  ensure(s.ctx, s.out, nh);
  const gpu::Stream& stream = s.ctx.stream();
  s.timer.start(stream);
  s.models.uploadAsync(std::span<const double>(hyp.models), stream);
  s.problem_of.uploadAsync(std::span<const int>(hyp.problem), stream);
  {
    auto t = s.ctx.profiler().time("geometry.score_batch", stream);
    batchPartials<<<dim3(nh, blocks), kThreads, 0, stream.handle()>>>(
        s.problems.data(), s.points.data(), s.problem_of.data(), s.models.data(),
        s.partial_cost.data(), s.partial_inl.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
    sumPartials<HypothesisScore><<<(nh + 127) / 128, 128, 0, stream.handle()>>>(
        nh, blocks, s.partial_cost.data(), s.partial_inl.data(), s.out.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  s.out.downloadAsync(std::span<HypothesisScore>(result), stream);
  s.timer.stop(stream);
  s.last_ms = s.timer.elapsedMs();  // waits for the download
  return result;
}

float CudaBatchScorer::lastDeviceMs() const { return impl_->last_ms; }

}  // namespace vidmap::geometry
