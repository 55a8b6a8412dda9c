// CUDA kernels of PatchMatch: one thread per pixel, calling the functions of
// patch_match_kernels.h that the CPU twin calls. The parameters (cameras, relative poses,
// weight tables: about 3 KB) go by value as kernel arguments, in the constant bank.
#include <span>
#include <string>

#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/mvs/patch_match_cuda.h"

namespace vidmap::mvs {
namespace {

constexpr int kBlock = 128;

__global__ void initKernel(const PmParams P, const PmState S, int initialise) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= S.width * S.height) return;
  const int x = i % S.width, y = i / S.width;
  if (initialise)
    pmInitPixel(P, S, x, y);
  else
    pmRescorePixel(P, S, x, y);
}

__global__ void updateKernel(const PmParams P, const PmState S, int colour, int it) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  int x, y;
  if (!pmColourPixel(p, colour, S.width, S.height, &x, &y)) return;
  pmUpdatePixel(P, S, x, y, it);
}

}  // namespace

struct PatchMatchCuda::Impl {
  gpu::Context ctx;
  gpu::DeviceBuffer<float> depth, nx, ny, nz, cost;
  struct Resident {
    gpu::DeviceBuffer<std::uint8_t> gray;
    gpu::DeviceBuffer<float> depth;
  };
  std::map<int, Resident> views;
  explicit Impl(gpu::Context& c) : ctx(c) {}
};

PatchMatchCuda::PatchMatchCuda(gpu::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
PatchMatchCuda::~PatchMatchCuda() = default;

void PatchMatchCuda::beginPass(std::int64_t maxPixels) {
  Impl& m = *impl_;
  const size_t n = static_cast<size_t>(maxPixels);
  m.depth = gpu::DeviceBuffer<float>(m.ctx, n);
  m.nx = gpu::DeviceBuffer<float>(m.ctx, n);
  m.ny = gpu::DeviceBuffer<float>(m.ctx, n);
  m.nz = gpu::DeviceBuffer<float>(m.ctx, n);
  m.cost = gpu::DeviceBuffer<float>(m.ctx, n);
}

void PatchMatchCuda::endPass() {
  Impl& m = *impl_;
  m.ctx.synchronize();
  m.views.clear();
  m.depth.reset(), m.nx.reset(), m.ny.reset(), m.nz.reset(), m.cost.reset();
}

void PatchMatchCuda::load(int view, const View& v, const DepthMap* depth) {
  Impl& m = *impl_;
  Impl::Resident r;
  r.gray = gpu::DeviceBuffer<std::uint8_t>(
      m.ctx, std::span<const std::uint8_t>(v.gray.data(), static_cast<size_t>(v.gray.pixels())));
  if (depth) r.depth = gpu::DeviceBuffer<float>(m.ctx, std::span<const float>(depth->depth));
  m.views[view] = std::move(r);
}

void PatchMatchCuda::evict(int view) {
  impl_->ctx.synchronize();  // kernels that read it have finished
  impl_->views.erase(view);
}

const std::uint8_t* PatchMatchCuda::grayPtr(int view) const {
  auto it = impl_->views.find(view);
  return it == impl_->views.end() ? nullptr : it->second.gray.data();
}

const float* PatchMatchCuda::depthPtr(int view) const {
  auto it = impl_->views.find(view);
  return it == impl_->views.end() || it->second.depth.empty() ? nullptr : it->second.depth.data();
}

void PatchMatchCuda::run(const PmParams& Pin, bool initialise, int iterations,
                         const PatchMatchOptions& o, const char* pass, DepthMap* state) {
  Impl& m = *impl_;
  PmParams P = Pin;
  const int w = state->width, h = state->height;
  const size_t n = static_cast<size_t>(w) * h;
  if (n > m.depth.size()) throw Error("mvs: reference larger than the pass's working buffers");
  PmState S{m.depth.data(), m.nx.data(), m.ny.data(), m.nz.data(), m.cost.data(), w, h};
  cudaStream_t stream = static_cast<cudaStream_t>(m.ctx.stream().handle());
  if (!initialise) {
    m.depth.uploadAsync(std::span<const float>(state->depth), m.ctx.stream());
    m.nx.uploadAsync(std::span<const float>(state->normal.data(), n), m.ctx.stream());
    m.ny.uploadAsync(std::span<const float>(state->normal.data() + n, n), m.ctx.stream());
    m.nz.uploadAsync(std::span<const float>(state->normal.data() + 2 * n, n), m.ctx.stream());
  }
  const std::string prefix = std::string("mvs_") + pass;
  {
    auto t = m.ctx.profiler().time(prefix + (initialise ? "_init" : "_rescore"), m.ctx.stream());
    initKernel<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(P, S, initialise ? 1 : 0);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  const int half = (w + 1) / 2;
  const int units = half * h;
  for (int it = 0; it < iterations; ++it) {
    P.perturbation = perturbationAt(o, it);
    for (int colour = 0; colour < 2; ++colour) {
      auto t = m.ctx.profiler().time(prefix + "_propagate", m.ctx.stream());
      updateKernel<<<(units + kBlock - 1) / kBlock, kBlock, 0, stream>>>(P, S, colour,
                                                                         2 * it + colour);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
  }
  m.depth.downloadAsync(std::span<float>(state->depth), m.ctx.stream());
  m.nx.downloadAsync(std::span<float>(state->normal.data(), n), m.ctx.stream());
  m.ny.downloadAsync(std::span<float>(state->normal.data() + n, n), m.ctx.stream());
  m.nz.downloadAsync(std::span<float>(state->normal.data() + 2 * n, n), m.ctx.stream());
  m.cost.downloadAsync(std::span<float>(state->cost), m.ctx.stream());
  m.ctx.synchronize();
}

}  // namespace vidmap::mvs
