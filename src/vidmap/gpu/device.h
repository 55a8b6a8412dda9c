// What the CUDA devices of this machine are. Compiles without CUDA: a CPU-only build, or a
// machine without a driver or a GPU, reports zero devices and never throws from
// deviceCount().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vidmap::gpu {

// The properties of one device that matter for sizing launches and for the run record.
struct DeviceInfo {
  int index = -1;
  std::string name;
  std::string pciBusId;
  int computeMajor = 0;
  int computeMinor = 0;
  int multiProcessors = 0;
  std::int64_t totalMemoryBytes = 0;
  std::int64_t l2CacheBytes = 0;
  int maxThreadsPerBlock = 0;
  int maxThreadsPerMultiProcessor = 0;
  int maxBlocksPerMultiProcessor = 0;
  std::int64_t sharedMemPerBlock = 0;       // without opting in (48 KiB)
  std::int64_t sharedMemPerBlockOptin = 0;  // after cudaFuncSetAttribute raises the limit
  std::int64_t sharedMemPerMultiProcessor = 0;
  int registersPerBlock = 0;
  int registersPerMultiProcessor = 0;
  int warpSize = 0;
  int clockKHz = 0;        // peak SM clock
  int memoryClockKHz = 0;  // peak memory clock
  int memoryBusWidthBits = 0;
  bool eccEnabled = false;

  // Peak DRAM bandwidth from the memory clock and bus width (double data rate), in GB/s.
  double peakBandwidthGBs() const {
    return 2.0 * memoryClockKHz * 1e3 * (memoryBusWidthBits / 8.0) / 1e9;
  }
};

// True when this binary was built with the CUDA backend.
bool builtWithCuda() noexcept;

// The number of usable CUDA devices: 0 without CUDA, without a driver or without a GPU.
int deviceCount() noexcept;

// Why deviceCount() is 0 ("vidmap was built without CUDA", the CUDA error), or "" when
// there are devices.
std::string noDeviceReason();

// The properties of device `index`; throws vidmap::Error when it does not exist.
DeviceInfo deviceInfo(int index);

// deviceInfo() of every device (empty when there is none).
std::vector<DeviceInfo> listDevices();

// CUDA runtime and driver versions as 1000*major + 10*minor (0 when unknown or not built).
int runtimeVersion() noexcept;
int driverVersion() noexcept;

// "13.0" from 13000.
std::string versionString(int cudaVersion);

// One line for logs and `vidmap info`: name, compute capability, SMs, memory, bandwidth.
std::string describe(const DeviceInfo& info);

}  // namespace vidmap::gpu
