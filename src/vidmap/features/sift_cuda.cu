// The CUDA backend of SIFT: one thread per pixel (scale space, DoG, gradients, extrema) or one
// warp per point (orientation, descriptor), each calling the shared functions of sift_kernels.h.
// A frame is one stream of work with one synchronisation, at its end: the extrema are deduped
// as they are found (a bit per DoG sample claims it), the oriented points ranked by a radix sort
// of |value| whose ties are ordered by strongerPoint (the order of the CPU's selectStrongest),
// and the kept points and their descriptors written straight to mapped host memory (the
// descriptors also to device memory, for a matcher on the device). The
// chain of Gaussian levels runs on the stream; per octave, the levels above S with the extrema
// and the gradients fork onto side streams as soon as level S is there (the next octave starts
// from it) and join before the orientations, so the large first octaves' extrema and gradients
// overlap the small octaves' chain of short launches. The descriptors take the largest windows
// first. The capacities are fixed per image size, so with the kernel profiler off the frame's
// work is captured once in a CUDA graph (with its forks and the upload) and replayed. An 8-bit
// gray or an RGB8 frame is uploaded as bytes and converted on the device. The upload goes in row
// bands on a copy stream, and the first octave's levels are made band by band as they arrive
// (sift_cuda_bands.h), so that most of that octave's chain overlaps the transfer.
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "vidmap/core/copy_rows.h"
#include "vidmap/core/error.h"
#include "vidmap/features/cuda_util.cuh"
#include "vidmap/features/sift_cuda.h"
#include "vidmap/features/sift_cuda_bands.h"
#include "vidmap/features/sift_kernels.h"
#include "vidmap/features/sift_plan.h"
#include "vidmap/features/sift_select.h"
#include "vidmap/gpu/event_timer.h"
#include "vidmap/io/color.h"

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
  unsigned claim;  // its bit in the claim map: (octave, level, yi, xi)
};

// The counters of a frame on the device: extrema found (may exceed the capacity: then the
// frame is redone with room for them), oriented points.
struct Counters {
  int extrema, oriented;
};

// What a frame hands back, in mapped host memory (the kernels write it over the bus).
struct HostCounts {
  int extrema, oriented, kept, pad;
};

// The pixel kernels of the first octave's chain take a range of rows [y0, y1) (a band of the
// upload, sift_cuda_bands.h; the whole frame otherwise).
dim3 gridRows(int w, int y0, int y1) { return grid2d(w, y1 - y0); }

__global__ void kCopy(ImageView<const float> in, float* out, int y0, int y1) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = y0 + blockIdx.y * blockDim.y + threadIdx.y;
  if (x < in.width && y < y1) out[static_cast<long>(y) * in.width + x] = in(x, y);
}

// An 8-bit frame to the float gray the host's frame sources make (v / 255, IEEE division);
// pixels [i0, i1).
__global__ void kFromBytes(const std::uint8_t* in, float* out, long i0, long i1) {
  const long i = i0 + static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < i1) out[i] = static_cast<float>(in[i]) / 255.0f;
}

// An RGB8 frame to the float gray io's frame sources make of it (io::lumaRec601 of v / 255,
// every step rounded as on the host), so its features equal those of the host's luma; pixels
// [i0, i1).
__global__ void kFromRgb(const std::uint8_t* in, float* out, long i0, long i1) {
  const long i = i0 + static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < i1) out[i] = io::lumaRec601(in[3 * i], in[3 * i + 1], in[3 * i + 2]);
}

__global__ void kUpsample(ImageView<const float> in, float* out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[static_cast<long>(y) * w + x] = upsampleAt(in, x, y);
}

__global__ void kDownsample(ImageView<const float> in, float* out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[static_cast<long>(y) * w + x] = downsampleAt(in, x, y);
}

__global__ void kBlurRow(ImageView<const float> in, float* out, GaussKernel k, int y0, int y1) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = y0 + blockIdx.y * blockDim.y + threadIdx.y;
  if (x < in.width && y < y1) out[static_cast<long>(y) * in.width + x] = blurRowAt(in, x, y, k);
}

// The column pass; with prev (the level blurred), also the DoG level dog = out - prev.
__global__ void kBlurCol(ImageView<const float> in, float* out, GaussKernel k, const float* prev,
                         float* dog, int y0, int y1) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = y0 + blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= in.width || y >= y1) return;
  const long i = static_cast<long>(y) * in.width + x;
  const float v = blurColAt(in, x, y, k);
  out[i] = v;
  if (dog) dog[i] = v - prev[i];
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

