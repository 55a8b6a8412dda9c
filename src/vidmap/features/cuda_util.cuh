// Helpers private to the features module's .cu files, on top of the gpu/ layer: growing a
// DeviceBuffer on demand, stream-ordered copies of raw arrays and launch sizes.
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
