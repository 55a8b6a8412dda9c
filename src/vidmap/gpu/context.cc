#include "vidmap/gpu/context.h"

#include <string>

#include "vidmap/core/error.h"
#include "vidmap/gpu/runtime.h"

namespace vidmap::gpu {

namespace {
int checkedDevice(int device) {
  if (!builtWithCuda())
    throw Error(std::string(rt::kNotBuilt) +
                ": no GPU context can be created (use the CPU backend)");
  int n = deviceCount();
  if (n == 0) throw Error("cannot create a GPU context: " + noDeviceReason());
  if (device < 0 || device >= n)
    throw Error("cannot create a GPU context on CUDA device " + std::to_string(device) + ": " +
                std::to_string(n) + " device" + (n == 1 ? "" : "s") + " present");
  return device;
}
}  // namespace

namespace detail {

ContextState::ContextState(int d)
    : device(checkedDevice(d)), info(deviceInfo(d)), stream(d), profiler(d) {}

void* allocateTracked(ContextState& ctx, std::size_t bytes) {
  void* p = rt::allocate(ctx.device, bytes);
  if (p) ctx.memory.allocated(static_cast<std::int64_t>(bytes));
  return p;
}

void releaseTracked(ContextState& ctx, void* ptr, std::size_t bytes) noexcept {
  if (!ptr) return;
  rt::release(ctx.device, ptr);
  try {
    ctx.memory.freed(static_cast<std::int64_t>(bytes));
  } catch (...) {
    // Accounting is diagnostic; a mismatch must not turn a destructor into a crash.
  }
}

}  // namespace detail

Context::Context(int device) : state_(std::make_shared<detail::ContextState>(device)) {}

void Context::makeCurrent() const { rt::setDevice(state_->device); }

}  // namespace vidmap::gpu
