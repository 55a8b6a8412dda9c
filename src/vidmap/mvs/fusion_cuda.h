// The CUDA side of fusion (fusion_cuda.cu), with no CUDA types: the depth and normal maps of
// the resident views on the device (loaded and evicted as fusion's residency plan says) and
// fusion's per-pixel phase over one reference (fuMatchPixel, the CPU's function), its
// records compacted on the device in pixel order and copied into pinned host memory. The
// clustering stays on the host (fusion.cc). Kernel times go to the context's profiler
// ("mvs_fusion_match", "mvs_fusion_compact"). Built only with CUDA.
#pragma once

#include <cstdint>
#include <memory>

#include "vidmap/gpu/context.h"
#include "vidmap/mvs/fusion_kernels.h"
#include "vidmap/mvs/patch_match.h"

namespace vidmap::mvs {

class FusionCuda {
 public:
  explicit FusionCuda(gpu::Context& ctx);
  ~FusionCuda();

  // Device bytes of the working buffers for references of at most maxPixels pixels with at
  // most maxSources sources (what beginPass allocates).
  static std::int64_t workingBytes(std::int64_t maxPixels, int maxSources);
  // Device bytes of one view's maps (depth and three normal planes).
  static std::int64_t viewBytes(std::int64_t pixels) { return 16 * pixels; }

  void beginPass(std::int64_t maxPixels, int maxSources);
  void endPass();
  void load(int view, const DepthMap& map);
  void evict(int view);
  // The device maps of a resident view (normal: three planes), nullptr when not resident.
  const float* depthPtr(int view) const;
  const float* normalPtr(int view) const;

  // The records of reference P (P's maps at device addresses): per pixel with a depth and at
  // least P.minPixels - 1 agreeing sources, in pixel order, 1 + P.numSources words: the
  // pixel's index (y * width + x), then per source the agreeing pixel or -1. *records points
  // into pinned host memory that the next call reuses. Returns the number of records.
  std::int64_t match(const FuParams& P, const std::int32_t** records);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::mvs
