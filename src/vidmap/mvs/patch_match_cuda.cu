// CUDA kernels of PatchMatch: one thread per pixel, calling the functions of
// patch_match_kernels.h that the CPU twin calls. The parameters (cameras, relative poses,
// weight tables: about 3 KB) go by value as kernel arguments, in the constant bank.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <utility>

#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/mvs/patch_match_cuda.h"

namespace vidmap::mvs {
namespace {

constexpr int kBlock = 128;
// Blocks of 16 x 8 pixels of one colour (32 x 8 of the image): a warp covers two rows, so the
// windows of its threads overlap more in the texture cache than along one row.
// VIDMAP_MVS_BLOCK_X = 8 or 32 for blocks of 8 x 16 or 32 x 4 (same results; on the
// fountain 81.8 and 80.1 ms per image against 80.4: 16 x 8 stays).
constexpr int kBlockXLog2 = 4;

// Experiment knobs for docs/benchmarks.md (sections "mvs speed (issue 14, helper dense)" and
// "mvs speed to the goals (issue 14, helper dense2)"), read once: VIDMAP_MVS_MIN_BLOCKS = the
// launch bound's blocks per SM of the kernels that run (8: at most 64 registers, the default;
// 6: 80; 5: 96; 1: no cap), VIDMAP_MVS_ROWS = 1 for the former one-row-per-block mapping,
// VIDMAP_MVS_LOCAL_WINDOW = 1 for the window weights in the thread's local memory rather than
// shared memory, VIDMAP_MVS_EARLY_EXIT = 0 to score every source of every hypothesis,
// VIDMAP_MVS_SHARED_VALUES = 0 for the window's grey levels in registers rather than in
// shared memory beside the weights (the default with 8 blocks per SM and shared weights:
// ptxas gives 64 registers and 152 / 188 bytes of spill stores / loads against 520 / 792;
// docs/benchmarks.md, section "mvs: fusion on the GPU and the photometric pass (issue 14,
// helper dense3)"; the caps below 8 blocks keep the grey levels in shared memory: 6, 5 and
// 1 take 83.9-84.0 ms per fountain image against 80.4 at 8, section "mvs: the photometric
// pass at 50 ms/MP (issue 14, helper dense4)"). None changes a result.
struct Knobs {
  int minBlocks = 8;
  bool rows = false;
  int blockXLog2 = kBlockXLog2;
  bool localWindow = false;
  bool earlyExit = true;
  bool sharedValues = true;
  Knobs() {
    if (const char* e = std::getenv("VIDMAP_MVS_MIN_BLOCKS")) minBlocks = std::atoi(e);
    if (const char* e = std::getenv("VIDMAP_MVS_ROWS")) rows = std::atoi(e) != 0;
    if (const char* e = std::getenv("VIDMAP_MVS_BLOCK_X"))
      blockXLog2 = std::atoi(e) == 8 ? 3 : (std::atoi(e) == 32 ? 5 : kBlockXLog2);
    if (const char* e = std::getenv("VIDMAP_MVS_LOCAL_WINDOW")) localWindow = std::atoi(e) != 0;
    if (const char* e = std::getenv("VIDMAP_MVS_EARLY_EXIT")) earlyExit = std::atoi(e) != 0;
    if (const char* e = std::getenv("VIDMAP_MVS_SHARED_VALUES")) sharedValues = std::atoi(e) != 0;
  }
};
const Knobs& knobs() {
  static const Knobs k;
  return k;
}

// The window's 36 weights per thread: in shared memory, sample k of thread t at
// [k * kBlock + t] (consecutive threads in consecutive banks), or in local memory; with
// kValues, its 9 words of grey levels in shared memory too (word i at [i * kBlock + t]),
// else in the window's registers (words == nullptr, VStride 0).
template <bool kShared, bool kValues = false>
struct WindowStorage;
template <bool kValues>
struct WindowStorage<true, kValues> {
  static constexpr int kStride = kBlock;
  static constexpr int kVStride = kValues ? kBlock : 0;
  float* w;
  std::uint32_t* words = nullptr;
  __device__ WindowStorage() {
    __shared__ float weights[kWindowSamples * kBlock];
    w = weights + threadIdx.x;
    if constexpr (kValues) {
      __shared__ std::uint32_t values[kWindowSamples / 4 * kBlock];
      words = values + threadIdx.x;
    }
  }
};
template <>
struct WindowStorage<false, false> {
  static constexpr int kStride = 1;
  static constexpr int kVStride = 0;
  float w[kWindowSamples];
  std::uint32_t* words = nullptr;
};

template <int kMinBlocks, bool kShared, bool kValues>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    initKernel(const PmParams P, const PmState S, int initialise) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= S.width * S.height) return;
  const int x = i % S.width, y = i / S.width;
  using W = WindowStorage<kShared, kValues>;
  W win;
  if (initialise)
    pmInitPixel<W::kStride, W::kVStride>(P, S, x, y, &win.w[0], win.words);
  else
    pmRescorePixel<W::kStride, W::kVStride>(P, S, x, y, &win.w[0], win.words);
}

