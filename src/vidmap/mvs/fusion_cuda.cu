// CUDA kernels of fusion's per-pixel phase: one thread per reference pixel calls
// fuMatchPixel (fusion_kernels.h), the function the CPU runs; this file is compiled with
// -fmad=false (CMakeLists.txt) so its double arithmetic is the CPU's bit for bit. The records
// are compacted in pixel order by an exclusive scan of the per-pixel flags.
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/mvs/fusion_cuda.h"

namespace vidmap::mvs {
namespace {

constexpr int kBlock = 128;

// q[k * n + i]: the agreeing pixel of source k for pixel i (coalesced writes); flag[i]: the
// pixel makes a record.
__global__ void matchKernel(const FuParams P, std::int32_t* q, int* flag) {
  const std::int64_t n = static_cast<std::int64_t>(P.width) * P.height;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  flag[i] = 0;
  if (!(P.depth[i] > 0)) return;
  std::int32_t qq[kMaxSources];
  const int agree =
      fuMatchPixel(P, static_cast<int>(i % P.width), static_cast<int>(i / P.width), qq);
  if (agree + 1 < P.minPixels) return;
  flag[i] = 1;
  for (int k = 0; k < P.numSources; ++k) q[k * n + i] = qq[k];
}

__global__ void compactKernel(std::int64_t n, int K, const std::int32_t* q, const int* flag,
                              const int* pos, std::int32_t* out) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n || !flag[i]) return;
  std::int32_t* rec = out + static_cast<std::int64_t>(pos[i]) * (1 + K);
  rec[0] = static_cast<std::int32_t>(i);
  for (int k = 0; k < K; ++k) rec[1 + k] = q[k * n + i];
}

std::size_t scanBytes(std::int64_t n) {
  std::size_t b = 0;
  VIDMAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, b, static_cast<int*>(nullptr),
                                                  static_cast<int*>(nullptr),
                                                  static_cast<int>(std::max<std::int64_t>(n, 1))));
  return std::max<std::size_t>(b, 16);
}

}  // namespace

struct FusionCuda::Impl {
  gpu::Context ctx;
  gpu::DeviceBuffer<std::int32_t> q, records;
  gpu::DeviceBuffer<int> flag, pos;
  gpu::DeviceBuffer<std::uint8_t> scratch;
  struct Resident {
    gpu::DeviceBuffer<float> depth, normal;
  };
  std::map<int, Resident> views;
  std::vector<std::int32_t> host;  // the last reference's records
  explicit Impl(gpu::Context& c) : ctx(c) {}
};

FusionCuda::FusionCuda(gpu::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
FusionCuda::~FusionCuda() = default;

std::int64_t FusionCuda::workingBytes(std::int64_t maxPixels, int maxSources) {
  // q (K words), flag and pos (1 each), records (1 + K words) per pixel; the scan's scratch.
  return 4 * maxPixels * (2 * static_cast<std::int64_t>(maxSources) + 3) +
         static_cast<std::int64_t>(scanBytes(maxPixels));
}

void FusionCuda::beginPass(std::int64_t maxPixels, int maxSources) {
  Impl& m = *impl_;
  if (maxPixels >= std::numeric_limits<int>::max())
    throw Error("fusion: a reference of " + std::to_string(maxPixels) + " pixels is too large");
  const size_t n = static_cast<size_t>(maxPixels);
  m.q = gpu::DeviceBuffer<std::int32_t>(m.ctx, std::max<size_t>(1, n * maxSources));
  m.records = gpu::DeviceBuffer<std::int32_t>(m.ctx, n * (1 + maxSources));
  m.flag = gpu::DeviceBuffer<int>(m.ctx, n);
  m.pos = gpu::DeviceBuffer<int>(m.ctx, n);
  m.scratch = gpu::DeviceBuffer<std::uint8_t>(m.ctx, scanBytes(maxPixels));
}

void FusionCuda::endPass() {
  Impl& m = *impl_;
  m.ctx.synchronize();
  m.views.clear();
  m.q.reset(), m.records.reset(), m.flag.reset(), m.pos.reset(), m.scratch.reset();
}

void FusionCuda::load(int view, const DepthMap& map) {
  Impl& m = *impl_;
  Impl::Resident r;
  r.depth = gpu::DeviceBuffer<float>(m.ctx, map.depth.size());
  r.normal = gpu::DeviceBuffer<float>(m.ctx, map.normal.size());
  r.depth.uploadAsync(std::span<const float>(map.depth), m.ctx.stream());
  r.normal.uploadAsync(std::span<const float>(map.normal), m.ctx.stream());
  m.views.erase(view);
  m.views.emplace(view, std::move(r));
}

void FusionCuda::evict(int view) {
  impl_->ctx.synchronize();  // kernels that read it have finished
  impl_->views.erase(view);
}

const float* FusionCuda::depthPtr(int view) const {
  auto it = impl_->views.find(view);
  return it == impl_->views.end() ? nullptr : it->second.depth.data();
}

const float* FusionCuda::normalPtr(int view) const {
  auto it = impl_->views.find(view);
  return it == impl_->views.end() ? nullptr : it->second.normal.data();
}

std::int64_t FusionCuda::match(const FuParams& P, const std::int32_t** records) {
  Impl& m = *impl_;
  const std::int64_t n = static_cast<std::int64_t>(P.width) * P.height;
  const int K = P.numSources;
  if (n > static_cast<std::int64_t>(m.flag.size()) ||
      n * (1 + K) > static_cast<std::int64_t>(m.records.size()))
    throw Error("fusion: reference larger than the pass's working buffers");
  *records = m.host.data();
  if (n == 0) return 0;
  cudaStream_t stream = static_cast<cudaStream_t>(m.ctx.stream().handle());
  const unsigned blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  {
    auto t = m.ctx.profiler().time("mvs_fusion_match", m.ctx.stream());
    matchKernel<<<blocks, kBlock, 0, stream>>>(P, m.q.data(), m.flag.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  int last[2] = {0, 0};
  {
    auto t = m.ctx.profiler().time("mvs_fusion_compact", m.ctx.stream());
    std::size_t bytes = m.scratch.size();
    VIDMAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(m.scratch.data(), bytes, m.flag.data(),
                                                    m.pos.data(), static_cast<int>(n), stream));
    compactKernel<<<blocks, kBlock, 0, stream>>>(n, K, m.q.data(), m.flag.data(), m.pos.data(),
                                                 m.records.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  m.pos.downloadAsync(std::span<int>(last, 1), m.ctx.stream(), static_cast<size_t>(n - 1));
  m.flag.downloadAsync(std::span<int>(last + 1, 1), m.ctx.stream(), static_cast<size_t>(n - 1));
  m.ctx.synchronize();
  const std::int64_t count = static_cast<std::int64_t>(last[0]) + last[1];
  const size_t words = static_cast<size_t>(count * (1 + K));
  if (m.host.size() < words) m.host.resize(words);
  if (words) m.records.download(std::span<std::int32_t>(m.host.data(), words));
  *records = m.host.data();
  return count;
}

}  // namespace vidmap::mvs