// Extrema of DoG level s = 1 + z, refined. Pixels that converge to the same sample give the
// same extremum (refineExtremum's result depends on that sample only), so the first to set the
// sample's bit in the claim map appends it and the others drop theirs: the CPU's dedupe. The
// list is in no order (the ranking below does not depend on it). A claim that finds no room
// is released, so the map is clear after the frame; kOrient releases the others.
__global__ void kExtrema(DogOctave d, int scales, float prefilter, float peak, float edge,
                         int octave, unsigned claimBase, unsigned* claims, GpuExtremum* out,
                         Counters* counters, int capacity) {
  const int x = kSiftBorder + blockIdx.x * blockDim.x + threadIdx.x;
  const int y = kSiftBorder + blockIdx.y * blockDim.y + threadIdx.y;
  const int s = 1 + blockIdx.z;
  if (x >= d.width - kSiftBorder || y >= d.height - kSiftBorder) return;
  if (!isExtremum(d, s, x, y, prefilter)) return;
  Extremum e;
  if (!refineExtremum(d, x, y, s, scales, peak, edge, &e)) return;
  const unsigned bit =
      claimBase + static_cast<unsigned>(((e.level - 1) * d.height + e.yi) * d.width + e.xi);
  const unsigned mask = 1u << (bit & 31u);
  if (atomicOr(&claims[bit >> 5], mask) & mask) return;
  const int slot = atomicAdd(&counters->extrema, 1);
  if (slot < capacity)
    out[slot] = {e, octave, bit};
  else
    atomicAnd(&claims[bit >> 5], ~mask);
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

// One warp's histogram of a square window of half-size W around a point: each lane adds its
// strided share of the window's pixels into its own row of `rows` (32 rows of kBins, padded to
// kStride against bank conflicts), then lane b sums bin b over the rows into row 0, which it
// returns. The order of every sum is fixed, so the histogram does not depend on scheduling.
// Orientation and descriptor both use it, each with its own per-pixel function from
// sift_kernels.h (`add(dx, dy, row)`).
template <int kBins, int kStride, class AddPixel>
__device__ float* warpWindowHistogram(float (*rows)[kStride], int lane, int W, AddPixel add) {
  float* h = rows[lane];
  for (int b = 0; b < kBins; ++b) h[b] = 0;
  const int side = 2 * W + 1;
  for (int q = lane; q < side * side; q += 32) add(q % side - W, q / side - W, h);
  __syncwarp();
  for (int b = lane; b < kBins; b += 32) {
    float sum = 0;
    for (int l = 0; l < 32; ++l) sum += rows[l][b];
    rows[0][b] = sum;  // only this lane reads or writes bin b now
  }
  __syncwarp();
  return rows[0];
}

// Grid-stride over the extrema (their number is on the device). Each oriented point goes to
// the next free slot with its sort key (~bits of |value|: ascending = strongest first).
__global__ void kOrient(const GpuExtremum* ext, Counters* counters, int capacity,
                        const GradientLevel* levels, int scales, float sigma0, int maxOut,
                        bool upright, unsigned* claims, SiftPoint* points, unsigned* keys,
                        int* order) {
  __shared__ float partial[kOrientWarps][32][kOrientStride];
  const int wib = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int n = min(counters->extrema, capacity);
  for (int i = blockIdx.x * kOrientWarps + wib; i < n; i += gridDim.x * kOrientWarps) {
    const GpuExtremum g = ext[i];
    const Extremum& e = g.e;
    const SiftPoint p{e.x,  e.y,     e.s,     e.value, keypointSigmaAt(sigma0, scales, e.s),
                      0.0f, e.level, g.octave};
    SiftPoint out[4];
    int k = 0;
    if (upright) {
      k = orientPoint(GradientLevel{}, p, maxOut, true, out);
    } else {
      const GradientLevel gl = levels[p.octaveIndex * scales + p.level - 1];
      const OrientationWindow w = orientationWindow(p.x, p.y, p.sigma);
      float* hist = warpWindowHistogram<kOrientationBins, kOrientStride>(
          partial[wib], lane, w.W,
          [&](int dx, int dy, float* h) { orientationPixel(gl, w, dx, dy, h); });
      if (lane == 0) k = orientFromHistogram(hist, p, maxOut, out);
    }
    if (lane == 0) {
      atomicAnd(&claims[g.claim >> 5], ~(1u << (g.claim & 31u)));
      const int slot = k ? atomicAdd(&counters->oriented, k) : 0;
      for (int j = 0; j < k; ++j) {
        points[slot + j] = out[j];
        keys[slot + j] = ~__float_as_uint(fabsf(out[j].value));
        order[slot + j] = slot + j;
      }
    }
    __syncwarp();  // the partials are reused by the next point
  }
}

// The sort orders the keys by their bits kSortLowBit..30 only (three 8-bit passes instead of
// four; bit 31 is 1 in every key): |value| to 2^-15 relative, and the points in a run of equal
// sorted bits are ordered exactly below.
constexpr int kSortLowBit = 8;

// The kept points in rank order: sorted[r] indexes the points by ascending key (|value|
// descending, stable); a run of equal sorted bits is ordered here by strongerPoint (then by
// position, for points equal in every field), each thread picking the member of its rank. Writes
// the points and their cos/sin for the descriptors, the points to the host and the counts.
__global__ void kSelect(const SiftPoint* points, const unsigned* keys, const int* sorted,
                        const Counters* counters, int maxFeatures, SiftPoint* kept, float2* cs,
                        SiftPoint* hostPoints, HostCounts* hostCounts) {
  const int m = counters->oriented;
  const int k = maxFeatures > 0 ? min(m, maxFeatures) : m;
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r == 0) *hostCounts = {counters->extrema, m, k, 0};
  if (r >= k) return;
  const unsigned key = keys[r] >> kSortLowBit;
  int a = r, b = r + 1;
  while (a > 0 && keys[a - 1] >> kSortLowBit == key) --a;
  while (b < m && keys[b] >> kSortLowBit == key) ++b;
  int pick = sorted[r];
  if (b - a > 1) {
    for (int c = a; c < b; ++c) {
      const SiftPoint& pc = points[sorted[c]];
      int rank = 0;
      for (int j = a; j < b; ++j) {
        const SiftPoint& pj = points[sorted[j]];
        rank += strongerPoint(pj, pc) || (!strongerPoint(pc, pj) && j < c);
      }
      if (rank == r - a) {
        pick = sorted[c];
        break;
      }
    }
  }
  const SiftPoint p = points[pick];
  kept[r] = p;
  hostPoints[r] = p;
  float c, s;
  angleCosSin(p.angle, &c, &s);
  cs[r] = make_float2(c, s);
}

