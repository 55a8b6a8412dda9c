// DeviceBuffer<T>: an array of T in device memory, owned by RAII (cudaMalloc / cudaFree),
// counted in its context's MemoryTracker. Move-only. The plain upload/download/fill run on
// the context's stream and wait for it, so they are ordered after the kernels queued there;
// the *Async forms queue on a given stream and return at once.
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/gpu/context.h"
#include "vidmap/gpu/runtime.h"

namespace vidmap::gpu {

template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer holds trivially copyable types");

 public:
  DeviceBuffer() = default;

  // Uninitialised storage for `count` elements.
  DeviceBuffer(Context& ctx, std::size_t count) : ctx_(ctx.state()), size_(count) {
    if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
      throw Error("DeviceBuffer: " + std::to_string(count) + " elements overflow size_t");
    ptr_ = static_cast<T*>(detail::allocateTracked(*ctx_, bytes()));
  }

  // A copy of `host` on the device.
  DeviceBuffer(Context& ctx, std::span<const T> host) : DeviceBuffer(ctx, host.size()) {
    upload(host);
  }

  ~DeviceBuffer() { reset(); }

  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ctx_(std::move(o.ctx_)),
        ptr_(std::exchange(o.ptr_, nullptr)),
        size_(std::exchange(o.size_, 0)) {}

  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ctx_ = std::move(o.ctx_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Frees the memory now (the buffer becomes empty).
  void reset() noexcept {
    if (ctx_) detail::releaseTracked(*ctx_, ptr_, bytes());
    ptr_ = nullptr;
    size_ = 0;
    ctx_.reset();
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }
  int device() const { return ctx_ ? ctx_->device : -1; }

  void upload(std::span<const T> src, std::size_t offset = 0) {
    uploadAsync(src, context().stream, offset);
    context().stream.synchronize();
  }
  void download(std::span<T> dst, std::size_t offset = 0) const {
    downloadAsync(dst, context().stream, offset);
    context().stream.synchronize();
  }
  std::vector<T> download() const {
    std::vector<T> out(size_);
    if (size_) download(std::span<T>(out));
    return out;
  }
  // Sets every byte to `value` (e.g. 0, or 0xFF to poison floats with NaN).
  void fillBytes(int value) {
    fillBytesAsync(value, context().stream);
    context().stream.synchronize();
  }

  void uploadAsync(std::span<const T> src, const Stream& stream, std::size_t offset = 0) {
    checkRange("upload", src.size(), offset);
    rt::copyToDevice(ptr_ + offset, src.data(), src.size_bytes(), stream.handle());
  }
  void downloadAsync(std::span<T> dst, const Stream& stream, std::size_t offset = 0) const {
    checkRange("download", dst.size(), offset);
    rt::copyToHost(dst.data(), ptr_ + offset, dst.size_bytes(), stream.handle());
  }
  void fillBytesAsync(int value, const Stream& stream) {
    if (size_) rt::memsetBytes(ptr_, value, bytes(), stream.handle());
  }

 private:
  detail::ContextState& context() const {
    if (!ctx_) throw Error("DeviceBuffer: the buffer is empty (default-constructed or moved from)");
    return *ctx_;
  }
  void checkRange(const char* what, std::size_t count, std::size_t offset) const {
    if (count == 0) return;
    if (!ctx_) context();  // throws the empty-buffer error
    if (offset > size_ || count > size_ - offset)
      throw Error(std::string("DeviceBuffer::") + what + ": " + std::to_string(count) +
                  " elements at offset " + std::to_string(offset) + " exceed the buffer's " +
                  std::to_string(size_));
  }

  std::shared_ptr<detail::ContextState> ctx_;
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace vidmap::gpu