template <int kMinBlocks, bool kShared, bool kValues>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    updateKernel(const PmParams P, const PmState S, int colour, int it, int rows, int bxLog2) {
  int x, y;
  if (rows) {  // rows: pixel p of the colour in a row-major walk
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (!pmColourPixel(p, colour, S.width, S.height, &x, &y)) return;
  } else {
    const int i = (blockIdx.x << bxLog2) + (threadIdx.x & ((1 << bxLog2) - 1));
    const int row = blockIdx.y * (kBlock >> bxLog2) + (threadIdx.x >> bxLog2);
    const int half = (S.width + 1) / 2;
    if (i >= half || !pmColourPixel(row * half + i, colour, S.width, S.height, &x, &y)) return;
  }
  using W = WindowStorage<kShared, kValues>;
  W win;
  pmUpdatePixel<W::kStride, W::kVStride>(P, S, x, y, it, &win.w[0], win.words);
}

template <int kMinBlocks, bool kShared, bool kValues = false>
void launchKernels(const PmParams& P, const PmState& S, bool initialise, int iterations,
                   const PatchMatchOptions& o, const std::string& prefix, gpu::Context& ctx) {
  PmParams Q = P;
  Q.earlyExit = knobs().earlyExit ? 1 : 0;
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream().handle());
  const size_t n = static_cast<size_t>(S.width) * S.height;
  {
    auto t = ctx.profiler().time(prefix + (initialise ? "_init" : "_rescore"), ctx.stream());
    initKernel<kMinBlocks, kShared, kValues>
        <<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(Q, S, initialise ? 1 : 0);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  const int half = (S.width + 1) / 2;
  const int bx = 1 << knobs().blockXLog2, by = kBlock / bx;
  const dim3 grid = knobs().rows ? dim3((half * S.height + kBlock - 1) / kBlock, 1)
                                 : dim3((half + bx - 1) / bx, (S.height + by - 1) / by);
  for (int it = 0; it < iterations; ++it) {
    Q.perturbation = perturbationAt(o, it);
    for (int colour = 0; colour < 2; ++colour) {
      auto t = ctx.profiler().time(prefix + "_propagate", ctx.stream());
      updateKernel<kMinBlocks, kShared, kValues><<<grid, kBlock, 0, stream>>>(
          Q, S, colour, 2 * it + colour, knobs().rows ? 1 : 0, knobs().blockXLog2);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
  }
}

// Page-locked host memory for the downloads (the device writes it at full bus speed; a
// pageable copy goes through the driver's staging buffer).
class PinnedFloats {
 public:
  PinnedFloats() = default;
  explicit PinnedFloats(size_t count) : size_(count) {
    if (count)
      VIDMAP_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&data_), count * sizeof(float), 0));
  }
  PinnedFloats(PinnedFloats&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PinnedFloats& operator=(PinnedFloats&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr), size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~PinnedFloats() { release(); }
  float* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release() {
    if (data_) cudaFreeHost(data_);
    data_ = nullptr, size_ = 0;
  }
  float* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

struct PatchMatchCuda::Impl {
  gpu::Context ctx;
  gpu::DeviceBuffer<float> depth, nx, ny, nz, cost;
  struct Resident {
    gpu::DeviceBuffer<std::uint8_t> gray;  // rows of `pitch` bytes
    int pitch = 0;
    cudaTextureObject_t tex = 0;
    gpu::DeviceBuffer<float> depth;
    Resident() = default;
    Resident(Resident&& o) noexcept
        : gray(std::move(o.gray)),
          pitch(o.pitch),
          tex(std::exchange(o.tex, 0)),
          depth(std::move(o.depth)) {}
    Resident& operator=(Resident&&) = delete;
    ~Resident() {
      if (tex) cudaDestroyTextureObject(tex);
    }
  };
  std::map<int, Resident> views;
  PinnedFloats host;      // the planes of the last download: depth, nx, ny, nz, cost
  size_t pixels = 0;      // of the last launch
  size_t hostPixels = 0;  // of the last download (a worker's copyOut reads it)
  bool textures = false;
  int pitchAlign = 1, baseAlign = 1;
  explicit Impl(gpu::Context& c, bool tex) : ctx(c), textures(tex) {
    if (textures) {
      int align = 0, base = 0, dev = ctx.info().index;
      VIDMAP_CUDA_CHECK(cudaDeviceGetAttribute(&align, cudaDevAttrTexturePitchAlignment, dev));
      VIDMAP_CUDA_CHECK(cudaDeviceGetAttribute(&base, cudaDevAttrTextureAlignment, dev));
      pitchAlign = std::max(1, align), baseAlign = std::max(1, base);
    }
  }
};

PatchMatchCuda::PatchMatchCuda(gpu::Context& ctx, bool textures)
    : impl_(std::make_unique<Impl>(ctx, textures)) {}
PatchMatchCuda::~PatchMatchCuda() = default;

int PatchMatchCuda::pitchAlignment() const { return impl_->pitchAlign; }

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
  r.pitch = grayPitch(v.width, m.pitchAlign);
  r.gray = gpu::DeviceBuffer<std::uint8_t>(m.ctx, static_cast<size_t>(r.pitch) * v.height);
  cudaStream_t stream = static_cast<cudaStream_t>(m.ctx.stream().handle());
  VIDMAP_CUDA_CHECK(cudaMemcpy2DAsync(r.gray.data(), r.pitch, v.gray.data(), v.width, v.width,
                                      v.height, cudaMemcpyHostToDevice, stream));
  // A texture needs its base aligned to textureAlignment; cudaMalloc gives 256 bytes at
  // least. Otherwise the kernels model the texture unit's weights in software (same result).
  if (m.textures && reinterpret_cast<std::uintptr_t>(r.gray.data()) % m.baseAlign == 0) {
    cudaResourceDesc rd{};
    rd.resType = cudaResourceTypePitch2D;
    rd.res.pitch2D.devPtr = r.gray.data();
    rd.res.pitch2D.desc = cudaCreateChannelDesc<unsigned char>();
    rd.res.pitch2D.width = static_cast<size_t>(v.width);
    rd.res.pitch2D.height = static_cast<size_t>(v.height);
    rd.res.pitch2D.pitchInBytes = static_cast<size_t>(r.pitch);
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeNormalizedFloat;
    td.normalizedCoords = 0;
    VIDMAP_CUDA_CHECK(cudaCreateTextureObject(&r.tex, &rd, &td, nullptr));
  }
  if (depth) r.depth = gpu::DeviceBuffer<float>(m.ctx, std::span<const float>(depth->depth));
  m.ctx.synchronize();  // the host images may go away after load
  m.views.erase(view);
  m.views.emplace(view, std::move(r));
}

