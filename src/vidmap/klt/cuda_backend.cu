#include "vidmap/klt/cuda_backend.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/klt/cuda_engine.h"

namespace vidmap::klt {

const char* cudaTrackKernelName(CudaTrackKernel k) {
  switch (k) {
    case CudaTrackKernel::kLane:
      return "lane";
    case CudaTrackKernel::kWarp:
      return "warp";
    case CudaTrackKernel::kWarpShared:
      return "warp-shared";
    case CudaTrackKernel::kWarpStaged:
      return "warp-staged";
    case CudaTrackKernel::kWarpStaged16:
      return "warp-staged-16w";
    case CudaTrackKernel::kWarpStaged20:
      return "warp-staged-20w";
    case CudaTrackKernel::kAuto:
      return "auto";
  }
  return "?";
}

namespace cuda {
TrackKernel engineKernel(CudaTrackKernel k, std::int64_t tracks, int halfWindow) {
  switch (k) {
    case CudaTrackKernel::kLane:
      return TrackKernel::kLane;
    case CudaTrackKernel::kWarp:
      return TrackKernel::kWarp;
    case CudaTrackKernel::kWarpShared:
      return TrackKernel::kWarpShared;
    case CudaTrackKernel::kWarpStaged:
      return TrackKernel::kWarpStaged;
    case CudaTrackKernel::kWarpStaged16:
      return TrackKernel::kWarpStaged16;
    case CudaTrackKernel::kWarpStaged20:
      return TrackKernel::kWarpStaged20;
    case CudaTrackKernel::kAuto:
      break;
  }
  // Measured on the H200 (docs/benchmarks.md, "KLT at the hardware's limit (issue 15, helper
  // klt3)"): the register form is the fastest at every count for windows up to 15 x 15 and up to
  // one wave of warps for larger windows; then the staged form (fewer instructions fetched: the
  // border passes rolled), and from 32768 tracks the shared form (more warps a multiprocessor).
  if (halfWindow <= 7 || tracks < 4096) return TrackKernel::kWarp;
  return tracks < 32768 ? TrackKernel::kWarpStaged : TrackKernel::kWarpShared;
}
}  // namespace cuda

namespace {

const char* engineKernelName(cuda::TrackKernel k) {
  switch (k) {
    case cuda::TrackKernel::kLane:
      return "lane";
    case cuda::TrackKernel::kWarp:
      return "warp";
    case cuda::TrackKernel::kWarpShared:
      return "warp-shared";
    case cuda::TrackKernel::kWarpStaged:
      return "warp-staged";
    case cuda::TrackKernel::kWarpStaged16:
      return "warp-staged-16w";
    case cuda::TrackKernel::kWarpStaged20:
      return "warp-staged-20w";
  }
  return "?";
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(gpu::Context& ctx, int width, int height, const Options& options,
              const CudaBackendOptions& cuda)
      : engine_(ctx, 1, width, height, options,
                cuda::engineKernel(cuda.kernel, options.capacity, options.halfWindow)),
        name_(std::string("cuda-") + engineKernelName(engine_.kernel())) {
    engine_.setProfiling(cuda.profile);
  }

  const char* name() const override { return name_.c_str(); }
  int width() const override { return engine_.width(); }
  int height() const override { return engine_.height(); }
  const Options& options() const override { return engine_.options(); }
  const Layout& layout() const override { return engine_.layout(); }

  void uploadGray(int slot, ImageView<const float> gray) override {
    checkSlot(slot);
    engine_.stageGray(0, gray);
    engine_.send(slot);
  }
  void uploadRgb(int slot, ImageView<const Rgb8> rgb) override {
    checkSlot(slot);
    engine_.stageRgb(0, rgb);
    engine_.send(slot);
  }
  void buildPyramid(int slot) override { engine_.buildPyramid(slot); }

  void uploadSeeds(const TrackRecord* seeds, int count) override {
    engine_.stageSeeds(0, seeds, count);
    engine_.send(0);
    alive_ = count;
    picksValid_ = false;
  }
  void track(Direction direction, int prevSlot, int curSlot, int begin, int end) override {
    engine_.track(direction == Direction::kBackward, prevSlot, curSlot, begin, end, false);
    if (direction == Direction::kForward) picksValid_ = false;
  }
  void check(int begin, int end) override { engine_.check(begin, end, false); }

  void readRecords(RecordBuffer which, int begin, int count, TrackRecord* out) override {
    // The picks of the last selection came back with its counts: no second read.
    if (which == RecordBuffer::kSeeds && picksValid_ && begin >= picksBegin_ &&
        begin + count <= picksBegin_ + picksCount_) {
      const TrackRecord* p = engine_.picks(0) + (begin - picksBegin_);
      std::copy(p, p + count, out);
      return;
    }
    engine_.readRecords(static_cast<int>(which), 0, begin, count, out);
  }

  void eigenMap(int slot) override { engine_.eigenMap(slot); }
  float eigenMax() override { return engine_.eigenMax(0); }

  SelectCounts select(int aliveCount) override {
    if (aliveCount != alive_) {
      engine_.setAlive(0, aliveCount);
      alive_ = aliveCount;
    }
    engine_.select();
    engine_.receive(false, true);
    SelectCounts c;
    c.selected = engine_.selected(0);
    c.appended = engine_.appended(0);
    picksValid_ = true;
    picksBegin_ = aliveCount;
    picksCount_ = c.appended;
    return c;
  }

  void readLevel(int slot, int level, float* gray, float* grad) override {
    engine_.readLevel(0, slot, level, gray, grad);
  }
  void readEigenMap(float* out) override { engine_.readEigenMap(0, out); }
  std::size_t residentBytes() const override { return engine_.residentBytes(); }
  void synchronize() override { engine_.synchronize(); }

 private:
  static void checkSlot(int slot) {
    require(slot == 0 || slot == 1, "klt: frame slot " + std::to_string(slot) + " is not 0 or 1");
  }

  cuda::Engine engine_;
  std::string name_;
  int alive_ = 0;
  bool picksValid_ = false;
  int picksBegin_ = 0, picksCount_ = 0;
};

}  // namespace

std::unique_ptr<Backend> makeCudaBackend(gpu::Context& ctx, int width, int height,
                                         const Options& options, const CudaBackendOptions& cuda) {
  return std::make_unique<CudaBackend>(ctx, width, height, options, cuda);
}

}  // namespace vidmap::klt
