// The thin layer of CUDA runtime calls the gpu module's classes are written on. It has two
// implementations: runtime_cuda.cc (every call checked, errors become vidmap::Error) and
// runtime_none.cc for CPU-only builds (every call throws "vidmap was built without CUDA").
// Users want Context, DeviceBuffer, Stream, EventTimer and KernelProfiler instead.
#pragma once

#include <cstddef>

#include "vidmap/gpu/device.h"
#include "vidmap/gpu/handles.h"

namespace vidmap::gpu::rt {

// The message of the Error every call throws in a CPU-only build.
inline constexpr const char* kNotBuilt = "vidmap was built without CUDA";

void setDevice(int device);
void deviceSynchronize(int device);

// cudaMalloc on `device`; the Error names the size and the device when it fails.
void* allocate(int device, std::size_t bytes);
// cudaFree; errors are ignored (called from destructors, possibly at process exit).
void release(int device, void* ptr) noexcept;

// Stream-ordered copies and memset (cudaMemcpyAsync / cudaMemsetAsync).
void copyToDevice(void* dst, const void* src, std::size_t bytes, StreamHandle stream);
void copyToHost(void* dst, const void* src, std::size_t bytes, StreamHandle stream);
void copyDeviceToDevice(void* dst, const void* src, std::size_t bytes, StreamHandle stream);
void memsetBytes(void* dst, int value, std::size_t bytes, StreamHandle stream);

// A non-blocking stream on `device` (no implicit sync with the legacy default stream).
StreamHandle createStream(int device);
void destroyStream(StreamHandle stream) noexcept;
void synchronize(StreamHandle stream);

EventHandle createEvent(int device);
void destroyEvent(EventHandle event) noexcept;
void record(EventHandle event, StreamHandle stream);
// True when the work before the event has completed; never blocks.
bool ready(EventHandle event);
void synchronize(EventHandle event);
// Milliseconds between two completed events.
float elapsedMs(EventHandle start, EventHandle stop);

}  // namespace vidmap::gpu::rt
