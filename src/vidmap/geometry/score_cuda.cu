// CUDA batched hypothesis scorer (see score_cuda.h). Kernel 1: grid (point blocks, models);
// each thread sums batchResidualSq over a strided set of points, the block reduces by warp
// shuffles and one shared-memory pass and writes one partial per (model, block). Kernel 2: one
// thread per model adds its partials in block order. Plain CUDA runtime (the gpu module had not
// landed when this was written).
#include <cuda_runtime.h>

#include <string>

#include "vidmap/core/error.h"
#include "vidmap/geometry/score_cuda.h"

namespace vidmap::geometry {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(std::string("CUDA scorer: ") + what + ": " + cudaGetErrorString(e));
}

constexpr int kThreads = 256;
constexpr int kPointsPerThread = 4;
constexpr int kPointsPerBlock = kThreads * kPointsPerThread;

__global__ void scorePartials(ModelKind kind, const double* __restrict__ models,
                              const double* __restrict__ points, int num_points, double t2,
                              double* __restrict__ partial_cost, int* __restrict__ partial_inl) {
  const int ms = modelStride(kind), ps = pointStride(kind);
  __shared__ double model[12];
  __shared__ double warp_cost[kThreads / 32];
  __shared__ int warp_inl[kThreads / 32];
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
  for (int off = 16; off > 0; off >>= 1) {
    cost += __shfl_xor_sync(0xffffffffu, cost, off);
    inl += __shfl_xor_sync(0xffffffffu, inl, off);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_cost[warp] = cost;
    warp_inl[warp] = inl;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double c = 0;
    int n = 0;
    for (int w = 0; w < kThreads / 32; ++w) {
      c += warp_cost[w];
      n += warp_inl[w];
    }
    partial_cost[static_cast<long>(m) * gridDim.x + blockIdx.x] = c;
    partial_inl[static_cast<long>(m) * gridDim.x + blockIdx.x] = n;
  }
}

__global__ void sumPartials(int num_models, int blocks, const double* partial_cost,
                            const int* partial_inl, HypothesisScore* out) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= num_models) return;
  double c = 0;
  int n = 0;
  for (int b = 0; b < blocks; ++b) {
    c += partial_cost[static_cast<long>(m) * blocks + b];
    n += partial_inl[static_cast<long>(m) * blocks + b];
  }
  out[m] = {c, n};
}

// A grow-only device allocation.
template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  size_t capacity = 0;
  void reserve(size_t n) {
    if (n <= capacity) return;
    if (ptr) cudaFree(ptr);
    ptr = nullptr;
    capacity = 0;
    check(cudaMalloc(&ptr, n * sizeof(T)), "cudaMalloc");
    capacity = n;
  }
  ~DeviceArray() {
    if (ptr) cudaFree(ptr);
  }
};

}  // namespace

bool cudaScorerAvailable() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

struct CudaHypothesisScorer::Impl {
  ModelKind kind = ModelKind::kEpipolar;
  int num_points = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float last_ms = 0;
  DeviceArray<double> points, models, partial_cost;
  DeviceArray<int> partial_inl;
  DeviceArray<HypothesisScore> out;
};

CudaHypothesisScorer::CudaHypothesisScorer() : impl_(std::make_unique<Impl>()) {
  check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&impl_->start), "cudaEventCreate");
  check(cudaEventCreate(&impl_->stop), "cudaEventCreate");
}

CudaHypothesisScorer::~CudaHypothesisScorer() {
  if (!impl_) return;
  cudaEventDestroy(impl_->start);
  cudaEventDestroy(impl_->stop);
  cudaStreamDestroy(impl_->stream);
}

void CudaHypothesisScorer::setPoints(ModelKind kind, const std::vector<double>& points) {
  const size_t ps = pointStride(kind);
  require(points.size() % ps == 0, "CUDA scorer: points size " + std::to_string(points.size()) +
                                       " is not a multiple of " + std::to_string(ps));
  impl_->kind = kind;
  impl_->num_points = static_cast<int>(points.size() / ps);
  impl_->points.reserve(std::max<size_t>(points.size(), 1));
  check(cudaMemcpyAsync(impl_->points.ptr, points.data(), points.size() * sizeof(double),
                        cudaMemcpyHostToDevice, impl_->stream),
        "upload points");
  check(cudaStreamSynchronize(impl_->stream), "upload points");
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
  const int blocks = std::max(1, (s.num_points + kPointsPerBlock - 1) / kPointsPerBlock);
  s.models.reserve(models.size());
  s.partial_cost.reserve(static_cast<size_t>(nm) * blocks);
  s.partial_inl.reserve(static_cast<size_t>(nm) * blocks);
  s.out.reserve(nm);
  check(cudaEventRecord(s.start, s.stream), "cudaEventRecord");
  check(cudaMemcpyAsync(s.models.ptr, models.data(), models.size() * sizeof(double),
                        cudaMemcpyHostToDevice, s.stream),
        "upload models");
  scorePartials<<<dim3(blocks, nm), kThreads, 0, s.stream>>>(s.kind, s.models.ptr, s.points.ptr,
                                                             s.num_points, threshold_sq,
                                                             s.partial_cost.ptr, s.partial_inl.ptr);
  check(cudaGetLastError(), "scorePartials launch");
  sumPartials<<<(nm + 127) / 128, 128, 0, s.stream>>>(nm, blocks, s.partial_cost.ptr,
                                                      s.partial_inl.ptr, s.out.ptr);
  check(cudaGetLastError(), "sumPartials launch");
  check(cudaMemcpyAsync(result.data(), s.out.ptr, nm * sizeof(HypothesisScore),
                        cudaMemcpyDeviceToHost, s.stream),
        "download scores");
  check(cudaEventRecord(s.stop, s.stream), "cudaEventRecord");
  check(cudaStreamSynchronize(s.stream), "score");
  check(cudaEventElapsedTime(&s.last_ms, s.start, s.stop), "cudaEventElapsedTime");
  return result;
}

float CudaHypothesisScorer::lastDeviceMs() const { return impl_->last_ms; }

}  // namespace vidmap::geometry
