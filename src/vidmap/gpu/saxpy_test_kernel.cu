#include <algorithm>

#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/saxpy_test_kernel.h"

namespace vidmap::gpu::smoke {

namespace {
__global__ void saxpyKernel(int n, float a, const float* x, const float* y, float* z) {
  // Grid-stride loop: any grid size covers any n.
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    z[i] = saxpyAt(a, x[i], y[i]);
}

void check(const DeviceBuffer<float>& x, const DeviceBuffer<float>& y,
           const DeviceBuffer<float>& z) {
  if (x.size() != y.size() || x.size() != z.size())
    throw Error("saxpy: sizes differ (" + std::to_string(x.size()) + ", " +
                std::to_string(y.size()) + ", " + std::to_string(z.size()) + ")");
}
}  // namespace

void saxpyCudaBlock(const Stream& stream, int threadsPerBlock, float a,
                    const DeviceBuffer<float>& x, const DeviceBuffer<float>& y,
                    DeviceBuffer<float>& z) {
  check(x, y, z);
  if (x.empty()) return;
  int n = static_cast<int>(x.size());
  int blocks = std::min((n + 255) / 256, 4096);
  saxpyKernel<<<blocks, threadsPerBlock, 0, stream.handle()>>>(n, a, x.data(), y.data(), z.data());
  VIDMAP_CUDA_CHECK_LAUNCH();
}

void saxpyCuda(Context& ctx, const Stream& stream, float a, const DeviceBuffer<float>& x,
               const DeviceBuffer<float>& y, DeviceBuffer<float>& z) {
  auto timer = ctx.profiler().time("saxpy", stream);
  saxpyCudaBlock(stream, 256, a, x, y, z);
}

}  // namespace vidmap::gpu::smoke
