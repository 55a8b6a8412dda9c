// A GPU context: one device, its memory accounting, a default stream and a kernel profiler.
// Contexts are plain objects (no global state): two contexts, on one device or two, keep
// separate accounts and streams and do not interfere. DeviceBuffers allocated with a context
// keep its state alive, so a buffer may outlive the Context object that made it.
#pragma once

#include <memory>

#include "vidmap/gpu/device.h"
#include "vidmap/gpu/kernel_profiler.h"
#include "vidmap/gpu/memory_tracker.h"
#include "vidmap/gpu/stream.h"

namespace vidmap::gpu {

namespace detail {
struct ContextState {
  explicit ContextState(int device);
  int device;
  DeviceInfo info;
  MemoryTracker memory;
  Stream stream;
  KernelProfiler profiler;
};
}  // namespace detail

class Context {
 public:
  // Throws vidmap::Error: "vidmap was built without CUDA ..." in a CPU-only build, "no CUDA
  // device ..." when none is usable, or when `device` does not exist.
  explicit Context(int device = 0);

  int device() const { return state_->device; }
  const DeviceInfo& info() const { return state_->info; }
  MemoryTracker& memory() { return state_->memory; }
  const MemoryTracker& memory() const { return state_->memory; }
  Stream& stream() { return state_->stream; }
  KernelProfiler& profiler() { return state_->profiler; }

  // Makes this context's device current on the calling thread (before raw CUDA calls).
  void makeCurrent() const;
  // Waits for the work queued on the context's stream.
  void synchronize() const { state_->stream.synchronize(); }

  const std::shared_ptr<detail::ContextState>& state() const { return state_; }

 private:
  std::shared_ptr<detail::ContextState> state_;
};

namespace detail {
// cudaMalloc with the context's accounting (the Error names the size and the device).
void* allocateTracked(ContextState& ctx, std::size_t bytes);
// cudaFree and accounting; never throws.
void releaseTracked(ContextState& ctx, void* ptr, std::size_t bytes) noexcept;
}  // namespace detail

}  // namespace vidmap::gpu
