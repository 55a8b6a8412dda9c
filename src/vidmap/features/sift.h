// SIFT keypoints and descriptors of a gray image (D. G. Lowe, IJCV 2004), in the conventions
// of VLFeat and COLMAP (sift_kernels.h), with RootSIFT descriptors by default. The CPU backend
// (OpenMP) is the oracle; the CUDA backend runs the same per-pixel functions.
//
//   features::Sift sift({.maxFeatures = 4096});
//   features::SiftResult r = sift.extract(frame.view());   // gray float in [0, 1]
//   r.features.keypoints, r.features.descriptors, r.gray (with keepGray, for the KLT tracker)
#pragma once

#include <memory>

#include "vidmap/core/image.h"
#include "vidmap/features/features.h"
#include "vidmap/features/sift_options.h"
#include "vidmap/gpu/context.h"

namespace vidmap::features {

struct SiftStats {
  int extrema = 0;   // refined extrema that passed the contrast and edge tests
  int oriented = 0;  // oriented points before the maxFeatures cut
  double milliseconds = 0;
  // Stages of the CPU backend (wall time): Gaussians, DoG and gradients, extrema, orientations,
  // descriptors.
  double msGaussians = 0, msDogGradients = 0, msExtrema = 0, msOrientations = 0, msDescriptors = 0;
};

struct SiftResult {
  Features features;
  // The level-0 gray the detector starts from: the input as float in [0, 1] (before CLAHE),
  // the format klt::Tracker takes (docs/architecture.md, KLT: the tracker). Filled when
  // options.keepGray.
  GrayImage gray;
  SiftStats stats;
};

// True when this build has the CUDA backend and a CUDA device is present (gpu::deviceCount).
bool cudaDeviceAvailable();

class SiftCuda;
struct SiftCpuWorkspace;

template <class T>
ImageView<const T> constView(ImageView<T> v) {
  return {v.data, v.width, v.height, v.stride};
}

// One extraction at a time per Sift object (it keeps its buffers between images); use one
// object per thread.
class Sift {
 public:
  // Checks the options; Backend::kAuto takes CUDA when cudaDeviceAvailable(), kCuda throws
  // when it is not. The CUDA backend runs on ctx (its stream, memory account and kernel
  // profiler) when given, else on a context of its own for device 0.
  explicit Sift(const SiftOptions& options = {}, const gpu::Context* ctx = nullptr);
  ~Sift();
  Sift(Sift&&) noexcept;
  Sift& operator=(Sift&&) noexcept;

  // Throws Error for an empty image or non-finite pixels. An image too small for one octave
  // or without contrast gives no features and no error.
  SiftResult extract(ImageView<const float> gray);
  // A colour frame: the features of its Rec. 601 luma (io::lumaRec601). The CUDA backend
  // (without CLAHE) uploads the RGB8 pixels and makes the luma on the device, bit for bit the
  // host's; the CPU backend converts on the host.
  SiftResult extract(ImageView<const Rgb8> rgb);
  // A colour frame whose luma the caller already has: `luma` must be io::lumaRec601 of `rgb`
  // pixel for pixel (io::Frame::gray when Frame::grayIsLumaOfRgb). The features are those of
  // extract(luma); the backend takes whichever it reads the cheaper: the CPU the luma, CUDA the
  // RGB8 pixels (3 bytes a pixel over the bus instead of 4, converted on the device).
  SiftResult extract(ImageView<const Rgb8> rgb, ImageView<const float> luma);
  SiftResult extract(ImageView<float> g) { return extract(constView(g)); }
  SiftResult extract(ImageView<Rgb8> rgb) { return extract(constView(rgb)); }
  SiftResult extract(const GrayImage& g) { return extract(g.view()); }
  SiftResult extract(const RgbImage& rgb) { return extract(rgb.view()); }

  Backend backend() const { return backend_; }
  // CUDA backend: the last extract()'s descriptors on the device (SiftCuda::deviceDescriptors),
  // valid until the next extract(), for Matcher::keepOnDevice; null on the CPU backend.
  const float* deviceDescriptors() const;
  // True when extract(rgb, ...) uploads the RGB8 pixels (CUDA backend, no CLAHE).
  bool lumaOnDevice() const;
  const SiftOptions& options() const { return options_; }

 private:
  SiftResult extractRgbOnDevice(ImageView<const Rgb8> rgb, ImageView<const float> luma);

  SiftOptions options_;
  Backend backend_ = Backend::kCpu;
  std::unique_ptr<SiftCuda> cuda_;
  std::unique_ptr<SiftCpuWorkspace> workspace_;
};

// Converts 8-bit RGB to gray in [0, 1] (Rec. 601 luma, io::lumaRec601: the gray io's frame
// sources make of 8-bit frames).
GrayImage toGray(ImageView<const Rgb8> rgb);

// Throws Error naming the problem when the image is empty or has non-finite pixels.
void checkSiftInput(ImageView<const float> gray);

}  // namespace vidmap::features
