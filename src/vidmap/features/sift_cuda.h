// The host side of the CUDA SIFT backend (sift_cuda.cu), with no CUDA types. Defined only
// when the build has CUDA (VIDMAP_HAVE_CUDA); the device buffers persist between frames and
// grow when a larger frame comes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/features/features.h"
#include "vidmap/features/sift.h"
#include "vidmap/features/sift_options.h"
#include "vidmap/gpu/context.h"

namespace vidmap::features {

class SiftCuda {
 public:
  // Runs on ctx's device and stream; kernel times go to ctx.profiler() ("sift_*").
  explicit SiftCuda(const gpu::Context& ctx);
  ~SiftCuda();
  // Same contract as siftCpu (sift_cpu.h). gpuMilliseconds: the time between CUDA events
  // from the image's upload (after the host copied it into pinned memory) to the end of the
  // frame's last kernel, which writes the results to mapped host memory; when not null. One
  // synchronisation a frame; with ctx's profiler off the frame's kernels replay a CUDA graph
  // captured once per image size and options.
  Features extract(ImageView<const float> gray, const SiftOptions& options, SiftStats* stats,
                   float* gpuMilliseconds = nullptr);
  // An 8-bit gray frame: uploaded as bytes (a quarter of the float frame's transfer) and
  // converted on the device to v / 255; the features equal those of extract() on that float
  // image. gpuMilliseconds includes the conversion. (The pipeline's gray frames are Rec. 601
  // luma of RGB8 in float, which 8 bits do not hold: it uses the RGB8 entry below.)
  Features extract(ImageView<const std::uint8_t> gray, const SiftOptions& options, SiftStats* stats,
                   float* gpuMilliseconds = nullptr);
  // An RGB8 frame: uploaded as 3 bytes a pixel (three quarters of the float frame's transfer)
  // and converted on the device to io::lumaRec601 of its samples with the host's roundings, so
  // the features equal those of extract() on the host's luma of it (io::Frame::gray of an 8-bit
  // frame) bit for bit. gpuMilliseconds includes the conversion.
  Features extract(ImageView<const Rgb8> rgb, const SiftOptions& options, SiftStats* stats,
                   float* gpuMilliseconds = nullptr);
  // The image of the last extract() on the device: width x height floats in [0, 1], rows
  // contiguous, valid until the next call. Without CLAHE it is the level-0 gray the KLT tracker
  // takes (docs/architecture.md, KLT: the tracker), so a caller on the same context can copy it
  // device to device instead of uploading the frame again; with CLAHE it is the equalised image.
  ImageView<const float> deviceGray() const;
  // The descriptors of the last extract() on the device: its features' descriptors, the same
  // floats in the same order (size() x 128, row-major), valid until the next call; for a
  // matcher on the device (Matcher::keepOnDevice), which then uploads none.
  const float* deviceDescriptors() const;
  // The upload in this many row bands, the first octave's chain made band by band as they
  // arrive (sift_cuda_bands.h; the same features for any count); 0, the default: from the
  // frame's size (one band per 1.5 MiB over the bus, rounded, at most 8: 4 for an RGB8 frame
  // of 1920x1080, 2 for 1280x720; 1 when the first octave is upsampled). For tests and
  // benchmarks.
  void setUploadBands(int bands);
  // Room for this many extrema in the device's first list (default: 1 per 64 pixels of the
  // scale space, at least 8192); a frame with more is redone with room for them, kept for the
  // next frames. For tests of that path.
  void setInitialExtremaCapacity(int n);
  // The Gaussian levels of every octave, as siftCpuGaussians, for tests.
  std::vector<std::vector<float>> gaussians(ImageView<const float> gray,
                                            const SiftOptions& options);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::features
