// The CUDA backend of klt::Tracker: the Backend interface on resident device buffers (two
// frame slots with their pyramids and gradients, four record arrays, the lambda_min map and
// the selection scratch), running the kernels of cuda_kernels.cuh, which call the functions
// of kernels.h. Built with -fmad=false (VIDMAP_CUDA_NO_FMA) it equals the CPU backend bit for
// bit. Per push the Tracker uploads the frame once and the seeds once, and reads the checked
// records once; a selection runs wholly on the device and comes back in one read with its
// counts and picks. residentBytes() equals the context's live device bytes.
#pragma once

#include <memory>

#include "vidmap/gpu/context.h"
#include "vidmap/klt/backend.h"

namespace vidmap::klt {

enum class CudaTrackKernel {
  kLane,          // one thread per track: trackForward / trackBackward of kernels.h as they are
  kWarp,          // one warp per track (the same sums in the same order, by __shfl_xor_sync),
                  // the template in registers and each window pass fully unrolled
  kWarpShared,    // the same with the template in shared memory and fewer registers
  kWarpStaged,    // kWarp with the border passes rolled through shared memory (less code)
  kWarpStaged16,  // kWarpStaged, the batched push's kernel capped at 128 registers (16 warps a
                  // multiprocessor, 21 x 21 windows)
  kWarpStaged20,  // the same at 96 registers (20 warps)
  kAuto,          // by the tracks in all (sequences x capacity) and the window, the fastest on
                  // the H200 (docs/benchmarks.md, KLT at the hardware's limit, helper klt3):
                  // kWarp for windows up to 15 x 15; larger windows kWarp below 4096 tracks,
                  // kWarpStaged below 32768, else kWarpShared
};

const char* cudaTrackKernelName(CudaTrackKernel k);

struct CudaBackendOptions {
  CudaTrackKernel kernel = CudaTrackKernel::kAuto;
  bool profile = false;  // time every launch with ctx.profiler() (names klt_*)
  // CudaBatchTracker: room for pushPipelined (a third pyramid a sequence, built while the
  // previous two are tracked).
  bool pipelined = false;
};

// Throws vidmap::Error on bad options, a frame too small for the window, or no CUDA device.
std::unique_ptr<Backend> makeCudaBackend(gpu::Context& ctx, int width, int height,
                                         const Options& options,
                                         const CudaBackendOptions& cuda = {});

}  // namespace vidmap::klt