// The order in which kDescribe takes the kept points: largest window first (a point's work
// grows with its window's area, (2W + 1)^2, up to 8 times from the smallest to the largest),
// so that the last blocks to start are short ones and the kernel does not wait on a few long
// chains begun late. A counting sort of W in one block; the order within a W is the atomics'
// (a point's descriptor does not depend on which warp computes it).
constexpr int kWindowBuckets = 64;
__global__ void kDescribeOrder(const SiftPoint* points, const float2* cs, const Counters* counters,
                               int maxFeatures, int* order) {
  __shared__ int next[kWindowBuckets];
  const int m = counters->oriented;
  const int n = maxFeatures > 0 ? min(m, maxFeatures) : m;
  auto bucket = [&](int i) {
    const SiftPoint& p = points[i];
    const int W = descriptorWindow(p.x, p.y, p.sigma, p.angle, cs[i].x, cs[i].y).W;
    return kWindowBuckets - 1 - min(W, kWindowBuckets - 1);  // largest first
  };
  for (int b = threadIdx.x; b < kWindowBuckets; b += blockDim.x) next[b] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&next[bucket(i)], 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (int b = 0; b < kWindowBuckets; ++b) {
      const int c = next[b];
      next[b] = sum;
      sum += c;
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) order[atomicAdd(&next[bucket(i)], 1)] = i;
}

// Grid-stride over the kept points in kDescribeOrder's order; the descriptors go straight to
// (mapped) host memory, and to the device (deviceDesc) for a matcher on the device.
__global__ void kDescribe(const SiftPoint* points, const float2* cs, const int* order,
                          const Counters* counters, int maxFeatures, const GradientLevel* levels,
                          int scales, bool l1root, float* desc, float* deviceDesc) {
  __shared__ float partial[kDescribeWarps][32][kDescStride];
  const int wib = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m = counters->oriented;
  const int n = maxFeatures > 0 ? min(m, maxFeatures) : m;
  for (int j = blockIdx.x * kDescribeWarps + wib; j < n; j += gridDim.x * kDescribeWarps) {
    const int i = order[j];
    const SiftPoint p = points[i];
    const GradientLevel gl = levels[p.octaveIndex * scales + p.level - 1];
    const DescriptorWindow w = descriptorWindow(p.x, p.y, p.sigma, p.angle, cs[i].x, cs[i].y);
    float* hist = warpWindowHistogram<kDescriptorSize, kDescStride>(
        partial[wib], lane, w.W,
        [&](int dx, int dy, float* h) { descriptorPixel(gl, w, dx, dy, h); });
    if (lane == 0) normalizeDescriptor(hist, l1root);
    __syncwarp();
    float* o = desc + static_cast<long>(i) * kDescriptorSize;
    float* od = deviceDesc + static_cast<long>(i) * kDescriptorSize;
    for (int b = lane; b < kDescriptorSize; b += 32) o[b] = od[b] = hist[b];
    __syncwarp();
  }
}

}  // namespace

// Pinned host memory mapped into the device's address space, grown on demand (contents not
// kept): the kernels write the frame's results into it directly.
class MappedStage {
 public:
  MappedStage() = default;
  ~MappedStage() { release(); }
  MappedStage(const MappedStage&) = delete;
  MappedStage& operator=(const MappedStage&) = delete;
  void ensure(std::size_t bytes) {
    if (bytes <= bytes_ && host_) return;
    release();
    VIDMAP_CUDA_CHECK(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    VIDMAP_CUDA_CHECK(cudaHostGetDevicePointer(&device_, host_, 0));
    bytes_ = bytes;
  }
  char* host() const { return static_cast<char*>(host_); }
  char* device() const { return static_cast<char*>(device_); }

 private:
  void release() {
    if (host_) cudaFreeHost(host_);
    host_ = device_ = nullptr;
    bytes_ = 0;
  }
  void* host_ = nullptr;
  void* device_ = nullptr;
  std::size_t bytes_ = 0;
};

// What the work of a frame depends on besides the buffers: a captured graph is replayed only
// for the same shape.
struct FrameShape {
  int width = 0, height = 0, firstOctave = 0, numOctaves = 0, scales = 0, maxFeatures = 0;
  int maxOut = 0, extremaCapacity = 0;
  int source = 0, bands = 0;  // the staged frame's pixel type (Source), the upload's bands
  float sigma = 0, inputSigma = 0, peak = 0, edge = 0;
  bool upright = false, l1root = false;
  bool operator==(const FrameShape&) const = default;
};

struct SiftCuda::Impl {
  gpu::Context ctx;
  cudaStream_t stream;
  gpu::EventTimer timer;
  gpu::DeviceBuffer<float> input, up;
  gpu::DeviceBuffer<std::uint8_t> input8;
  std::vector<gpu::DeviceBuffer<float>> gauss, dog;
  std::vector<gpu::DeviceBuffer<float>> tmp;  // the row pass's output, one per octave
  std::vector<gpu::DeviceBuffer<Gradient>> grad;
  gpu::DeviceBuffer<GradientLevel> levels;
  gpu::DeviceBuffer<unsigned> claims;  // a bit per DoG sample of levels 1..S of every octave
  gpu::DeviceBuffer<GpuExtremum> extrema;
  gpu::DeviceBuffer<Counters> counters;
  gpu::DeviceBuffer<SiftPoint> points, kept;
  gpu::DeviceBuffer<unsigned> keys, sortedKeys;
  gpu::DeviceBuffer<int> order, sortedOrder;
  gpu::DeviceBuffer<unsigned char> sortTemp;
  gpu::DeviceBuffer<float2> cs;
  gpu::DeviceBuffer<int> describeOrder;
  gpu::DeviceBuffer<float> descriptors;  // the kept points' descriptors, as out's, on the device
  cuda::PinnedStage imageIn;             // the frame, staged by the host before the frame's work
  // What imageIn holds: float gray (4 bytes a pixel), 8-bit gray (1) or RGB8 (3).
  enum Source { kFloat, kBytes, kRgb } source = kFloat;
  int uploadBands = 0;  // 0: from the frame's size (bandsFor)
  gpu::Stream copies;   // the upload's bands, ahead of the chain that waits for each
  std::vector<cudaEvent_t> bandEvents;  // band k is on the device
  gpu::DeviceBuffer<float> bandTmp;     // banded first octave: a row-pass buffer per level
  // The frame's work forks off the chain of Gaussian levels (stream): per octave, the levels
  // above S and the extrema (late(oi)) and the gradients (gradients(oi)) wait only for level S
  // of that octave, so they run beside the next octaves' chain; all join before kOrient.
  std::vector<gpu::Stream> sides;
  std::vector<cudaEvent_t> events;  // 0: frame start; 1 + 3 oi + (0 level S, 1 late, 2 gradients)
  MappedStage out;                  // HostCounts, then the kept points, then their descriptors
  int grayWidth = 0, grayHeight = 0;
  // Per image shape: the claim map's first bit of each octave, the capacities.
  std::vector<unsigned> claimBase;
  int extremaCapacity = 0, pointCapacity = 0, keptCapacity = 0;
  int initialExtremaCapacity = 0;  // 0: from the image size
  std::size_t sortBytes = 0;
  bool claimsDirty = true;     // a frame did not finish: clear the map before the next
  std::size_t generation = 0;  // bumped when a buffer is reallocated (a graph holds pointers)
  cudaGraphExec_t graph = nullptr;
  FrameShape graphShape, prepared;
  std::size_t graphGeneration = 0;

