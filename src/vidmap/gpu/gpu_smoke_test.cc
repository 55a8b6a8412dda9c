// GPU smoke test (ctest label `gpu`): device info, a kernel against its CPU twin, memory
// accounting, the profiler and errors. Skips when no CUDA device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <random>
#include <vector>

#include "vidmap/core/build_info.h"
#include "vidmap/core/error.h"
#include "vidmap/gpu/context.h"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/gpu/event_timer.h"
#include "vidmap/gpu/saxpy_test_kernel.h"

namespace vidmap::gpu {
namespace {

using smoke::saxpyAt;
using smoke::saxpyCuda;

class GpuSmoke : public ::testing::Test {
 protected:
  void SetUp() override {
    if (deviceCount() == 0) GTEST_SKIP() << noDeviceReason();
  }
};

std::vector<float> randomFloats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

// With FMA the device rounds a*x+y once, the host (-ffp-contract=off) twice: they differ by at
// most a few units of rounding of |a*x| + |y|. With -fmad=false they are equal.
void expectSaxpyMatchesCpu(float a, const std::vector<float>& x, const std::vector<float>& y,
                           const std::vector<float>& z) {
  ASSERT_EQ(z.size(), x.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    float ref = saxpyAt(a, x[i], y[i]);
    float tol = build::kCudaNoFma ? 0.0f : std::ldexp(std::fabs(a * x[i]) + std::fabs(y[i]), -22);
    if (!(std::fabs(z[i] - ref) <= tol)) {  // NaN (an unwritten element) fails too
      if (++bad <= 5) ADD_FAILURE() << "i=" << i << " gpu " << z[i] << " cpu " << ref;
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST_F(GpuSmoke, DeviceInfoIsSane) {
  EXPECT_GT(runtimeVersion(), 0);
  EXPECT_GT(driverVersion(), 0);
  for (const DeviceInfo& d : listDevices()) {
    std::printf("device %s\n", describe(d).c_str());
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.computeMajor, 5);
    EXPECT_GT(d.multiProcessors, 0);
    EXPECT_GT(d.totalMemoryBytes, std::int64_t(1) << 30);
    EXPECT_EQ(d.warpSize, 32);
    EXPECT_GE(d.maxThreadsPerBlock, 512);
    EXPECT_GE(d.maxThreadsPerMultiProcessor, d.maxThreadsPerBlock);
    EXPECT_GE(d.sharedMemPerBlock, 16 * 1024);
    EXPECT_GE(d.sharedMemPerBlockOptin, d.sharedMemPerBlock);
    EXPECT_GT(d.l2CacheBytes, 0);
    EXPECT_GT(d.clockKHz, 100000);
    EXPECT_GT(d.memoryBusWidthBits, 0);
    EXPECT_GT(d.peakBandwidthGBs(), 50.0);
  }
}

TEST_F(GpuSmoke, SaxpyEqualsCpuAndIsAccountedAndProfiled) {
  Context ctx;
  const std::size_t n = (std::size_t(1) << 22) + 3;  // not a multiple of the block size
  const float a = 1.7f;
  auto x = randomFloats(n, 1), y = randomFloats(n, 2);
  EXPECT_EQ(ctx.memory().liveBytes(), 0);
  {
    DeviceBuffer<float> dx(ctx, std::span<const float>(x)), dy(ctx, std::span<const float>(y));
    DeviceBuffer<float> dz(ctx, n);
    EXPECT_EQ(ctx.memory().liveBytes(), std::int64_t(3 * n * sizeof(float)));
    EXPECT_EQ(ctx.memory().liveAllocations(), 3);
    dz.fillBytes(0xFF);  // NaN everywhere: an element the kernel misses fails the comparison
    saxpyCuda(ctx, ctx.stream(), a, dx, dy, dz);
    expectSaxpyMatchesCpu(a, x, y, dz.download());
  }
  EXPECT_EQ(ctx.memory().liveBytes(), 0);
  EXPECT_EQ(ctx.memory().liveAllocations(), 0);
  EXPECT_EQ(ctx.memory().peakBytes(), std::int64_t(3 * n * sizeof(float)));

  auto stats = ctx.profiler().stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].name, "saxpy");
  EXPECT_EQ(stats[0].launches, 1);
  EXPECT_GT(stats[0].gpuMs, 0.0);
  EXPECT_TRUE(std::isfinite(stats[0].gpuMs));
}

TEST_F(GpuSmoke, ProfilerResolvesLazilyAndAgreesWithAnEventTimer) {
  Context ctx;
  const std::size_t n = std::size_t(1) << 24;
  auto x = randomFloats(n, 3), y = randomFloats(n, 4);
  DeviceBuffer<float> dx(ctx, std::span<const float>(x)), dy(ctx, std::span<const float>(y)),
      dz(ctx, n);
  Stream s(ctx.device());
  saxpyCuda(ctx, s, 2.0f, dx, dy, dz);  // warm-up (module load)
  ctx.profiler().reset();
  EventTimer outer(ctx.device());
  outer.start(s);
  for (int i = 0; i < 5; ++i) saxpyCuda(ctx, s, 2.0f, dx, dy, dz);
  outer.stop(s);
  EXPECT_EQ(ctx.profiler().pending(), 5u);  // nothing waited for yet
  auto stats = ctx.profiler().stats();
  EXPECT_EQ(ctx.profiler().pending(), 0u);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].launches, 5);
  float total = outer.elapsedMs();
  std::printf("saxpy n=%zu: 5 launches %.3f ms by the profiler, %.3f ms by the outer timer\n", n,
              stats[0].gpuMs, total);
  EXPECT_GT(stats[0].gpuMs, 0.0);
  EXPECT_LE(stats[0].gpuMs, total + 0.01);  // the launches lie inside the outer interval
  expectSaxpyMatchesCpu(2.0f, x, y, dz.download());
}