void PatchMatchCuda::evict(int view) {
  impl_->ctx.synchronize();  // kernels that read it have finished
  impl_->views.erase(view);
}

PmGray PatchMatchCuda::gray(int view) const {
  auto it = impl_->views.find(view);
  if (it == impl_->views.end()) return {};
  const Impl::Resident& r = it->second;
  PmGray g;
  g.data = r.gray.data();
  g.stride = r.pitch;
  g.tex = static_cast<unsigned long long>(r.tex);
  g.hwFilter = impl_->textures ? 1 : 0;
  return g;
}

const float* PatchMatchCuda::depthPtr(int view) const {
  auto it = impl_->views.find(view);
  return it == impl_->views.end() || it->second.depth.empty() ? nullptr : it->second.depth.data();
}

void PatchMatchCuda::launch(const PmParams& P, bool initialise, int iterations,
                            const PatchMatchOptions& o, const char* pass, const DepthMap& state) {
  Impl& m = *impl_;
  const int w = state.width, h = state.height;
  const size_t n = static_cast<size_t>(w) * h;
  if (n > m.depth.size()) throw Error("mvs: reference larger than the pass's working buffers");
  PmState S{m.depth.data(), m.nx.data(), m.ny.data(), m.nz.data(), m.cost.data(), w, h};
  if (!initialise) {
    m.depth.uploadAsync(std::span<const float>(state.depth), m.ctx.stream());
    m.nx.uploadAsync(std::span<const float>(state.normal.data(), n), m.ctx.stream());
    m.ny.uploadAsync(std::span<const float>(state.normal.data() + n, n), m.ctx.stream());
    m.nz.uploadAsync(std::span<const float>(state.normal.data() + 2 * n, n), m.ctx.stream());
  }
  const std::string prefix = std::string("mvs_") + pass;
  const Knobs& k = knobs();
  if (k.localWindow)
    launchKernels<8, false>(P, S, initialise, iterations, o, prefix, m.ctx);
  else if (k.minBlocks >= 8 && k.sharedValues)
    launchKernels<8, true, true>(P, S, initialise, iterations, o, prefix, m.ctx);
  else if (k.minBlocks >= 8)
    launchKernels<8, true>(P, S, initialise, iterations, o, prefix, m.ctx);
  else if (k.minBlocks >= 6)
    launchKernels<6, true, true>(P, S, initialise, iterations, o, prefix, m.ctx);
  else if (k.minBlocks >= 5)
    launchKernels<5, true, true>(P, S, initialise, iterations, o, prefix, m.ctx);
  else
    launchKernels<1, true, true>(P, S, initialise, iterations, o, prefix, m.ctx);
  m.pixels = n;
  // The pinned buffer grows while the kernels run (pinning takes milliseconds), to the pass's
  // largest reference at its first launch, when no copy out of it is pending; it serves
  // every later reference and pass of this object.
  if (m.host.size() < 5 * m.depth.size()) m.host = PinnedFloats(5 * m.depth.size());
}