  explicit Impl(const gpu::Context& c)
      : ctx(c), stream(ctx.stream().handle()), timer(ctx.device()), copies(ctx.device()) {}
  ~Impl() {
    if (graph) cudaGraphExecDestroy(graph);
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    for (cudaEvent_t e : bandEvents) cudaEventDestroy(e);
  }

  cudaStream_t late(std::size_t oi) const { return sides[2 * oi].handle(); }
  cudaStream_t gradients(std::size_t oi) const { return sides[2 * oi + 1].handle(); }
  cudaEvent_t octaveEvent(std::size_t oi, int which) const { return events[1 + 3 * oi + which]; }
  // `to` waits for the work queued on `from` so far (during a capture: a graph edge).
  static void fork(cudaEvent_t e, cudaStream_t from, cudaStream_t to) {
    VIDMAP_CUDA_CHECK(cudaEventRecord(e, from));
    VIDMAP_CUDA_CHECK(cudaStreamWaitEvent(to, e, 0));
  }
  // The stream waits for every octave's side streams.
  void joinSides(std::size_t octaves) {
    for (std::size_t oi = 0; oi < octaves; ++oi) {
      fork(octaveEvent(oi, 1), late(oi), stream);
      fork(octaveEvent(oi, 2), gradients(oi), stream);
    }
  }

  template <class T>
  T* ensure(gpu::DeviceBuffer<T>& b, std::size_t n) {
    const T* before = b.data();
    T* p = cuda::ensure(ctx, b, n);
    if (p != before) ++generation;
    return p;
  }
  gpu::KernelProfiler::Scope time(const char* kernel) { return time(kernel, stream); }
  gpu::KernelProfiler::Scope time(const char* kernel, cudaStream_t s) {
    return ctx.profiler().time(kernel, s);
  }

