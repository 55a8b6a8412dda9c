// The CUDA backend of PatchMatch (patch_match_cuda.cu), with no CUDA types: the resident
// views of a pass in device memory (loaded and evicted as the residency plan says) and the
// kernels over one reference. Kernel times go to the context's profiler ("mvs_*"). Built only
// with CUDA.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "vidmap/gpu/context.h"
#include "vidmap/mvs/patch_match.h"

namespace vidmap::mvs {

class PatchMatchCuda {
 public:
  // textures: the sources read through CUDA textures (hardware bilinear, PmGray::hwFilter).
  PatchMatchCuda(gpu::Context& ctx, bool textures);
  ~PatchMatchCuda();

  // Allocates the working buffers of a pass (5 floats per pixel of the largest reference).
  void beginPass(std::int64_t maxPixels);
  // Frees every buffer of the pass.
  void endPass();
  // Uploads view's gray and, when given, its depth; evict frees them.
  void load(int view, const View& v, const DepthMap* depth);
  void evict(int view);
  // The device gray image of a resident view (rows of grayPitch bytes, its texture if any);
  // empty when the view is not resident.
  PmGray gray(int view) const;
  // The row alignment of the device gray images (the device's texture pitch alignment).
  int pitchAlignment() const;
  const float* depthPtr(int view) const;

  // One pass of one reference: P holds device addresses (gray / depthPtr). The state is
  // uploaded unless initialise, and downloaded at the end. `pass` names the kernels.
  void run(const PmParams& P, bool initialise, int iterations, const PatchMatchOptions& o,
           const char* pass, DepthMap* state);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::mvs
