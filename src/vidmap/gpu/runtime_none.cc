// runtime.h for CPU-only builds (VIDMAP_CUDA=OFF or no nvcc): no devices, and every call
// that would need one throws a clear Error, so callers fall back to the CPU backend.
#include "vidmap/core/error.h"
#include "vidmap/gpu/runtime.h"

namespace vidmap::gpu {

namespace {
[[noreturn]] void notBuilt() { throw Error(rt::kNotBuilt); }
}  // namespace

bool builtWithCuda() noexcept { return false; }
int deviceCount() noexcept { return 0; }
std::string noDeviceReason() { return rt::kNotBuilt; }
DeviceInfo deviceInfo(int) { notBuilt(); }
int runtimeVersion() noexcept { return 0; }
int driverVersion() noexcept { return 0; }

namespace rt {

void setDevice(int) { notBuilt(); }
void deviceSynchronize(int) { notBuilt(); }
void* allocate(int, std::size_t) { notBuilt(); }
void release(int, void*) noexcept {}
void copyToDevice(void*, const void*, std::size_t, StreamHandle) { notBuilt(); }
void copyToHost(void*, const void*, std::size_t, StreamHandle) { notBuilt(); }
void copyDeviceToDevice(void*, const void*, std::size_t, StreamHandle) { notBuilt(); }
void memsetBytes(void*, int, std::size_t, StreamHandle) { notBuilt(); }
StreamHandle createStream(int) { notBuilt(); }
void destroyStream(StreamHandle) noexcept {}
void synchronize(StreamHandle) { notBuilt(); }
EventHandle createEvent(int) { notBuilt(); }
void destroyEvent(EventHandle) noexcept {}
void record(EventHandle, StreamHandle) { notBuilt(); }
bool ready(EventHandle) { notBuilt(); }
void synchronize(EventHandle) { notBuilt(); }
float elapsedMs(EventHandle, EventHandle) { notBuilt(); }

}  // namespace rt
}  // namespace vidmap::gpu
