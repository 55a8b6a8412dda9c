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

  // One pass of one reference, in two calls so that the host's work on the previous
  // reference overlaps the kernels. launch: P holds device addresses (gray / depthPtr); the
  // state is uploaded unless initialise, then the kernels are queued and launch returns
  // without waiting for them. `pass` names the kernels. download: waits for them and copies
  // the planes into the pass's pinned host buffer (through pageable memory the copy took
  // most of the 8 ms per reference that separated wall from kernel time; docs/benchmarks.md,
  // section "mvs: the photometric pass at 50 ms/MP (issue 14, helper dense4)").
  void launch(const PmParams& P, bool initialise, int iterations, const PatchMatchOptions& o,
              const char* pass, const DepthMap& state);
  void download();
  // Copies the planes of the last download into state (the reference's size): host memory
  // only, so a worker thread may do it while the next reference's kernels run, as long as
  // it is done before the next download.
  void copyOut(DepthMap* state) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::mvs