void PatchMatchCuda::download() {
  Impl& m = *impl_;
  const size_t n = m.pixels;
  m.hostPixels = n;
  float* h = m.host.data();
  const gpu::DeviceBuffer<float>* planes[5] = {&m.depth, &m.nx, &m.ny, &m.nz, &m.cost};
  cudaStream_t stream = static_cast<cudaStream_t>(m.ctx.stream().handle());
  for (int p = 0; p < 5; ++p)
    VIDMAP_CUDA_CHECK(cudaMemcpyAsync(h + p * n, planes[p]->data(), n * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream));
  m.ctx.synchronize();
}

void PatchMatchCuda::copyOut(DepthMap* state) const {
  const Impl& m = *impl_;
  const size_t n = m.hostPixels;
  if (static_cast<size_t>(state->width) * state->height != n || state->depth.size() != n ||
      state->normal.size() != 3 * n || state->cost.size() != n)
    throw Error("mvs: copyOut into a map of another size than the last reference");
  const float* h = m.host.data();
  std::memcpy(state->depth.data(), h, n * sizeof(float));
  std::memcpy(state->normal.data(), h + n, 3 * n * sizeof(float));  // nx, ny, nz in order
  std::memcpy(state->cost.data(), h + 4 * n, n * sizeof(float));
}

}  // namespace vidmap::mvs
