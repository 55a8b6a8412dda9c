#include "vidmap/klt/cuda_batch_tracker.h"

#include <chrono>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/klt/cuda_engine.h"

namespace vidmap::klt {

CudaBatchTracker::CudaBatchTracker(gpu::Context& ctx, int sequences, int width, int height,
                                   const Options& options, const CudaBackendOptions& cuda)
    : engine_(std::make_unique<cuda::Engine>(
          ctx, sequences, width, height, options,
          cuda::engineKernel(cuda.kernel, static_cast<std::int64_t>(sequences) * options.capacity,
                             options.halfWindow),
          cuda.pipelined ? 3 : 2)),
      tables_(sequences),
      ended_(sequences),
      seeds_(sequences),
      ages_(sequences),
      nextId_(sequences, 0) {
  engine_->setProfiling(cuda.profile);
}

CudaBatchTracker::~CudaBatchTracker() = default;

int CudaBatchTracker::sequences() const { return engine_->sequences(); }
int CudaBatchTracker::width() const { return engine_->width(); }
int CudaBatchTracker::height() const { return engine_->height(); }
const Options& CudaBatchTracker::options() const { return engine_->options(); }
std::size_t CudaBatchTracker::residentBytes() const { return engine_->residentBytes(); }
void CudaBatchTracker::setProfiling(bool on) { engine_->setProfiling(on); }

std::vector<StepReport> CudaBatchTracker::push(std::span<const ImageView<const float>> frames,
                                               std::span<const bool> keyframes) {
  return pushImpl([&](int q) { engine_->stageGray(q, frames[q]); }, frames.size(), keyframes);
}

std::vector<StepReport> CudaBatchTracker::push(std::span<const ImageView<const Rgb8>> frames,
                                               std::span<const bool> keyframes) {
  return pushImpl([&](int q) { engine_->stageRgb(q, frames[q]); }, frames.size(), keyframes);
}

std::vector<StepReport> CudaBatchTracker::push(
    std::span<const ImageView<const std::uint8_t>> frames, std::span<const bool> keyframes) {
  return pushImpl([&](int q) { engine_->stageGray8(q, frames[q]); }, frames.size(), keyframes);
}

std::vector<StepReport> CudaBatchTracker::pushPipelined(
    std::span<const ImageView<const float>> frames, std::span<const bool> keyframes) {
  return pushPipelinedImpl([&](int q) { engine_->stageGray(q, frames[q]); }, frames.size(),
                           keyframes);
}

std::vector<StepReport> CudaBatchTracker::pushPipelined(
    std::span<const ImageView<const Rgb8>> frames, std::span<const bool> keyframes) {
  return pushPipelinedImpl([&](int q) { engine_->stageRgb(q, frames[q]); }, frames.size(),
                           keyframes);
}

std::vector<StepReport> CudaBatchTracker::pushPipelined(
    std::span<const ImageView<const std::uint8_t>> frames, std::span<const bool> keyframes) {
  return pushPipelinedImpl([&](int q) { engine_->stageGray8(q, frames[q]); }, frames.size(),
                           keyframes);
}

void CudaBatchTracker::checkFrames(std::size_t count, std::span<const bool> keyframes) const {
  const int K = sequences();
  require(
      count == static_cast<std::size_t>(K),
      "klt batch: " + std::to_string(count) + " frames for " + std::to_string(K) + " sequences");
  require(keyframes.empty() || keyframes.size() == static_cast<std::size_t>(K),
          "klt batch: " + std::to_string(keyframes.size()) + " keyframe flags for " +
              std::to_string(K) + " sequences");
}

std::vector<bool> CudaBatchTracker::selections(std::span<const bool> keyframes, bool* any) const {
  // The first push and keyframes select.
  const int K = sequences();
  std::vector<bool> selects(K, frame_ == 0);
  *any = frame_ == 0;
  for (int q = 0; q < K && !keyframes.empty(); ++q)
    if (keyframes[q]) selects[q] = *any = true;
  return selects;
}

void CudaBatchTracker::stageTables() {
  for (int q = 0; q < sequences(); ++q) {
    const TrackTable& t = tables_[q];
    seeds_[q].resize(t.size());
    ages_[q].resize(t.size());
    for (int i = 0; i < t.size(); ++i) {
      seeds_[q][i] = seedRecord(t.x[i], t.y[i], t.measure[i]);
      ages_[q][i] = t.age[i] + 1;
    }
    static const int kNoAges = 0;  // a non-null pointer: an empty table still has its ages
    engine_->stageSeeds(q, seeds_[q].data(), t.size(), t.size() ? ages_[q].data() : &kNoAges);
  }
}

std::vector<StepReport> CudaBatchTracker::applyResults(int frame, bool track,
                                                       const std::vector<bool>& selects) {
  // The host tables follow the device: survivors in order, then the picks.
  const int K = sequences();
  std::vector<StepReport> reports(K);
  for (int q = 0; q < K; ++q) {
    StepReport& r = reports[q];
    TrackTable& t = tables_[q];
    r.frame = frame;
    r.tracksIn = t.size();
    ended_[q].clear();
    if (track && t.size() > 0) {
      TrackTable next;
      advanceTable(t, engine_->checked(q), options().maxAgeFrames, &next, &ended_[q], &r.ends);
      t = std::move(next);
    }
    if (selects[q]) {
      r.selection = true;
      r.selected = engine_->selected(q);
      r.appended = engine_->appended(q);
      const TrackRecord* picks = engine_->picks(q);
      for (int i = 0; i < r.appended; ++i)
        t.appendNew(nextId_[q]++, picks[i].x, picks[i].y, picks[i].measure, frame, -1);
    }
    r.alive = t.size();
    r.chunks = track ? 1 : 0;
  }
  return reports;
}

template <class Stage>
std::vector<StepReport> CudaBatchTracker::pushImpl(Stage stage, std::size_t count,
                                                   std::span<const bool> keyframes) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  require(!pending_, "klt batch: push() while a pipelined push is pending (call flush())");
  checkFrames(count, keyframes);
  const int K = sequences();
  const int cur = frame_ == 0 ? 0 : (prevSlot_ + 1) % engine_->frameSlots();
  const bool track = frame_ > 0;
  bool anySelect = false;
  const std::vector<bool> selects = selections(keyframes, &anySelect);

