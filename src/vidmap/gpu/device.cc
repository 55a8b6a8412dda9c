#include "vidmap/gpu/device.h"

#include <cstdio>

namespace vidmap::gpu {

std::vector<DeviceInfo> listDevices() {
  std::vector<DeviceInfo> out;
  int n = deviceCount();
  for (int i = 0; i < n; ++i) out.push_back(deviceInfo(i));
  return out;
}

std::string versionString(int v) {
  if (v <= 0) return "unknown";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string describe(const DeviceInfo& d) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "[%d] %s: compute %d.%d, %d SMs @ %d MHz, %.1f GiB, %.0f GB/s peak (%d-bit @ %d "
                "MHz), L2 %.0f MiB, shared memory %lld KiB/block (%lld KiB opt-in), %d "
                "threads/block, warp %d",
                d.index, d.name.c_str(), d.computeMajor, d.computeMinor, d.multiProcessors,
                d.clockKHz / 1000, d.totalMemoryBytes / 1073741824.0, d.peakBandwidthGBs(),
                d.memoryBusWidthBits, d.memoryClockKHz / 1000, d.l2CacheBytes / 1048576.0,
                static_cast<long long>(d.sharedMemPerBlock / 1024),
                static_cast<long long>(d.sharedMemPerBlockOptin / 1024), d.maxThreadsPerBlock,
                d.warpSize);
  return buf;
}

}  // namespace vidmap::gpu
