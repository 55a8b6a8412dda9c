// A CUDA stream owned by RAII. Non-blocking: work on it does not wait for the legacy default
// stream, so two streams (or two contexts) run independently.
#pragma once

#include "vidmap/gpu/handles.h"

namespace vidmap::gpu {

class Stream {
 public:
  // Creates a stream on `device`; throws vidmap::Error without CUDA or on a bad device.
  explicit Stream(int device);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int device() const { return device_; }
  StreamHandle handle() const { return handle_; }  // a cudaStream_t in .cu files
  // Waits for all work queued on the stream; throws on an asynchronous kernel error.
  void synchronize() const;

 private:
  int device_ = -1;
  StreamHandle handle_ = nullptr;
};

}  // namespace vidmap::gpu
