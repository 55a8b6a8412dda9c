// z = a*x + y: the smallest kernel with a CPU twin, for the gpu smoke test. The per-element
// function is shared by the CPU loop and the CUDA kernel (one source, principle 1).
#pragma once

#include "vidmap/core/hd.h"
#include "vidmap/gpu/device_buffer.h"

namespace vidmap::gpu::smoke {

VIDMAP_HD inline float saxpyAt(float a, float x, float y) { return a * x + y; }

// Launches on `stream`, timed under "saxpy" by the context's profiler; does not wait.
void saxpyCuda(Context& ctx, const Stream& stream, float a, const DeviceBuffer<float>& x,
               const DeviceBuffer<float>& y, DeviceBuffer<float>& z);

// Launches with `threadsPerBlock` threads (an invalid count tests the launch check).
void saxpyCudaBlock(const Stream& stream, int threadsPerBlock, float a,
                    const DeviceBuffer<float>& x, const DeviceBuffer<float>& y,
                    DeviceBuffer<float>& z);

}  // namespace vidmap::gpu::smoke
