#include "vidmap/gpu/stream.h"

#include <utility>

#include "vidmap/gpu/runtime.h"

namespace vidmap::gpu {

Stream::Stream(int device) : device_(device), handle_(rt::createStream(device)) {}

Stream::~Stream() { rt::destroyStream(handle_); }

Stream::Stream(Stream&& o) noexcept
    : device_(o.device_), handle_(std::exchange(o.handle_, nullptr)) {}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    rt::destroyStream(handle_);
    device_ = o.device_;
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const { rt::synchronize(handle_); }

}  // namespace vidmap::gpu
