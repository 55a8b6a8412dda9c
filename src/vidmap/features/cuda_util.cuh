// Helpers private to the features module's .cu files, on top of the gpu/ layer: growing a
// DeviceBuffer on demand, pinned host staging, stream-ordered copies of raw arrays and launch
// sizes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "vidmap/gpu/context.h"
#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device_buffer.h"

namespace vidmap::features::cuda {

// Makes room for n elements in buf (the contents are not kept when it grows).
template <class T>
T* ensure(gpu::Context& ctx, gpu::DeviceBuffer<T>& buf, std::size_t n) {
  if (buf.size() < n || buf.empty()) buf = gpu::DeviceBuffer<T>(ctx, n ? n : 1);
  return buf.data();
}

// Pinned host memory (cudaHostAlloc, portable) that grows on demand (contents not kept): a
// copy from or to it runs at the link's rate, where a copy from pageable memory is staged
// through the driver's bounce buffers (about 0.5 ms for a 1280 x 720 float frame on the H200).
// With cudaHostAllocMapped among the flags, kernels may write it directly (device()).
class PinnedStage {
 public:
  explicit PinnedStage(unsigned flags = cudaHostAllocPortable) : flags_(flags) {}
  ~PinnedStage() { release(); }
  PinnedStage(const PinnedStage&) = delete;
  PinnedStage& operator=(const PinnedStage&) = delete;

  template <class T>
  T* ensure(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes > bytes_ || !data_) {
      release();
      VIDMAP_CUDA_CHECK(cudaHostAlloc(&data_, bytes ? bytes : 1, flags_));
      bytes_ = bytes;
    }
    return static_cast<T*>(data_);
  }
  // The device's address of host address h in a mapped stage.
  template <class T>
  T* device(T* h) const {
    void* d = nullptr;
    VIDMAP_CUDA_CHECK(cudaHostGetDevicePointer(&d, h, 0));
    return static_cast<T*>(d);
  }

 private:
  void release() {
    if (data_) cudaFreeHost(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  unsigned flags_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

template <class T>
void upload(T* dst, const T* src, std::size_t n, cudaStream_t s) {
  if (n) VIDMAP_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyHostToDevice, s));
}

template <class T>
void download(T* dst, const T* src, std::size_t n, cudaStream_t s) {
  if (n) VIDMAP_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost, s));
}

inline unsigned blocksFor(long n, unsigned threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace vidmap::features::cuda