  // Stage the frames, and the table of each sequence as seeds with the age after this push.
  for (int q = 0; q < K; ++q) stage(q);
  stageTables();
  engine_->push(prevSlot_, cur, track, anySelect, useGraph_);
  resident_ = false;  // the device's table is this push's seeds, not its survivors
  std::vector<StepReport> reports = applyResults(frame_, track, selects);
  prevSlot_ = cur;
  ++frame_;
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  for (auto& r : reports) r.msTotal = ms;
  return reports;
}

template <class Stage>
std::vector<StepReport> CudaBatchTracker::pushPipelinedImpl(Stage stage, std::size_t count,
                                                            std::span<const bool> keyframes) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  require(engine_->frameSlots() == 3,
          "klt batch: pushPipelined needs a tracker made with CudaBackendOptions::pipelined");
  checkFrames(count, keyframes);
  const int K = sequences();
  const int cur = frame_ == 0 ? 0 : (prevSlot_ + 1) % 3;
  bool anySelect = false;
  Pending p{frame_, frame_ > 0, selections(keyframes, &anySelect)};

  // This push's frames go up and into their pyramids on the frame stream, and its tracking is
  // queued on the device's own table (the survivors and picks of the previous push: no host
  // round trip), all before the wait for the previous push's results; so the host stages
  // frame k + 1 while the GPU tracks frame k. The host's tables start the device's after
  // construction or a push().
  for (int q = 0; q < K; ++q) stage(q);
  engine_->sendFrame(cur);
  if (!resident_) stageTables();
  engine_->trackAsync(prevSlot_, cur, p.track, anySelect, true, &p.selects);
  resident_ = true;
  std::vector<StepReport> reports = flush();
  pendingPush_ = std::move(p);
  pending_ = true;
  prevSlot_ = cur;
  ++frame_;
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  for (auto& r : reports) r.msTotal = ms;
  return reports;
}

std::vector<StepReport> CudaBatchTracker::flush() {
  if (!pending_) return {};
  engine_->finish();
  pending_ = false;
  return applyResults(pendingPush_.frame, pendingPush_.track, pendingPush_.selects);
}

}  // namespace vidmap::klt