TEST_F(GpuSmoke, AsyncCopiesOnAnOwnStream) {
  Context ctx;
  Stream s(ctx.device());
  auto x = randomFloats(1000, 5);
  DeviceBuffer<float> d(ctx, 1000);
  d.uploadAsync(std::span<const float>(x), s);
  std::vector<float> back(400);
  d.downloadAsync(std::span<float>(back), s, 600);
  s.synchronize();
  for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], x[600 + i]);
  std::vector<float> ten(10);
  EXPECT_THROW(d.upload(std::span<const float>(ten), 995), Error);
  EXPECT_THROW(d.download(std::span<float>(ten), 1001), Error);
}

TEST_F(GpuSmoke, TwoContextsDoNotInterfere) {
  Context a, b;
  EXPECT_NE(a.stream().handle(), b.stream().handle());
  DeviceBuffer<float> buf(a, 1 << 18);
  EXPECT_EQ(a.memory().liveBytes(), std::int64_t(1 << 20));
  EXPECT_EQ(b.memory().liveBytes(), 0);
  auto x = randomFloats(1 << 18, 6);
  DeviceBuffer<float> dx(a, std::span<const float>(x)), dz(a, x.size());
  saxpyCuda(a, a.stream(), 1.0f, dx, dx, dz);
  EXPECT_EQ(a.profiler().stats().size(), 1u);
  EXPECT_TRUE(b.profiler().stats().empty());
}

TEST_F(GpuSmoke, BuffersMoveAndMayOutliveTheirContext) {
  DeviceBuffer<int> kept;
  std::vector<int> v{1, 2, 3, 4, 5};
  {
    Context ctx;
    DeviceBuffer<int> first(ctx, std::span<const int>(v));
    DeviceBuffer<int> second(std::move(first));
    EXPECT_TRUE(first.empty());
    EXPECT_EQ(ctx.memory().liveBytes(), std::int64_t(5 * sizeof(int)));
    kept = std::move(second);
    EXPECT_EQ(ctx.memory().liveAllocations(), 1);
  }
  EXPECT_EQ(kept.download(), v);  // the context's state lives as long as its buffers
  kept.reset();
  EXPECT_TRUE(kept.empty());
}

TEST_F(GpuSmoke, AbsurdAllocationIsAClearErrorAndTheContextStillWorks) {
  Context ctx;
  try {
    DeviceBuffer<std::byte> huge(ctx, std::size_t(1) << 50);  // 1 PiB
    FAIL() << "allocating 1 PiB succeeded";
  } catch (const Error& e) {
    std::string msg = e.what();
    std::printf("expected error: %s\n", msg.c_str());
    EXPECT_NE(msg.find("cannot allocate 1125899906842624 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("device 0"), std::string::npos) << msg;
  }
  EXPECT_EQ(ctx.memory().liveBytes(), 0);
  EXPECT_EQ(ctx.memory().peakBytes(), 0);
  // The failure was cleared: allocation and launches work afterwards.
  auto x = randomFloats(1000, 7), y = randomFloats(1000, 8);
  DeviceBuffer<float> dx(ctx, std::span<const float>(x)), dy(ctx, std::span<const float>(y)),
      dz(ctx, 1000);
  saxpyCuda(ctx, ctx.stream(), 3.0f, dx, dy, dz);
  expectSaxpyMatchesCpu(3.0f, x, y, dz.download());
}

TEST_F(GpuSmoke, BadLaunchIsAClearError) {
  Context ctx;
  auto hx = randomFloats(100, 9), hy = randomFloats(100, 10);
  DeviceBuffer<float> x(ctx, std::span<const float>(hx)), y(ctx, std::span<const float>(hy));
  DeviceBuffer<float> z(ctx, 100), w(ctx, 99);
  z.fillBytes(0xFF);
  try {
    smoke::saxpyCudaBlock(ctx.stream(), 4096, 1.0f, x, y, z);  // > 1024 threads per block
    FAIL() << "a launch of 4096 threads per block succeeded";
  } catch (const Error& e) {
    std::string msg = e.what();
    // The runtime names this invalid configuration or invalid value, depending on the driver
    // (CUDA 13 on the H200 says cudaErrorInvalidValue); either way the message must name it.
    EXPECT_TRUE(msg.find("cudaErrorInvalidConfiguration") != std::string::npos ||
                msg.find("cudaErrorInvalidValue") != std::string::npos)
        << msg;
    EXPECT_NE(msg.find("saxpy_test_kernel.cu"), std::string::npos) << msg;
  }
  EXPECT_THROW(smoke::saxpyCudaBlock(ctx.stream(), 256, 1.0f, x, y, w), Error);
  smoke::saxpyCudaBlock(ctx.stream(), 256, 1.0f, x, y, z);  // the error did not stick
  expectSaxpyMatchesCpu(1.0f, hx, hy, z.download());
}

}  // namespace
}  // namespace vidmap::gpu
