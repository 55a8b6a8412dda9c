// Checking CUDA calls, for .cu files and the gpu module's CUDA backend: a failed call throws
// vidmap::Error naming the call, the file and line, and CUDA's error name and text.
//
//   VIDMAP_CUDA_CHECK(cudaMemcpyAsync(...));
//   kernel<<<grid, block, 0, stream>>>(...);
//   VIDMAP_CUDA_CHECK_LAUNCH();  // a bad launch configuration is reported here
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "vidmap/core/error.h"

namespace vidmap::gpu::detail {

inline std::string cudaErrorText(cudaError_t code) {
  return std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code);
}

[[noreturn]] inline void throwCudaError(cudaError_t code, const char* expr, const char* file,
                                        int line) {
  // Clear a non-sticky error (a failed allocation, a bad launch) so that the next check does
  // not report it a second time.
  (void)cudaGetLastError();
  throw Error(std::string("CUDA call ") + expr + " failed at " + file + ":" + std::to_string(line) +
              ": " + cudaErrorText(code));
}

}  // namespace vidmap::gpu::detail

#define VIDMAP_CUDA_CHECK(expr)                                                              \
  do {                                                                                       \
    const cudaError_t vidmap_cuda_status_ = (expr);                                          \
    if (vidmap_cuda_status_ != cudaSuccess)                                                  \
      ::vidmap::gpu::detail::throwCudaError(vidmap_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports (and clears) a launch error such as a bad configuration.
#define VIDMAP_CUDA_CHECK_LAUNCH() VIDMAP_CUDA_CHECK(cudaGetLastError())
