// The no-device path: a CPU-only build, or a CUDA build on a machine without a usable GPU.
// The GPU is hidden before CUDA initialises, so this runs the same on the GPU machine.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/gpu/context.h"
#include "vidmap/gpu/device.h"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/gpu/event_timer.h"

namespace vidmap::gpu {
namespace {

// Runs before main(), hence before the CUDA runtime reads the variable.
const bool kGpuHidden = [] { return setenv("CUDA_VISIBLE_DEVICES", "-1", 1) == 0; }();

std::string errorOf(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NoDevice, DeviceCountIsZeroAndDoesNotThrow) {
  ASSERT_TRUE(kGpuHidden);
  EXPECT_EQ(deviceCount(), 0);
  EXPECT_TRUE(listDevices().empty());
  EXPECT_FALSE(noDeviceReason().empty());
}

TEST(NoDevice, ContextCreationIsAClearError) {
  std::string msg = errorOf([] { Context ctx; });
  if (builtWithCuda()) {
    EXPECT_NE(msg.find("no CUDA device"), std::string::npos) << msg;
  } else {
    EXPECT_NE(msg.find("vidmap was built without CUDA"), std::string::npos) << msg;
  }
}

TEST(NoDevice, DeviceObjectsThrowInsteadOfCrashing) {
  EXPECT_FALSE(errorOf([] { deviceInfo(0); }).empty());
  EXPECT_FALSE(errorOf([] { Stream s(0); }).empty());
  EXPECT_FALSE(errorOf([] { EventTimer t(0); }).empty());
  EXPECT_FALSE(errorOf([] { Context ctx(3); }).empty());
}

TEST(NoDevice, EmptyBufferIsUsableAndNamesMisuse) {
  DeviceBuffer<float> b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.device(), -1);
  EXPECT_TRUE(b.download().empty());
  std::vector<float> v(4, 1.0f);
  std::string msg = errorOf([&] { b.upload(v); });
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
  DeviceBuffer<float> moved(std::move(b));
  EXPECT_TRUE(moved.empty());
}

TEST(DeviceInfo, VersionAndBandwidthArithmetic) {
  EXPECT_EQ(versionString(13000), "13.0");
  EXPECT_EQ(versionString(12080), "12.8");
  EXPECT_EQ(versionString(0), "unknown");
  DeviceInfo d;
  d.index = 0;
  d.name = "Test GPU";
  d.computeMajor = 9;
  d.memoryClockKHz = 1000000;   // 1 GHz, double data rate
  d.memoryBusWidthBits = 1024;  // 128 bytes per transfer
  EXPECT_DOUBLE_EQ(d.peakBandwidthGBs(), 256.0);
  std::string line = describe(d);
  EXPECT_NE(line.find("Test GPU"), std::string::npos) << line;
  EXPECT_NE(line.find("compute 9.0"), std::string::npos) << line;
  EXPECT_NE(line.find("256 GB/s"), std::string::npos) << line;
}

}  // namespace
}  // namespace vidmap::gpu
