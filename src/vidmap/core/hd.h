// VIDMAP_HD marks code that runs on the host and on the device: the one source of the
// per-pixel and per-track arithmetic that the CPU backend (the oracle) and the CUDA kernels
// share. Headers that use it include no CUDA types (after Sophus' SOPHUS_FUNC).
#pragma once

#if defined(__CUDACC__)
#define VIDMAP_HD __host__ __device__
#define VIDMAP_DEVICE_CODE 1
#else
#define VIDMAP_HD
#endif

#if defined(__CUDA_ARCH__)
#define VIDMAP_ON_DEVICE 1
#endif
