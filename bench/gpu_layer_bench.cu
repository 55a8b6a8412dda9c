// Costs of the GPU layer on the device (prints one JSON object):
//  - launch_us: host+device time per launch of a tiny kernel, plain vs timed by the
//    KernelProfiler (the peer is the plain launch; the difference is the profiler's cost);
//  - saxpy: GPU ms of a large z = a*x + y by the profiler and by an outer EventTimer, the
//    bandwidth it reaches, against a device-to-device cudaMemcpy of the same bytes (peer and
//    ceiling) and the datasheet peak from DeviceInfo;
//  - alloc_us: cudaMalloc+cudaFree of 64 MiB raw vs through DeviceBuffer (accounting cost).
// Each figure is the median of 7 repeats after a warm-up.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "vidmap/gpu/context.h"
#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/gpu/event_timer.h"

namespace vg = vidmap::gpu;

namespace {

__global__ void saxpyKernel(long long n, float a, const float* x, const float* y, float* z) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    z[i] = a * x[i] + y[i];
}

void launch(const vg::Stream& s, long long n, const float* x, const float* y, float* z, int sms) {
  int blocks = (int)std::min<long long>((n + 255) / 256, 8LL * sms);
  saxpyKernel<<<blocks, 256, 0, s.handle()>>>(n, 1.5f, x, y, z);
  VIDMAP_CUDA_CHECK_LAUNCH();
}

template <class F>
double medianOf(int reps, F&& f) {
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) v.push_back(f());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main() {
  try {
    if (vg::deviceCount() == 0) {
      std::printf("{\"skipped\": \"%s\"}\n", vg::noDeviceReason().c_str());
      return 0;
    }
    vg::Context ctx;
    const int sms = ctx.info().multiProcessors;
    auto& s = ctx.stream();

    // Tiny launches: 4096 elements, 20000 launches per repeat.
    const long long tiny = 4096;
    const int launches = 20000;
    vg::DeviceBuffer<float> tx(ctx, tiny), ty(ctx, tiny), tz(ctx, tiny);
    tx.fillBytes(0x3F);
    ty.fillBytes(0x3F);
    auto plain = [&] {
      s.synchronize();
      double t0 = nowMs();
      for (int i = 0; i < launches; ++i) launch(s, tiny, tx.data(), ty.data(), tz.data(), sms);
      s.synchronize();
      return (nowMs() - t0) * 1e3 / launches;
    };
    auto profiled = [&] {
      s.synchronize();
      double t0 = nowMs();
      for (int i = 0; i < launches; ++i) {
        auto t = ctx.profiler().time("tiny", s);
        launch(s, tiny, tx.data(), ty.data(), tz.data(), sms);
      }
      auto st = ctx.profiler().stats();  // resolving is part of the cost
      return (nowMs() - t0) * 1e3 / launches;
    };
    plain();
    profiled();
    double plainUs = medianOf(7, plain), profiledUs = medianOf(7, profiled);

    // Large saxpy: 2^28 floats per array (3 GiB moved per launch: two reads, one write).
    const long long n = 1LL << 28;
    vg::DeviceBuffer<float> x(ctx, n), y(ctx, n), z(ctx, n);
    x.fillBytes(0x3F);
    y.fillBytes(0x40);
    ctx.profiler().reset();
    vg::EventTimer outer(ctx.device());
    double outerMs = medianOf(7, [&] {
      outer.start(s);
      {
        auto t = ctx.profiler().time("saxpy", s);
        launch(s, n, x.data(), y.data(), z.data(), sms);
      }
      outer.stop(s);
      return double(outer.elapsedMs());
    });
    auto stats = ctx.profiler().stats();
    double profMs = stats.at(0).gpuMs / stats.at(0).launches;
    double copyMs = medianOf(7, [&] {
      outer.start(s);
      vg::rt::copyDeviceToDevice(z.data(), x.data(), n * sizeof(float), s.handle());
      outer.stop(s);
      return double(outer.elapsedMs());
    });
    double saxpyBytes = 3.0 * n * sizeof(float), copyBytes = 2.0 * n * sizeof(float);

    // Allocation of 64 MiB.
    const std::size_t allocBytes = std::size_t(64) << 20;
    auto rawAlloc = [&] {
      double t0 = nowMs();
      for (int i = 0; i < 50; ++i) {
        void* p = nullptr;
        VIDMAP_CUDA_CHECK(cudaMalloc(&p, allocBytes));
        VIDMAP_CUDA_CHECK(cudaFree(p));
      }
      return (nowMs() - t0) * 1e3 / 50;
    };
    auto bufAlloc = [&] {
      double t0 = nowMs();
      for (int i = 0; i < 50; ++i) vg::DeviceBuffer<std::byte> b(ctx, allocBytes);
      return (nowMs() - t0) * 1e3 / 50;
    };
    rawAlloc();
    double rawUs = medianOf(7, rawAlloc), bufUs = medianOf(7, bufAlloc);

    std::printf(
        "{\"device\": \"%s\", \"runtime\": \"%s\", \"driver\": \"%s\",\n"
        " \"launch_us\": {\"plain\": %.3f, \"profiled\": %.3f, \"launches\": %d, "
        "\"elements\": %lld},\n"
        " \"saxpy\": {\"elements\": %lld, \"profiler_ms\": %.4f, \"outer_event_ms\": %.4f, "
        "\"gbs\": %.1f, \"d2d_copy_ms\": %.4f, \"d2d_copy_gbs\": %.1f, \"peak_gbs\": %.1f},\n"
        " \"alloc_us\": {\"bytes\": %zu, \"cudaMalloc_free\": %.2f, \"DeviceBuffer\": %.2f},\n"
        " \"device_peak_bytes\": %lld}\n",
        ctx.info().name.c_str(), vg::versionString(vg::runtimeVersion()).c_str(),
        vg::versionString(vg::driverVersion()).c_str(), plainUs, profiledUs, launches, tiny, n,
        profMs, outerMs, saxpyBytes / (profMs * 1e6), copyMs, copyBytes / (copyMs * 1e6),
        ctx.info().peakBandwidthGBs(), allocBytes, rawUs, bufUs,
        (long long)ctx.memory().peakBytes());
    return 0;
  } catch (const vidmap::Error& e) {
    std::fprintf(stderr, "gpu_layer_bench: error: %s\n", e.what());
    return 1;
  }
}
