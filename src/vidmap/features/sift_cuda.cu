// The CUDA backend of SIFT: one thread per pixel (scale space, DoG, gradients, extrema) or one
// warp per point (orientation, descriptor), each calling the shared functions of sift_kernels.h.
// The host keeps the steps that order and select (dedupe, ranking, the maxFeatures cut) in the code
// the CPU backend runs (sift_select.h), so both produce the same keypoints in the same order.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "vidmap/core/copy_rows.h"
#include "vidmap/features/cuda_util.cuh"
#include "vidmap/features/sift_cuda.h"
#include "vidmap/features/sift_kernels.h"
#include "vidmap/features/sift_plan.h"
#include "vidmap/features/sift_select.h"
#include "vidmap/gpu/event_timer.h"

namespace vidmap::features {

namespace {

constexpr int kThreads = 256;
const dim3 kBlock2d(32, 8);

dim3 grid2d(int w, int h, int z = 1) {
  return dim3((w + kBlock2d.x - 1) / kBlock2d.x, (h + kBlock2d.y - 1) / kBlock2d.y, z);
}

struct GpuExtremum {
  Extremum e;
  int octave;
};

__global__ void kCopy(ImageView<const float> in, float* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < in.width && y < in.height) out[static_cast<long>(y) * in.width + x] = in(x, y);
}

__global__ void kUpsample(ImageView<const float> in, float* out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[static_cast<long>(y) * w + x] = upsampleAt(in, x, y);
}

__global__ void kDownsample(ImageView<const float> in, float* out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[static_cast<long>(y) * w + x] = downsampleAt(in, x, y);
}

__global__ void kBlurRow(ImageView<const float> in, float* out, GaussKernel k) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < in.width && y < in.height)
    out[static_cast<long>(y) * in.width + x] = blurRowAt(in, x, y, k);
}

__global__ void kBlurCol(ImageView<const float> in, float* out, GaussKernel k) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < in.width && y < in.height)
    out[static_cast<long>(y) * in.width + x] = blurColAt(in, x, y, k);
}

// dog[i] = gauss[i + plane] - gauss[i] over all DoG planes of an octave.
__global__ void kDog(const float* gauss, float* dog, long plane, long total) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < total) dog[i] = gauss[i + plane] - gauss[i];
}

// Gradients of Gaussian levels 1..S (z = level - 1).
__global__ void kGradient(const float* gauss, Gradient* grad, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z;
  if (x >= w || y >= h) return;
  const long plane = static_cast<long>(w) * h;
  const ImageView<const float> g{gauss + (z + 1) * plane, w, h, w};
  grad[z * plane + static_cast<long>(y) * w + x] = gradientAt(g, x, y);
}

// Extrema of DoG level s = 1 + z, refined; appended in any order (the host sorts them).
__global__ void kExtrema(DogOctave d, int scales, float prefilter, float peak, float edge,
                         int octave, GpuExtremum* out, int* count, int capacity) {
  const int x = kSiftBorder + blockIdx.x * blockDim.x + threadIdx.x;
  const int y = kSiftBorder + blockIdx.y * blockDim.y + threadIdx.y;
  const int s = 1 + blockIdx.z;
  if (x >= d.width - kSiftBorder || y >= d.height - kSiftBorder) return;
  if (!isExtremum(d, s, x, y, prefilter)) return;
  Extremum e;
  if (!refineExtremum(d, x, y, s, scales, peak, edge, &e)) return;
  const int slot = atomicAdd(count, 1);
  if (slot < capacity) out[slot] = {e, octave};
}

// Orientation and descriptor: one warp per point. Lane l takes the window pixels l, l + 32,
// ... in row-major order into its own partial histogram in shared memory; the partials are then
// summed per bin in lane order (0..31) and lane 0 finishes the point with the shared code. The
// sums are thus ordered differently from the CPU's single row-major pass (float rounding
// differs; sift_cuda_test.cc states the tolerance).
constexpr int kOrientWarps = 4;                      // warps per block
constexpr int kDescribeWarps = 2;                    // 2 x 32 x 129 floats = 33 KB of shared memory
constexpr int kOrientStride = kOrientationBins + 1;  // padding against bank conflicts
constexpr int kDescStride = kDescriptorSize + 1;