  // One level on stream s; t: the octave's row-pass buffer (room for in's pixels).
  void blur(ImageView<const float> in, float* out, const GaussKernel& k, float* t, cudaStream_t s,
            float* dogOut = nullptr) {
    blurRows(in, t, k, 0, in.height, s);
    blurCols(in, out, k, t, 0, in.height, s, dogOut);
  }
  // The row pass of rows [y0, y1) of a level into t.
  void blurRows(ImageView<const float> in, float* t, const GaussKernel& k, int y0, int y1,
                cudaStream_t s) {
    auto scope = time("sift_blur_rows", s);
    kBlurRow<<<gridRows(in.width, y0, y1), kBlock2d, 0, s>>>(in, t, k, y0, y1);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  // The column pass of rows [y0, y1) from t (rows within k's radius of them written), and the
  // DoG of those rows when dogOut is given.
  void blurCols(ImageView<const float> in, float* out, const GaussKernel& k, const float* t, int y0,
                int y1, cudaStream_t s, float* dogOut) {
    const ImageView<const float> tv{t, in.width, in.height, in.width};
    auto scope = time("sift_blur_cols", s);
    kBlurCol<<<gridRows(in.width, y0, y1), kBlock2d, 0, s>>>(tv, out, k, in.data, dogOut, y0, y1);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }

  // The frame into pinned memory (the rows copied by the host's threads), for the upload that
  // begins the frame's work (uploadRows; in the graph with the kernels). An 8-bit gray or an
  // RGB8 frame crosses the bus as bytes (a quarter or three quarters of the float frame's
  // transfer) and is converted on the device: to v / 255 (IEEE division, as io's frame sources
  // make the float gray) or to io::lumaRec601 with the host's roundings, so the features equal
  // those of the float frame the host would have made.
  template <class Pixel>
  void stage(ImageView<const Pixel> img) {
    const int w = img.width, h = img.height;
    const long n = static_cast<long>(w) * h;
    ensure(input, n);
    int perPixel = 4;
    if constexpr (std::is_same_v<Pixel, float>) {
      source = kFloat;
    } else if constexpr (std::is_same_v<Pixel, std::uint8_t>) {
      source = kBytes, perPixel = 1;
    } else {
      static_assert(std::is_same_v<Pixel, Rgb8>);
      source = kRgb, perPixel = 3;
    }
    if (source != kFloat) ensure(input8, n * perPixel);
    grayWidth = w;
    grayHeight = h;
    // The stream is idle here (each call ends synchronised), so no earlier copy still reads
    // the stage; the wait makes sure of it after a call that threw.
    VIDMAP_CUDA_CHECK(cudaStreamSynchronize(stream));
    VIDMAP_CUDA_CHECK(cudaStreamSynchronize(copies.handle()));
    const std::size_t rowBytes = static_cast<std::size_t>(w) * sizeof(Pixel);
    char* st = imageIn.ensure<char>(rowBytes * h);
    if (st != stagePtr) ++generation;  // a graph's copies read the stage
    stagePtr = st;
    copyRows(st, img.data, rowBytes, img.stride * sizeof(Pixel), h);
  }
  char* stagePtr = nullptr;

  int bytesPerPixel() const { return source == kFloat ? 4 : source == kBytes ? 1 : 3; }

  // The frame's rows [y0, y1) to the device on the copy stream, then event e there.
  void uploadRows(int y0, int y1, cudaEvent_t e) {
    const cudaStream_t c = copies.handle();
    const std::size_t rowBytes = static_cast<std::size_t>(grayWidth) * bytesPerPixel();
    char* dst = source == kFloat ? reinterpret_cast<char*>(input.data())
                                 : reinterpret_cast<char*>(input8.data());
    {
      auto scope = time("sift_upload_image", c);
      VIDMAP_CUDA_CHECK(cudaMemcpyAsync(dst + rowBytes * y0, stagePtr + rowBytes * y0,
                                        rowBytes * (y1 - y0), cudaMemcpyHostToDevice, c));
    }
    VIDMAP_CUDA_CHECK(cudaEventRecord(e, c));
  }

  // Rows [y0, y1) of the uploaded bytes to the float gray, on the stream.
  void convertRows(int y0, int y1) {
    if (source == kFloat) return;
    const long i0 = static_cast<long>(y0) * grayWidth, i1 = static_cast<long>(y1) * grayWidth;
    if (source == kBytes) {
      auto scope = time("sift_from_bytes");
      kFromBytes<<<cuda::blocksFor(i1 - i0, kThreads), kThreads, 0, stream>>>(input8.data(),
                                                                              input.data(), i0, i1);
    } else {
      auto scope = time("sift_from_rgb");
      kFromRgb<<<cuda::blocksFor(i1 - i0, kThreads), kThreads, 0, stream>>>(input8.data(),
                                                                            input.data(), i0, i1);
    }
    VIDMAP_CUDA_CHECK_LAUNCH();
  }

  // The bands of this frame's upload: 1 (the whole frame, then its chain) unless the first
  // octave is the frame itself (no upsampling); then one band per 1.5 MiB crossing the bus,
  // rounded, at most 8 and at least 16 rows each; or the count set by setUploadBands. Each
  // band costs the chain's 13 launches in a row (about 27 us on the H200: 16 bands took 0.33 ms
  // more than 4), so bands pay only while a band's copy (about 75 us for 1.5 MiB at the
  // 20-22 GB/s measured) outlasts them: the sweep of docs/benchmarks.md (sift9) measured the
  // RGB8 frame at 1920x1080 best with 3-4 bands (0.923 ms GPU against 1.032 with one, 1.04 with
  // 8, 1.25 with 16) and at 1280x720 with 1-2 (0.572-0.579 ms against 0.600 with 4).
  int bandsFor(const ScaleSpacePlan& plan) const {
    if (plan.firstOctave != 0 || plan.octaves.empty()) return 1;
    const int h = grayHeight;
    const double bytes = static_cast<double>(grayWidth) * h * bytesPerPixel();
    const int want =
        uploadBands > 0
            ? uploadBands
            : static_cast<int>(std::clamp<long>(std::lround(bytes / (1.5 * (1 << 20))), 1, 8));
    return std::max(1, std::min(want, h / 16));
  }

  // Makes room for every buffer of a frame of this plan (no stream work but the clearing of a
  // new claim map and the gradient-level table), so that the frame itself allocates nothing.
  void prepare(const ScaleSpacePlan& plan, int maxOut, int maxFeatures) {
    const size_t no = plan.octaves.size();
    if (gauss.size() < no) {
      gauss.resize(no);
      dog.resize(no);
      grad.resize(no);
      tmp.resize(no);
    }
    while (sides.size() < 2 * no) sides.emplace_back(ctx.device());
    while (events.size() < 1 + 3 * no) {
      cudaEvent_t e = nullptr;
      VIDMAP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      events.push_back(e);
    }
    const int bands = bandsFor(plan);
    while (bandEvents.size() < 1 + static_cast<std::size_t>(bands)) {
      cudaEvent_t e = nullptr;
      VIDMAP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      bandEvents.push_back(e);
    }
    if (bands > 1)
      ensure(bandTmp, static_cast<std::size_t>(plan.levels()) * plan.octaves[0].width *
                          plan.octaves[0].height);
    const int S = plan.scales, L = plan.levels();
    std::vector<GradientLevel> table(no * S);
    claimBase.assign(no, 0);
    long bits = 0, pixels = 0;
    for (size_t oi = 0; oi < no; ++oi) {
      const int ow = plan.octaves[oi].width, oh = plan.octaves[oi].height;
      const long n = static_cast<long>(ow) * oh;
      ensure(gauss[oi], n * L);
      ensure(dog[oi], n * (L - 1));
      Gradient* g = ensure(grad[oi], n * S);
      ensure(tmp[oi], n);
      if (oi == 0 && plan.firstOctave < 0) ensure(up, n);
      for (int s = 0; s < S; ++s) table[oi * S + s] = {g + s * n, ow, oh, ow};
      claimBase[oi] = static_cast<unsigned>(bits);
      bits += n * S;
      pixels += n;
      require(bits < (1L << 32), "sift: the image is too large for the CUDA claim map");
    }
    const unsigned* claimsBefore = claims.data();
    unsigned* c = ensure(claims, (bits + 31) / 32);
    if (c != claimsBefore || claimsDirty) {
      VIDMAP_CUDA_CHECK(cudaMemsetAsync(c, 0, claims.size() * sizeof(unsigned), stream));
      claimsDirty = false;
    }
    GradientLevel* dl = ensure(levels, table.size());
    cuda::upload(dl, table.data(), table.size(), stream);
    // A few times the extrema of a typical frame; a frame with more is redone with room.
    extremaCapacity = std::max<int>(extremaCapacity, initialExtremaCapacity > 0
                                                         ? initialExtremaCapacity
                                                         : std::max<long>(8192, pixels / 64));
    ensure(extrema, extremaCapacity);
    ensure(counters, 1);
    pointCapacity = extremaCapacity * maxOut;
    keptCapacity = maxFeatures > 0 ? std::min(maxFeatures, pointCapacity) : pointCapacity;
    ensure(points, pointCapacity);
    ensure(keys, pointCapacity);
    ensure(sortedKeys, pointCapacity);
    ensure(order, pointCapacity);
    ensure(sortedOrder, pointCapacity);
    sortBytes = 0;
    VIDMAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, sortBytes, keys.data(), sortedKeys.data(), order.data(), sortedOrder.data(),
        pointCapacity, kSortLowBit, 31, stream));
    ensure(sortTemp, sortBytes);
    ensure(kept, keptCapacity);
    ensure(cs, keptCapacity);
    ensure(describeOrder, keptCapacity);
    ensure(descriptors, static_cast<size_t>(keptCapacity) * kDescriptorSize);
    const char* outBefore = out.host();
    out.ensure(sizeof(HostCounts) +
               static_cast<size_t>(keptCapacity) * (sizeof(SiftPoint) + kDescriptorSize * 4));
    if (out.host() != outBefore) ++generation;
    VIDMAP_CUDA_CHECK(cudaStreamSynchronize(stream));  // the table's host copy goes away
  }

