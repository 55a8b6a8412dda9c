#include "vidmap/features/sift.h"

#include <chrono>
#include <cmath>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/features/clahe.h"
#include "vidmap/features/sift_cpu.h"
#include "vidmap/features/sift_kernels.h"
#include "vidmap/gpu/device.h"
#include "vidmap/io/color.h"
#if VIDMAP_HAVE_CUDA
#include "vidmap/features/sift_cuda.h"
#endif

namespace vidmap::features {

#if !VIDMAP_HAVE_CUDA
class SiftCuda {};
#endif

bool cudaDeviceAvailable() { return gpu::builtWithCuda() && gpu::deviceCount() > 0; }

Sift::Sift(const SiftOptions& options, const gpu::Context* ctx) : options_(options) {
  options_.check();
  const bool cuda = cudaDeviceAvailable();
  if (options_.backend == Backend::kCuda && !cuda)
    throw Error("sift.backend = cuda, but this build has no CUDA backend or no CUDA device");
  backend_ = (options_.backend != Backend::kCpu && cuda) ? Backend::kCuda : Backend::kCpu;
#if VIDMAP_HAVE_CUDA
  if (backend_ == Backend::kCuda) cuda_ = std::make_unique<SiftCuda>(ctx ? *ctx : gpu::Context(0));
#endif
}

Sift::~Sift() = default;
Sift::Sift(Sift&&) noexcept = default;
Sift& Sift::operator=(Sift&&) noexcept = default;

void checkSiftInput(ImageView<const float> gray) {
  if (gray.empty() || !gray.data)
    throw Error("sift: the image is empty (" + std::to_string(gray.width) + "x" +
                std::to_string(gray.height) + ")");
  long bad = 0;
  int bx = -1, by = -1;
  for (int y = 0; y < gray.height; ++y)
    for (int x = 0; x < gray.width; ++x)
      if (!std::isfinite(gray(x, y))) {
        if (bad++ == 0) bx = x, by = y;
      }
  if (bad)
    throw Error("sift: the image has " + std::to_string(bad) + " non-finite pixels (first at x=" +
                std::to_string(bx) + ", y=" + std::to_string(by) + ")");
}

GrayImage toGray(ImageView<const Rgb8> rgb) {
  GrayImage g(rgb.width, rgb.height);
  parallelFor(rgb.height, [&](std::int64_t y) {
    for (int x = 0; x < rgb.width; ++x) {
      const Rgb8 p = rgb(x, static_cast<int>(y));
      g(x, static_cast<int>(y)) = io::lumaRec601(p.r, p.g, p.b);
    }
  });
  return g;
}

SiftResult Sift::extract(ImageView<const float> gray) {
  checkSiftInput(gray);
  const auto t0 = std::chrono::steady_clock::now();
  SiftResult r;
  GrayImage equalised;
  ImageView<const float> input = gray;
  if (options_.clahe) {
    equalised = clahe(gray, options_.claheClipLimit, options_.claheTiles);
    input = constView(equalised.view());
  }
  if (backend_ == Backend::kCuda) {
#if VIDMAP_HAVE_CUDA
    r.features = cuda_->extract(input, options_, &r.stats);
#endif
  } else {
    if (!workspace_) workspace_ = std::make_unique<SiftCpuWorkspace>();
    r.features = siftCpu(input, options_, &r.stats, workspace_.get());
  }
  if (options_.keepGray) {
    r.gray.resize(gray.width, gray.height);
    for (int y = 0; y < gray.height; ++y)
      for (int x = 0; x < gray.width; ++x) r.gray(x, y) = gray(x, y);
  }
  r.stats.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

namespace {

void checkRgbInput(ImageView<const Rgb8> rgb) {
  if (rgb.empty() || !rgb.data)
    throw Error("sift: the image is empty (" + std::to_string(rgb.width) + "x" +
                std::to_string(rgb.height) + ")");
}

}  // namespace

const float* Sift::deviceDescriptors() const {
#if VIDMAP_HAVE_CUDA
  if (cuda_) return cuda_->deviceDescriptors();
#endif
  return nullptr;
}

bool Sift::lumaOnDevice() const { return backend_ == Backend::kCuda && !options_.clahe; }

SiftResult Sift::extract(ImageView<const Rgb8> rgb) {
  checkRgbInput(rgb);
  if (lumaOnDevice()) return extractRgbOnDevice(rgb, {});
  GrayImage g = toGray(rgb);
  const bool keep = options_.keepGray;
  options_.keepGray = false;
  SiftResult r = extract(constView(g.view()));
  options_.keepGray = keep;
  if (keep) r.gray = std::move(g);
  return r;
}

SiftResult Sift::extract(ImageView<const Rgb8> rgb, ImageView<const float> luma) {
  checkRgbInput(rgb);
  if (luma.width != rgb.width || luma.height != rgb.height)
    throw Error("sift: the luma is " + std::to_string(luma.width) + "x" +
                std::to_string(luma.height) + ", its colour frame " + std::to_string(rgb.width) +
                "x" + std::to_string(rgb.height));
  return lumaOnDevice() ? extractRgbOnDevice(rgb, luma) : extract(luma);
}

// The CUDA backend on the RGB8 pixels (no CLAHE: lumaOnDevice()); the host's luma is made only
// for keepGray, copied from `luma` when given.
SiftResult Sift::extractRgbOnDevice(ImageView<const Rgb8> rgb, ImageView<const float> luma) {
  const auto t0 = std::chrono::steady_clock::now();
  SiftResult r;
#if VIDMAP_HAVE_CUDA
  r.features = cuda_->extract(rgb, options_, &r.stats);
#endif
  if (options_.keepGray) {
    if (luma.empty()) {
      r.gray = toGray(rgb);
    } else {
      r.gray.resize(luma.width, luma.height);
      for (int y = 0; y < luma.height; ++y)
        for (int x = 0; x < luma.width; ++x) r.gray(x, y) = luma(x, y);
    }
  }
  r.stats.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace vidmap::features