__global__ void kOrient(const SiftPoint* points, int n, const GradientLevel* levels, int scales,
                        int maxOut, bool upright, SiftPoint* slots, int* counts) {
  __shared__ float partial[kOrientWarps][32][kOrientStride];
  const int wib = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int i = blockIdx.x * kOrientWarps + wib;
  if (i >= n) return;  // whole warps
  const SiftPoint p = points[i];
  SiftPoint* out = slots + static_cast<long>(i) * maxOut;
  if (upright) {
    if (lane == 0) counts[i] = orientPoint(GradientLevel{}, p, maxOut, true, out);
    return;
  }
  const GradientLevel gl = levels[p.octaveIndex * scales + p.level - 1];
  const OrientationWindow w = orientationWindow(p.x, p.y, p.sigma);
  float* h = partial[wib][lane];
  for (int b = 0; b < kOrientationBins; ++b) h[b] = 0;
  const int side = 2 * w.W + 1;
  for (int q = lane; q < side * side; q += 32)
    orientationPixel(gl, w, q % side - w.W, q / side - w.W, h);
  __syncwarp();
  for (int b = lane; b < kOrientationBins; b += 32) {
    float sum = 0;
    for (int l = 0; l < 32; ++l) sum += partial[wib][l][b];
    partial[wib][0][b] = sum;  // only this lane reads or writes bin b now
  }
  __syncwarp();
  if (lane == 0) counts[i] = orientFromHistogram(partial[wib][0], p, maxOut, out);
}

__global__ void kDescribe(const SiftPoint* points, const float2* cs, int n,
                          const GradientLevel* levels, int scales, bool l1root, float* desc) {
  __shared__ float partial[kDescribeWarps][32][kDescStride];
  const int wib = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int i = blockIdx.x * kDescribeWarps + wib;
  if (i >= n) return;  // whole warps
  const SiftPoint p = points[i];
  const GradientLevel gl = levels[p.octaveIndex * scales + p.level - 1];
  const DescriptorWindow w = descriptorWindow(p.x, p.y, p.sigma, p.angle, cs[i].x, cs[i].y);
  float* h = partial[wib][lane];
  for (int b = 0; b < kDescriptorSize; ++b) h[b] = 0;
  const int side = 2 * w.W + 1;
  for (int q = lane; q < side * side; q += 32)
    descriptorPixel(gl, w, q % side - w.W, q / side - w.W, h);
  __syncwarp();
  for (int b = lane; b < kDescriptorSize; b += 32) {
    float sum = 0;
    for (int l = 0; l < 32; ++l) sum += partial[wib][l][b];
    partial[wib][0][b] = sum;
  }
  __syncwarp();
  if (lane == 0) normalizeDescriptor(partial[wib][0], l1root);
  __syncwarp();
  float* o = desc + static_cast<long>(i) * kDescriptorSize;
  for (int b = lane; b < kDescriptorSize; b += 32) o[b] = partial[wib][0][b];
}

}  // namespace

struct SiftCuda::Impl {
  gpu::Context ctx;
  cudaStream_t stream;
  gpu::EventTimer timer;
  gpu::DeviceBuffer<float> input, up, tmp;
  std::vector<gpu::DeviceBuffer<float>> gauss, dog;
  std::vector<gpu::DeviceBuffer<Gradient>> grad;
  gpu::DeviceBuffer<GradientLevel> levels;
  gpu::DeviceBuffer<GpuExtremum> extrema;
  gpu::DeviceBuffer<int> count, orientCounts;
  gpu::DeviceBuffer<SiftPoint> points, slots;
  gpu::DeviceBuffer<float2> cs;
  gpu::DeviceBuffer<float> desc;
  cuda::PinnedStage imageIn, descriptorsOut;  // the two large copies of an extraction
  int grayWidth = 0, grayHeight = 0;

