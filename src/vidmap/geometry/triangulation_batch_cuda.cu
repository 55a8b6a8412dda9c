// CUDA triangulation of track batches (see triangulation_batch_cuda.h).
#include <algorithm>
#include <span>

#include "vidmap/geometry/triangulation_batch_cuda.h"
#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/gpu/event_timer.h"

namespace vidmap::geometry {
namespace {

constexpr int kThreads = 128;

__global__ void triangulateTracks(int num_tracks, const double* __restrict__ views,
                                  const int* __restrict__ track_begin,
                                  const int* __restrict__ view_of,
                                  const double* __restrict__ pixels, double max_error_px,
                                  double min_angle_deg, double* __restrict__ xn,
                                  tri::TrackResult* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= num_tracks) return;
  const int b = track_begin[i];
  tri::TrackResult r;
  tri::triangulateTrack(views, view_of + b, pixels + 2 * static_cast<long>(b),
                        track_begin[i + 1] - b, max_error_px, min_angle_deg,
                        xn + 2 * static_cast<long>(b), &r);
  out[i] = r;
}

template <class T>
void ensure(gpu::Context& ctx, gpu::DeviceBuffer<T>& buf, std::size_t n) {
  if (buf.size() < n) buf = gpu::DeviceBuffer<T>(ctx, std::max<std::size_t>(n + n / 2, 1));
}

}  // namespace

struct CudaTriangulator::Impl {
  explicit Impl(gpu::Context& c) : ctx(c), timer(c.device()) {}
  gpu::Context& ctx;
  gpu::EventTimer timer;
  float last_ms = 0;
  gpu::DeviceBuffer<double> views, pixels, xn;
  gpu::DeviceBuffer<int> track_begin, view_of;
  gpu::DeviceBuffer<tri::TrackResult> out;
};

CudaTriangulator::CudaTriangulator(gpu::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}

CudaTriangulator::~CudaTriangulator() = default;

std::vector<TrackTriangulation> CudaTriangulator::triangulate(const TriangulationBatch& batch,
                                                              const TriangulationOptions& options) {
  options.check();
  batch.check();
  Impl& s = *impl_;
  const int n = batch.numTracks();
  std::vector<TrackTriangulation> result(n);
  if (n == 0) return result;
  s.ctx.makeCurrent();
  ensure(s.ctx, s.views, batch.views.size());
  ensure(s.ctx, s.pixels, batch.pixels.size());
  ensure(s.ctx, s.xn, batch.pixels.size());
  ensure(s.ctx, s.track_begin, batch.track_begin.size());
  ensure(s.ctx, s.view_of, batch.view_of.size());
  ensure(s.ctx, s.out, n);
  const gpu::Stream& stream = s.ctx.stream();
  s.timer.start(stream);
  if (!batch.views.empty()) s.views.uploadAsync(std::span<const double>(batch.views), stream);
  if (!batch.pixels.empty()) s.pixels.uploadAsync(std::span<const double>(batch.pixels), stream);
  s.track_begin.uploadAsync(std::span<const int>(batch.track_begin), stream);
  if (!batch.view_of.empty()) s.view_of.uploadAsync(std::span<const int>(batch.view_of), stream);
  {
    auto t = s.ctx.profiler().time("geometry.triangulate", stream);
    triangulateTracks<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream.handle()>>>(
        n, s.views.data(), s.track_begin.data(), s.view_of.data(), s.pixels.data(),
        options.max_error_px, options.min_angle_deg, s.xn.data(), s.out.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  std::vector<tri::TrackResult> raw(n);
  s.out.downloadAsync(std::span<tri::TrackResult>(raw), stream);
  s.timer.stop(stream);
  s.last_ms = s.timer.elapsedMs();  // waits for the download
  for (int i = 0; i < n; ++i) result[i] = toTrackTriangulation(raw[i]);
  return result;
}

float CudaTriangulator::lastDeviceMs() const { return impl_->last_ms; }

}  // namespace vidmap::geometry
