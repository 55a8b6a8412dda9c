// Small CUDA helpers private to the features module's .cu files: error checks that throw
// vidmap::Error, a growing device buffer, and stream-ordered copies. (The gpu/ module will own
// these once it lands; this header keeps the features backend self-contained until then.)
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "vidmap/core/error.h"

namespace vidmap::features::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(std::string("features cuda: ") + what + ": " + cudaGetErrorString(e));
}

inline void checkLaunch(const char* kernel) { check(cudaGetLastError(), kernel); }

// A device array that grows on demand and is freed with its owner.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  // Makes room for n elements (contents are not kept when it grows).
  T* ensure(std::size_t n) {
    if (n > capacity_) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = nullptr;
      capacity_ = 0;
      check(cudaMalloc(&ptr_, (n ? n : 1) * sizeof(T)), "cudaMalloc");
      capacity_ = n;
    }
    return ptr_;
  }
  T* get() const { return ptr_; }
  std::size_t capacity() const { return capacity_; }

 private:
  T* ptr_ = nullptr;
  std::size_t capacity_ = 0;
};

template <class T>
void upload(T* dst, const T* src, std::size_t n, cudaStream_t s) {
  if (n) check(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyHostToDevice, s), "upload");
}

template <class T>
void download(T* dst, const T* src, std::size_t n, cudaStream_t s) {
  if (n) check(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost, s), "download");
}

inline unsigned blocksFor(long n, unsigned threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

// True when at least one CUDA device is usable.
inline bool deviceAvailable() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return n > 0;
}

}  // namespace vidmap::features::cuda