  explicit Impl(const gpu::Context& c)
      : ctx(c), stream(ctx.stream().handle()), timer(ctx.device()) {}

  template <class T>
  T* ensure(gpu::DeviceBuffer<T>& b, std::size_t n) {
    return cuda::ensure(ctx, b, n);
  }
  gpu::KernelProfiler::Scope time(const char* kernel) {
    return ctx.profiler().time(kernel, stream);
  }

  void blur(ImageView<const float> in, float* out, const GaussKernel& k) {
    float* t = ensure(tmp, static_cast<size_t>(in.width) * in.height);
    {
      auto scope = time("sift_blur_rows");
      kBlurRow<<<grid2d(in.width, in.height), kBlock2d, 0, stream>>>(in, t, k);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    const ImageView<const float> tv{t, in.width, in.height, in.width};
    auto scope = time("sift_blur_cols");
    kBlurCol<<<grid2d(in.width, in.height), kBlock2d, 0, stream>>>(tv, out, k);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }

  // Uploads the image and builds the Gaussian levels of every octave.
  void buildGaussians(ImageView<const float> gray, const ScaleSpacePlan& plan) {
    const int w = gray.width, h = gray.height;
    float* in = ensure(input, static_cast<size_t>(w) * h);
    grayWidth = w;
    grayHeight = h;
    {
      // Through pinned memory, the rows copied by the host's threads. The stream is idle here
      // (each call ends synchronised), so no earlier copy still reads the stage; the wait
      // makes sure of it after a call that threw.
      VIDMAP_CUDA_CHECK(cudaStreamSynchronize(stream));
      float* stage = imageIn.ensure<float>(static_cast<size_t>(w) * h);
      copyRows(stage, gray.data, w * sizeof(float), gray.stride * sizeof(float), h);
      auto scope = time("sift_upload_image");
      cuda::upload(in, stage, static_cast<size_t>(w) * h, stream);
    }
    const size_t no = plan.octaves.size();
    if (gauss.size() < no) {
      gauss.resize(no);
      dog.resize(no);
      grad.resize(no);
    }
    const int L = plan.levels();
    for (size_t oi = 0; oi < no; ++oi) {
      const int ow = plan.octaves[oi].width, oh = plan.octaves[oi].height;
      const long n = static_cast<long>(ow) * oh;
      float* g = ensure(gauss[oi], n * L);
      if (oi == 0) {
        ImageView<const float> src{in, w, h, w};
        if (plan.firstOctave < 0) {
          float* u = ensure(up, n);
          auto scope = time("sift_upsample");
          kUpsample<<<grid2d(ow, oh), kBlock2d, 0, stream>>>(src, u, ow, oh);
          VIDMAP_CUDA_CHECK_LAUNCH();
          src = {u, ow, oh, ow};
        }
        if (plan.baseBlur) {
          blur(src, g, plan.base);
        } else {
          auto scope = time("sift_copy");
          kCopy<<<grid2d(ow, oh), kBlock2d, 0, stream>>>(src, g);
          VIDMAP_CUDA_CHECK_LAUNCH();
        }
      } else {
        const int pw = plan.octaves[oi - 1].width, ph = plan.octaves[oi - 1].height;
        const ImageView<const float> prev{
            gauss[oi - 1].data() + static_cast<long>(plan.scales) * pw * ph, pw, ph, pw};
        auto scope = time("sift_downsample");
        kDownsample<<<grid2d(ow, oh), kBlock2d, 0, stream>>>(prev, g, ow, oh);
        VIDMAP_CUDA_CHECK_LAUNCH();
      }
      for (int i = 1; i < L; ++i) blur({g + (i - 1) * n, ow, oh, ow}, g + i * n, plan.step[i]);
    }
  }
};

SiftCuda::SiftCuda(const gpu::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
SiftCuda::~SiftCuda() = default;

ImageView<const float> SiftCuda::deviceGray() const {
  return {impl_->input.data(), impl_->grayWidth, impl_->grayHeight, impl_->grayWidth};
}

std::vector<std::vector<float>> SiftCuda::gaussians(ImageView<const float> gray,
                                                    const SiftOptions& options) {
  Impl& m = *impl_;
  m.ctx.makeCurrent();
  const ScaleSpacePlan plan = planScaleSpace(gray.width, gray.height, options);
  m.buildGaussians(gray, plan);
  std::vector<std::vector<float>> out(plan.octaves.size());
  for (size_t oi = 0; oi < plan.octaves.size(); ++oi) {
    out[oi].resize(static_cast<size_t>(plan.octaves[oi].width) * plan.octaves[oi].height *
                   plan.levels());
    cuda::download(out[oi].data(), m.gauss[oi].data(), out[oi].size(), m.stream);
  }
  m.ctx.synchronize();
  return out;
}

Features SiftCuda::extract(ImageView<const float> gray, const SiftOptions& opt, SiftStats* stats,
                           float* gpuMilliseconds) {
  Impl& m = *impl_;
  m.ctx.makeCurrent();
  Features result;
  result.width = gray.width;
  result.height = gray.height;
  const ScaleSpacePlan plan = planScaleSpace(gray.width, gray.height, opt);
  if (plan.octaves.empty()) return result;
  const int S = plan.scales, L = plan.levels();
  const size_t no = plan.octaves.size();
  m.timer.start(m.stream);
  m.buildGaussians(gray, plan);

  // DoG, gradients and the gradient views the per-point kernels read.
  std::vector<GradientLevel> levels(no * S);
  for (size_t oi = 0; oi < no; ++oi) {
    const int ow = plan.octaves[oi].width, oh = plan.octaves[oi].height;
    const long n = static_cast<long>(ow) * oh;
    float* d = m.ensure(m.dog[oi], n * (L - 1));
    Gradient* g = m.ensure(m.grad[oi], n * S);
    {
      auto scope = m.time("sift_dog");
      kDog<<<cuda::blocksFor(n * (L - 1), kThreads), kThreads, 0, m.stream>>>(m.gauss[oi].data(), d,
                                                                              n, n * (L - 1));
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    {
      auto scope = m.time("sift_gradient");
      kGradient<<<grid2d(ow, oh, S), kBlock2d, 0, m.stream>>>(m.gauss[oi].data(), g, ow, oh);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    for (int s = 0; s < S; ++s) levels[oi * S + s] = {g + s * n, ow, oh, ow};
  }
  GradientLevel* dLevels = m.ensure(m.levels, levels.size());
  cuda::upload(dLevels, levels.data(), levels.size(), m.stream);

  // Extrema of every octave into one list; grown and redone once if it overflows.
  long pixels = 0;
  for (const auto& o : plan.octaves) pixels += static_cast<long>(o.width) * o.height;
  int capacity = static_cast<int>(std::max<long>(65536, pixels / 16));
  int found = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    GpuExtremum* ext = m.ensure(m.extrema, capacity);
    int* count = m.ensure(m.count, 1);
    VIDMAP_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(int), m.stream));
    for (size_t oi = 0; oi < no; ++oi) {
      const int ow = plan.octaves[oi].width, oh = plan.octaves[oi].height;
      const int iw = ow - 2 * kSiftBorder, ih = oh - 2 * kSiftBorder;
      if (iw <= 0 || ih <= 0) continue;
      const DogOctave d{m.dog[oi].data(), ow, oh, ow, L - 1};
      auto scope = m.time("sift_extrema");
      kExtrema<<<grid2d(iw, ih, S), kBlock2d, 0, m.stream>>>(
          d, S, 0.8f * opt.peakThreshold, opt.peakThreshold, opt.edgeThreshold,
          static_cast<int>(oi), ext, count, capacity);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    cuda::download(&found, count, 1, m.stream);
    m.ctx.synchronize();
    if (found <= capacity) break;
    capacity = found;
  }
  std::vector<GpuExtremum> gext(found);
  cuda::download(gext.data(), m.extrema.data(), gext.size(), m.stream);
  m.ctx.synchronize();

  // Per octave: dedupe and order as the CPU does; then the points with their scales.
  std::vector<std::vector<Extremum>> perOctave(no);
  for (const auto& g : gext) perOctave[g.octave].push_back(g.e);
  std::vector<SiftPoint> base;
  for (size_t oi = 0; oi < no; ++oi) {
    dedupeExtrema(perOctave[oi]);
    for (const auto& e : perOctave[oi])
      base.push_back(toPoint(e, static_cast<int>(oi), plan, opt.sigma));
  }
  const int nb = static_cast<int>(base.size());
  const int mo = opt.upright ? 1 : opt.maxOrientations;
  std::vector<SiftPoint> points;
  if (nb > 0) {
    SiftPoint* dBase = m.ensure(m.points, nb);
    SiftPoint* dSlots = m.ensure(m.slots, static_cast<size_t>(nb) * mo);
    int* dCounts = m.ensure(m.orientCounts, nb);
    cuda::upload(dBase, base.data(), base.size(), m.stream);
    {
      auto scope = m.time("sift_orientation");
      kOrient<<<cuda::blocksFor(nb, kOrientWarps), kOrientWarps * 32, 0, m.stream>>>(
          dBase, nb, dLevels, S, mo, opt.upright, dSlots, dCounts);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    std::vector<SiftPoint> slots(static_cast<size_t>(nb) * mo);
    std::vector<int> counts(nb);
    cuda::download(slots.data(), dSlots, slots.size(), m.stream);
    cuda::download(counts.data(), dCounts, counts.size(), m.stream);
    m.ctx.synchronize();
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < counts[i]; ++j) points.push_back(slots[static_cast<size_t>(i) * mo + j]);
  }
  if (stats) {
    stats->extrema = nb;
    stats->oriented = static_cast<int>(points.size());
  }
  selectStrongest(points, opt.maxFeatures);

  const int np = static_cast<int>(points.size());
  result.keypoints.resize(np);
  result.descriptors.resize(static_cast<size_t>(np) * kDescriptorSize);
  float* descStage = nullptr;  // the descriptors in pinned memory, copied out after the sync
  if (np > 0) {
    std::vector<float2> cs(np);
    for (int i = 0; i < np; ++i) cs[i] = {std::cos(points[i].angle), std::sin(points[i].angle)};
    SiftPoint* dPoints = m.ensure(m.points, np);
    float2* dCs = m.ensure(m.cs, np);
    float* dDesc = m.ensure(m.desc, static_cast<size_t>(np) * kDescriptorSize);
    cuda::upload(dPoints, points.data(), points.size(), m.stream);
    cuda::upload(dCs, cs.data(), cs.size(), m.stream);
    {
      auto scope = m.time("sift_descriptor");
      kDescribe<<<cuda::blocksFor(np, kDescribeWarps), kDescribeWarps * 32, 0, m.stream>>>(
          dPoints, dCs, np, dLevels, S, opt.normalization == DescriptorNormalization::kL1Root,
          dDesc);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    {
      auto scope = m.time("sift_download_descriptors");
      descStage = m.descriptorsOut.ensure<float>(result.descriptors.size());
      cuda::download(descStage, dDesc, result.descriptors.size(), m.stream);
    }
    for (int i = 0; i < np; ++i) result.keypoints[i] = toKeypoint(points[i], plan);
  }
  m.timer.stop(m.stream);
  m.ctx.synchronize();
  if (descStage)
    copyRows(result.descriptors.data(), descStage, kDescriptorSize * sizeof(float),
             kDescriptorSize * sizeof(float), np);
  if (gpuMilliseconds) *gpuMilliseconds = m.timer.elapsedMs();
  return result;
}

}  // namespace vidmap::features