  HostCounts* hostCounts() const { return reinterpret_cast<HostCounts*>(out.host()); }
  SiftPoint* hostPoints(char* base) const {
    return reinterpret_cast<SiftPoint*>(base + sizeof(HostCounts));
  }
  float* hostDescriptors(char* base) const {
    return reinterpret_cast<float*>(base + sizeof(HostCounts) +
                                    static_cast<size_t>(keptCapacity) * sizeof(SiftPoint));
  }

  // The frame's upload, then the Gaussian levels and the DoG levels of every octave: levels
  // 0..S of each octave on the stream (the next octave starts from level S), the levels above S
  // on late(oi) once level S is there (joinSides waits for them). With more than one band, the
  // first octave's levels are made band by band as the frame arrives (buildBanded).
  void buildGaussians(const ScaleSpacePlan& plan) {
    const int w = grayWidth, h = grayHeight;
    const int L = plan.levels();
    const int bands = bandsFor(plan);
    fork(bandEvents[0], stream, copies.handle());
    if (bands > 1) {
      buildBanded(plan, bands);
    } else {
      uploadRows(0, h, bandEvents[1]);
      VIDMAP_CUDA_CHECK(cudaStreamWaitEvent(stream, bandEvents[1], 0));
      convertRows(0, h);
    }
    for (size_t oi = bands > 1 ? 1 : 0; oi < plan.octaves.size(); ++oi) {
      const int ow = plan.octaves[oi].width, oh = plan.octaves[oi].height;
      const long n = static_cast<long>(ow) * oh;
      float* g = gauss[oi].data();
      float* d = dog[oi].data();
      if (oi == 0) {
        ImageView<const float> src{input.data(), w, h, w};
        if (plan.firstOctave < 0) {
          auto scope = time("sift_upsample");
          kUpsample<<<grid2d(ow, oh), kBlock2d, 0, stream>>>(src, up.data(), ow, oh);
          VIDMAP_CUDA_CHECK_LAUNCH();
          src = {up.data(), ow, oh, ow};
        }
        if (plan.baseBlur) {
          blur(src, g, plan.base, tmp[oi].data(), stream);
        } else {
          auto scope = time("sift_copy");
          kCopy<<<grid2d(ow, oh), kBlock2d, 0, stream>>>(src, g, 0, oh);
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
      const int S = plan.scales;
      for (int i = 1; i < L; ++i) {
        if (i == S + 1) fork(octaveEvent(oi, 0), stream, late(oi));
        blur({g + (i - 1) * n, ow, oh, ow}, g + i * n, plan.step[i], tmp[oi].data(),
             i <= S ? stream : late(oi), d + (i - 1) * n);
      }
    }
  }

  // The first octave (the frame itself: firstOctave 0) band by band: every band's copy is
  // queued on the copy stream at once; on the stream, each band's conversion waits for its
  // copy, and then each pass of the chain (level 0's blur or copy, then each level's row and
  // column pass, with the DoG) runs on the rows bandSchedule allows, each level with its own
  // row-pass buffer (a later level's row pass must not overwrite the rows an earlier level's
  // column pass has yet to read). All levels of the octave stay on the stream; late(0) and
  // gradients(0) start after its last piece.
  void buildBanded(const ScaleSpacePlan& plan, int bands) {
    const int w = grayWidth, h = grayHeight, L = plan.levels();
    const long n = static_cast<long>(w) * h;
    for (int k = 0; k < bands; ++k)
      uploadRows(k == 0 ? 0 : bandEnd(h, bands, k - 1), bandEnd(h, bands, k), bandEvents[1 + k]);
    // The passes after the conversion (pass 0): level 0 (a blur: row and column pass; or a
    // copy), then a row and a column pass per level.
    struct Pass {
      int level;
      bool column;
    };
    std::vector<Pass> passes = {{-1, false}};
    std::vector<int> halo = {0};
    if (plan.baseBlur) {
      passes.push_back({0, false});
      halo.push_back(0);
      passes.push_back({0, true});
      halo.push_back(plan.base.radius);
    } else {
      passes.push_back({0, true});  // the copy
      halo.push_back(0);
    }
    for (int i = 1; i < L; ++i) {
      passes.push_back({i, false});
      halo.push_back(0);
      passes.push_back({i, true});
      halo.push_back(plan.step[i].radius);
    }
    float* g = gauss[0].data();
    float* d = dog[0].data();
    const ImageView<const float> src{input.data(), w, h, w};
    for (const BandStep& st : bandSchedule(h, bands, halo)) {
      const Pass& p = passes[st.pass];
      float* t = bandTmp.data() + (p.level < 0 ? 0 : p.level) * n;
      if (p.level < 0) {
        VIDMAP_CUDA_CHECK(cudaStreamWaitEvent(stream, bandEvents[1 + st.band], 0));
        convertRows(st.y0, st.y1);
      } else if (p.level == 0 && !plan.baseBlur) {
        auto scope = time("sift_copy");
        kCopy<<<gridRows(w, st.y0, st.y1), kBlock2d, 0, stream>>>(src, g, st.y0, st.y1);
        VIDMAP_CUDA_CHECK_LAUNCH();
      } else {
        const ImageView<const float> in =
            p.level == 0 ? src : ImageView<const float>{g + (p.level - 1) * n, w, h, w};
        const GaussKernel& k = p.level == 0 ? plan.base : plan.step[p.level];
        if (!p.column)
          blurRows(in, t, k, st.y0, st.y1, stream);
        else
          blurCols(in, g + p.level * n, k, t, st.y0, st.y1, stream,
                   p.level == 0 ? nullptr : d + (p.level - 1) * n);
      }
    }
    fork(octaveEvent(0, 0), stream, late(0));
  }

  // The work of one frame after the upload, on the stream; allocates nothing and does not
  // wait, so that it can be captured.
  void enqueue(const ScaleSpacePlan& plan, const SiftOptions& opt, int maxOut) {
    const int S = plan.scales, L = plan.levels();
    const size_t no = plan.octaves.size();
    VIDMAP_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, sizeof(Counters), stream));
    fork(events[0], stream, gradients(0));
    VIDMAP_CUDA_CHECK(
        cudaMemsetAsync(keys.data(), 0xff, static_cast<size_t>(pointCapacity) * 4, gradients(0)));
    buildGaussians(plan);
    for (size_t oi = 0; oi < no; ++oi) {
      // Levels 1..S are there when level S is (the chain on the stream).
      const int ow = plan.octaves[oi].width, oh = plan.octaves[oi].height;
      const cudaStream_t s = gradients(oi);
      VIDMAP_CUDA_CHECK(cudaStreamWaitEvent(s, octaveEvent(oi, 0), 0));
      auto scope = time("sift_gradient", s);
      kGradient<<<grid2d(ow, oh, S), kBlock2d, 0, s>>>(gauss[oi].data(), grad[oi].data(), ow, oh);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    // The extrema after the octave's last level, on the same stream; the counters were cleared
    // on the stream before the fork.
    for (size_t oi = 0; oi < no; ++oi) {
      const int ow = plan.octaves[oi].width, oh = plan.octaves[oi].height;
      const int iw = ow - 2 * kSiftBorder, ih = oh - 2 * kSiftBorder;
      if (iw <= 0 || ih <= 0) continue;
      const DogOctave d{dog[oi].data(), ow, oh, ow, L - 1};
      auto scope = time("sift_extrema", late(oi));
      kExtrema<<<grid2d(iw, ih, S), kBlock2d, 0, late(oi)>>>(
          d, S, 0.8f * opt.peakThreshold, opt.peakThreshold, opt.edgeThreshold,
          static_cast<int>(oi), claimBase[oi], claims.data(), extrema.data(), counters.data(),
          extremaCapacity);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    joinSides(no);
    {
      auto scope = time("sift_orientation");
      const unsigned blocks = std::min(cuda::blocksFor(extremaCapacity, kOrientWarps), 1024u);
      kOrient<<<blocks, kOrientWarps * 32, 0, stream>>>(
          extrema.data(), counters.data(), extremaCapacity, levels.data(), S, opt.sigma, maxOut,
          opt.upright, claims.data(), points.data(), keys.data(), order.data());
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    {
      // The slots past the oriented points keep the key 0xffffffff and sort after them (the
      // sort is stable), so the capacity can be the sort's length.
      auto scope = time("sift_sort");
      std::size_t bytes = sortBytes;
      VIDMAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
          sortTemp.data(), bytes, keys.data(), sortedKeys.data(), order.data(), sortedOrder.data(),
          pointCapacity, kSortLowBit, 31, stream));
    }
    char* dev = out.device();
    {
      auto scope = time("sift_select");
      kSelect<<<cuda::blocksFor(keptCapacity, kThreads), kThreads, 0, stream>>>(
          points.data(), sortedKeys.data(), sortedOrder.data(), counters.data(), opt.maxFeatures,
          kept.data(), cs.data(), hostPoints(dev), reinterpret_cast<HostCounts*>(dev));
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    {
      auto scope = time("sift_descriptor_order");
      kDescribeOrder<<<1, 1024, 0, stream>>>(kept.data(), cs.data(), counters.data(),
                                             opt.maxFeatures, describeOrder.data());
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    {
      auto scope = time("sift_descriptor");
      const unsigned blocks = std::min(cuda::blocksFor(keptCapacity, kDescribeWarps), 4096u);
      kDescribe<<<blocks, kDescribeWarps * 32, 0, stream>>>(
          kept.data(), cs.data(), describeOrder.data(), counters.data(), opt.maxFeatures,
          levels.data(), S, opt.normalization == DescriptorNormalization::kL1Root,
          hostDescriptors(dev), descriptors.data());
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
  }

  template <class Pixel>
  Features extract(ImageView<const Pixel> gray, const SiftOptions& opt, SiftStats* stats,
                   float* gpuMilliseconds);

  // enqueue(), through a CUDA graph captured once per shape when the profiler is off (its
  // events would be captured too).
  void run(const ScaleSpacePlan& plan, const SiftOptions& opt, int maxOut,
           const FrameShape& shape) {
    if (ctx.profiler().enabled()) {
      enqueue(plan, opt, maxOut);
      return;
    }
    if (!graph || !(graphShape == shape) || graphGeneration != generation) {
      if (graph) {
        VIDMAP_CUDA_CHECK(cudaGraphExecDestroy(graph));
        graph = nullptr;
      }
      cudaGraph_t g = nullptr;
      VIDMAP_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      try {
        enqueue(plan, opt, maxOut);
      } catch (...) {
        cudaStreamEndCapture(stream, &g);
        if (g) cudaGraphDestroy(g);
        throw;
      }
      VIDMAP_CUDA_CHECK(cudaStreamEndCapture(stream, &g));
      const cudaError_t e = cudaGraphInstantiate(&graph, g, 0);
      cudaGraphDestroy(g);
      VIDMAP_CUDA_CHECK(e);
      graphShape = shape;
      graphGeneration = generation;
    }
    VIDMAP_CUDA_CHECK(cudaGraphLaunch(graph, stream));
  }
};

SiftCuda::SiftCuda(const gpu::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
SiftCuda::~SiftCuda() = default;

void SiftCuda::setUploadBands(int bands) {
  require(bands >= 0, "sift: the upload's band count must be 0 (automatic) or positive");
  impl_->uploadBands = bands;
}

void SiftCuda::setInitialExtremaCapacity(int n) {
  require(n > 0, "sift: the extrema capacity must be positive");
  impl_->initialExtremaCapacity = n;
}

ImageView<const float> SiftCuda::deviceGray() const {
  return {impl_->input.data(), impl_->grayWidth, impl_->grayHeight, impl_->grayWidth};
}

const float* SiftCuda::deviceDescriptors() const { return impl_->descriptors.data(); }

std::vector<std::vector<float>> SiftCuda::gaussians(ImageView<const float> gray,
                                                    const SiftOptions& options) {
  Impl& m = *impl_;
  m.ctx.makeCurrent();
  const ScaleSpacePlan plan = planScaleSpace(gray.width, gray.height, options);
  m.stage(gray);
  m.prepare(plan, 1, options.maxFeatures);
  m.prepared = {};  // not prepared for an extraction
  m.buildGaussians(plan);
  m.joinSides(plan.octaves.size());
  std::vector<std::vector<float>> out(plan.octaves.size());
  for (size_t oi = 0; oi < plan.octaves.size(); ++oi) {
    out[oi].resize(static_cast<size_t>(plan.octaves[oi].width) * plan.octaves[oi].height *
                   plan.levels());
    cuda::download(out[oi].data(), m.gauss[oi].data(), out[oi].size(), m.stream);
  }
  m.ctx.synchronize();
  return out;
}

// The frame in any of its pixel types (stage() keeps its bytes; the frame's work converts them
// on the device).
template <class Pixel>
Features SiftCuda::Impl::extract(ImageView<const Pixel> gray, const SiftOptions& opt,
                                 SiftStats* stats, float* gpuMilliseconds) {
  Impl& m = *this;
  m.ctx.makeCurrent();
  Features result;
  result.width = gray.width;
  result.height = gray.height;
  const ScaleSpacePlan plan = planScaleSpace(gray.width, gray.height, opt);
  if (plan.octaves.empty()) return result;
  const int maxOut = opt.upright ? 1 : opt.maxOrientations;
  auto shapeNow = [&] {
    return FrameShape{gray.width,
                      gray.height,
                      opt.firstOctave,
                      opt.numOctaves,
                      plan.scales,
                      opt.maxFeatures,
                      maxOut,
                      m.extremaCapacity,
                      static_cast<int>(m.source),
                      m.bandsFor(plan),
                      opt.sigma,
                      opt.inputSigma,
                      opt.peakThreshold,
                      opt.edgeThreshold,
                      opt.upright,
                      opt.normalization == DescriptorNormalization::kL1Root};
  };
  m.stage(gray);
  if (m.claimsDirty || !(m.prepared == shapeNow())) {
    m.prepare(plan, maxOut, opt.maxFeatures);
    m.prepared = shapeNow();
  }
  m.timer.start(m.stream);  // the frame's GPU time starts with the upload (in run())
  HostCounts counts{};
  for (;;) {
    const FrameShape shape = shapeNow();
    m.claimsDirty = true;
    m.run(plan, opt, maxOut, shape);
    m.timer.stop(m.stream);
    m.ctx.synchronize();  // the frame's one wait
    m.claimsDirty = false;
    counts = *m.hostCounts();
    if (counts.extrema <= m.extremaCapacity) break;
    // More extrema than room: redo the frame (the image is still on the device) with room for
    // them and some more, kept for the next frames.
    m.extremaCapacity = counts.extrema + counts.extrema / 4;
    m.prepare(plan, maxOut, opt.maxFeatures);
    m.prepared = shapeNow();
  }
  if (stats) {
    stats->extrema = counts.extrema;
    stats->oriented = counts.oriented;
  }
  const int np = counts.kept;
  result.keypoints.resize(np);
  result.descriptors.resize(static_cast<size_t>(np) * kDescriptorSize);
  const SiftPoint* pts = m.hostPoints(m.out.host());
  for (int i = 0; i < np; ++i) result.keypoints[i] = toKeypoint(pts[i], plan);
  if (np > 0)
    copyRows(result.descriptors.data(), m.hostDescriptors(m.out.host()),
             kDescriptorSize * sizeof(float), kDescriptorSize * sizeof(float), np);
  if (gpuMilliseconds) *gpuMilliseconds = m.timer.elapsedMs();
  return result;
}

Features SiftCuda::extract(ImageView<const float> gray, const SiftOptions& opt, SiftStats* stats,
                           float* gpuMilliseconds) {
  return impl_->extract(gray, opt, stats, gpuMilliseconds);
}

Features SiftCuda::extract(ImageView<const std::uint8_t> gray, const SiftOptions& opt,
                           SiftStats* stats, float* gpuMilliseconds) {
  return impl_->extract(gray, opt, stats, gpuMilliseconds);
}

Features SiftCuda::extract(ImageView<const Rgb8> rgb, const SiftOptions& opt, SiftStats* stats,
                           float* gpuMilliseconds) {
  return impl_->extract(rgb, opt, stats, gpuMilliseconds);
}

}  // namespace vidmap::features
