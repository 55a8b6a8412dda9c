// The run record fed from a GPU context (ctest label `gpu`; skips without a device): stage GPU
// time from events, kernels from the profiler, the device's peak bytes, and the devices.
#include <gtest/gtest.h>

#include <vector>

#include "vidmap/gpu/context.h"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/io/run_record.h"

#if defined(VIDMAP_HAVE_JSON)
#include <nlohmann/json.hpp>
#endif

namespace vidmap::io {
namespace {

TEST(RunRecordGpu, StagesKernelsAndDevicePeakComeFromTheContext) {
  if (gpu::deviceCount() == 0) GTEST_SKIP() << gpu::noDeviceReason();
  RunRecord r;
  ASSERT_EQ(int(r.devices().size()), gpu::deviceCount());
  gpu::Context ctx;
  const std::size_t n = std::size_t(1) << 26;  // 256 MiB of floats
  std::vector<float> host(n, 0.5f);
  {
    auto stage = r.stage("fill", &ctx.stream());
    gpu::DeviceBuffer<float> buf(ctx, n);
    buf.uploadAsync(std::span<const float>(host), ctx.stream());
    for (int i = 0; i < 3; ++i) {
      auto t = ctx.profiler().time("memset", ctx.stream());
      buf.fillBytesAsync(i, ctx.stream());
    }
    stage.stop();  // waits for the stream before the buffer is freed
  }
  r.addGpuUsage(ctx);
  ASSERT_EQ(r.stages().size(), 1u);
  EXPECT_GT(r.stages()[0].gpuMs, 0.0);
  EXPECT_GE(r.stages()[0].wallMs, r.stages()[0].gpuMs * 0.9);
  ASSERT_EQ(r.kernels().count("memset"), 1u);
  EXPECT_EQ(r.kernels().at("memset").launches, 3);
  EXPECT_GT(r.kernels().at("memset").gpuMs, 0.0);
  EXPECT_LE(r.kernels().at("memset").gpuMs, r.stages()[0].gpuMs + 0.01);
  EXPECT_EQ(r.devicePeakBytes(), std::int64_t(n * sizeof(float)));
#if defined(VIDMAP_HAVE_JSON)
  auto j = nlohmann::json::parse(r.toJson());
  EXPECT_EQ(j["peak_memory"]["device_bytes"], std::int64_t(n * sizeof(float)));
  EXPECT_EQ(j["kernels"]["memset"]["launches"], 3);
  EXPECT_FALSE(j["devices"][0]["name"].get<std::string>().empty());
  EXPECT_EQ(j["cuda"]["no_device_reason"], "");
#endif
}

TEST(RunRecordGpu, EachStageGetsItsContextsKernelsAndPeak) {
  if (gpu::deviceCount() == 0) GTEST_SKIP() << gpu::noDeviceReason();
  RunRecord r;
  gpu::Context a, b;
  const std::size_t na = std::size_t(1) << 20, nb = std::size_t(3) << 20;
  {
    gpu::DeviceBuffer<float> x(a, na), y(b, nb);
    for (int i = 0; i < 2; ++i) {
      auto t = a.profiler().time("fill_a", a.stream());
      x.fillBytesAsync(i, a.stream());
    }
    {
      auto t = b.profiler().time("fill_b", b.stream());
      y.fillBytesAsync(0, b.stream());
    }
    a.synchronize();
    b.synchronize();
  }
  r.addStage("one", 5.0);
  r.addGpuUsage("one", a);
  r.addGpuUsage("two", b);
  ASSERT_EQ(r.stages().size(), 2u);
  const StageStat& one = r.stages()[0];
  const StageStat& two = r.stages()[1];
  EXPECT_EQ(one.calls, 1);
  EXPECT_TRUE(one.gpu);
  ASSERT_EQ(one.kernels.size(), 1u);
  EXPECT_EQ(one.kernels[0].name, "fill_a");
  EXPECT_EQ(one.kernels[0].launches, 2);
  EXPECT_GT(one.gpuMs, 0.0);
  EXPECT_DOUBLE_EQ(one.gpuMs, one.kernels[0].gpuMs);
  EXPECT_EQ(one.deviceBytes, std::int64_t(na * sizeof(float)));
  EXPECT_EQ(two.deviceBytes, std::int64_t(nb * sizeof(float)));
  EXPECT_EQ(r.devicePeakBytes(), std::int64_t((na + nb) * sizeof(float)));
  // A disabled profiler records nothing.
  a.profiler().reset();
  a.profiler().setEnabled(false);
  { auto t = a.profiler().time("off", a.stream()); }
  EXPECT_TRUE(a.profiler().stats().empty());
#if defined(VIDMAP_HAVE_JSON)
  auto j = nlohmann::json::parse(r.toJson());
  EXPECT_EQ(j["stages"]["one"]["kernels"]["fill_a"]["launches"], 2);
  EXPECT_EQ(j["stages"]["two"]["device_bytes"], std::int64_t(nb * sizeof(float)));
  EXPECT_EQ(j["kernels"]["fill_b"]["launches"], 1);
#endif
}

// A context that serves two host stages: the kernels of the routed prefix go to the other
// stage's rows and GPU time, the rest and the peak bytes stay with the context's stage.
TEST(RunRecordGpu, RoutedKernelsGoToTheirStage) {
  if (gpu::deviceCount() == 0) GTEST_SKIP() << gpu::noDeviceReason();
  RunRecord r;
  gpu::Context a;
  const std::size_t n = std::size_t(1) << 20;
  {
    gpu::DeviceBuffer<float> x(a, n);
    for (const char* name : {"match_sgemm", "match_guided_sgemm", "match_guided_sgemm"}) {
      auto t = a.profiler().time(name, a.stream());
      x.fillBytesAsync(0, a.stream());
    }
    a.synchronize();
  }
  r.addStage("guided_match", 3.0);
  r.addGpuUsage("match", a, {{"match_guided_", "guided_match"}});
  ASSERT_EQ(r.stages().size(), 2u);
  const StageStat& guided = r.stages()[0];
  const StageStat& plain = r.stages()[1];
  EXPECT_EQ(guided.name, "guided_match");
  EXPECT_EQ(guided.calls, 1);
  EXPECT_TRUE(guided.gpu);
  ASSERT_EQ(guided.kernels.size(), 1u);
  EXPECT_EQ(guided.kernels[0].name, "match_guided_sgemm");
  EXPECT_EQ(guided.kernels[0].launches, 2);
  EXPECT_DOUBLE_EQ(guided.gpuMs, guided.kernels[0].gpuMs);
  EXPECT_EQ(guided.deviceBytes, 0);
  ASSERT_EQ(plain.kernels.size(), 1u);
  EXPECT_EQ(plain.kernels[0].name, "match_sgemm");
  EXPECT_DOUBLE_EQ(plain.gpuMs, plain.kernels[0].gpuMs);
  EXPECT_EQ(plain.deviceBytes, std::int64_t(n * sizeof(float)));
  EXPECT_EQ(r.kernels().at("match_guided_sgemm").launches, 2);  // the run's rows hold both
  EXPECT_EQ(r.kernels().at("match_sgemm").launches, 1);
}

}  // namespace
}  // namespace vidmap::io
