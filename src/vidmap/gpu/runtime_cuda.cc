// The CUDA backend of runtime.h: every call is checked and becomes a vidmap::Error.
#include <cuda_runtime.h>

#include <cstdio>
#include <sstream>

#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/runtime.h"

namespace vidmap::gpu {

namespace {

std::string humanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

int attribute(cudaDeviceAttr attr, int device) {
  int v = 0;
  VIDMAP_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, device));
  return v;
}

}  // namespace

bool builtWithCuda() noexcept { return true; }

int deviceCount() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::string noDeviceReason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    // Without libcuda the runtime says "insufficient driver"; name the real cause.
    if (driverVersion() == 0) return "no CUDA device: no CUDA driver is installed";
    return "no CUDA device: " + detail::cudaErrorText(e);
  }
  return n == 0 ? "no CUDA device: the driver reports none" : "";
}

DeviceInfo deviceInfo(int index) {
  int n = deviceCount();
  if (index < 0 || index >= n)
    throw Error("CUDA device " + std::to_string(index) + " does not exist (" + std::to_string(n) +
                " device" + (n == 1 ? "" : "s") + " present)");
  cudaDeviceProp p{};
  VIDMAP_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  DeviceInfo d;
  d.index = index;
  d.name = p.name;
  char bus[32] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) d.pciBusId = bus;
  (void)cudaGetLastError();
  d.computeMajor = p.major;
  d.computeMinor = p.minor;
  d.multiProcessors = p.multiProcessorCount;
  d.totalMemoryBytes = static_cast<std::int64_t>(p.totalGlobalMem);
  d.l2CacheBytes = p.l2CacheSize;
  d.maxThreadsPerBlock = p.maxThreadsPerBlock;
  d.maxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  d.maxBlocksPerMultiProcessor = p.maxBlocksPerMultiProcessor;
  d.sharedMemPerBlock = static_cast<std::int64_t>(p.sharedMemPerBlock);
  d.sharedMemPerBlockOptin = static_cast<std::int64_t>(p.sharedMemPerBlockOptin);
  d.sharedMemPerMultiProcessor = static_cast<std::int64_t>(p.sharedMemPerMultiprocessor);
  d.registersPerBlock = p.regsPerBlock;
  d.registersPerMultiProcessor = p.regsPerMultiprocessor;
  d.warpSize = p.warpSize;
  d.memoryBusWidthBits = p.memoryBusWidth;
  d.eccEnabled = p.ECCEnabled != 0;
  // CUDA 13 dropped the clock fields from cudaDeviceProp; the attributes work everywhere.
  d.clockKHz = attribute(cudaDevAttrClockRate, index);
  d.memoryClockKHz = attribute(cudaDevAttrMemoryClockRate, index);
  return d;
}

int runtimeVersion() noexcept {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

int driverVersion() noexcept {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

namespace rt {

void setDevice(int device) { VIDMAP_CUDA_CHECK(cudaSetDevice(device)); }

void deviceSynchronize(int device) {
  setDevice(device);
  VIDMAP_CUDA_CHECK(cudaDeviceSynchronize());
}

void* allocate(int device, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  setDevice(device);
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    std::size_t freeBytes = 0, totalBytes = 0;
    std::string room;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess)
      room =
          " (" + humanBytes(double(freeBytes)) + " free of " + humanBytes(double(totalBytes)) + ")";
    (void)cudaGetLastError();
    throw Error("cannot allocate " + std::to_string(bytes) + " bytes (" +
                humanBytes(double(bytes)) + ") on CUDA device " + std::to_string(device) + room +
                ": cudaMalloc failed: " + detail::cudaErrorText(e));
  }
  return p;
}

void release(int device, void* ptr) noexcept {
  if (!ptr) return;
  // Errors are ignored: at process exit the runtime may already be gone
  // (cudaErrorCudartUnloading), and a destructor must not throw.
  if (cudaSetDevice(device) == cudaSuccess) (void)cudaFree(ptr);
  (void)cudaGetLastError();
}

void copyToDevice(void* dst, const void* src, std::size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
}

void copyToHost(void* dst, const void* src, std::size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
}

void copyDeviceToDevice(void* dst, const void* src, std::size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  VIDMAP_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void memsetBytes(void* dst, int value, std::size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  VIDMAP_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, stream));
}

StreamHandle createStream(int device) {
  setDevice(device);
  cudaStream_t s = nullptr;
  VIDMAP_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

void destroyStream(StreamHandle stream) noexcept {
  if (stream) (void)cudaStreamDestroy(stream);
  (void)cudaGetLastError();
}

void synchronize(StreamHandle stream) { VIDMAP_CUDA_CHECK(cudaStreamSynchronize(stream)); }

EventHandle createEvent(int device) {
  setDevice(device);
  cudaEvent_t e = nullptr;
  VIDMAP_CUDA_CHECK(cudaEventCreate(&e));
  return e;
}

void destroyEvent(EventHandle event) noexcept {
  if (event) (void)cudaEventDestroy(event);
  (void)cudaGetLastError();
}

void record(EventHandle event, StreamHandle stream) {
  VIDMAP_CUDA_CHECK(cudaEventRecord(event, stream));
}

bool ready(EventHandle event) {
  cudaError_t e = cudaEventQuery(event);
  if (e == cudaSuccess) return true;
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  detail::throwCudaError(e, "cudaEventQuery(event)", __FILE__, __LINE__);
}

void synchronize(EventHandle event) { VIDMAP_CUDA_CHECK(cudaEventSynchronize(event)); }

float elapsedMs(EventHandle start, EventHandle stop) {
  float ms = 0;
  VIDMAP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms;
}

}  // namespace rt
}  // namespace vidmap::gpu
