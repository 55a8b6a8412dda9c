#include "vidmap/klt/tracker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "vidmap/core/error.h"

namespace vidmap::klt {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

void TrackTable::clear() {
  id.clear();
  x.clear();
  y.clear();
  seedFrame.clear();
  seedX.clear();
  seedY.clear();
  seedKeypoint.clear();
  age.clear();
  measure.clear();
}

int StepReport::ended() const {
  int n = 0;
  for (int r = 1; r < kEndReasonCount; ++r) n += ends[r];
  return n;
}

Tracker::Tracker(int width, int height, const Options& options, std::unique_ptr<Backend> backend)
    : width_(width), height_(height), options_(options), backend_(std::move(backend)) {
  options_.checkFrame(width, height);
  if (!backend_) backend_ = makeCpuBackend(width, height, options_);
  require(backend_->width() == width && backend_->height() == height,
          "klt: the backend was made for another frame size");
  require(backend_->options().capacity == options_.capacity &&
              backend_->options().levels == options_.levels &&
              backend_->options().halfWindow == options_.halfWindow,
          "klt: the backend was made with other options");
  seeds_.reserve(options_.capacity);
}

StepReport Tracker::push(const GrayImage& gray, bool keyframe) {
  return push(gray.view(), keyframe);
}

StepReport Tracker::push(ImageView<const float> gray, bool keyframe) {
  // NaN or infinite gray values would poison the pyramid: refuse them with their place.
  for (int y = 0; y < gray.height; ++y)
    for (int x = 0; x < gray.width; ++x)
      if (!std::isfinite(gray(x, y)))
        throw Error("klt: frame " + std::to_string(frame_) + " has a non-finite gray value at (" +
                    std::to_string(x) + ", " + std::to_string(y) + ")");
  return pushImpl([&](int slot) { backend_->uploadGray(slot, gray); }, keyframe);
}

StepReport Tracker::push(ImageView<const Rgb8> rgb, bool keyframe) {
  return pushImpl([&](int slot) { backend_->uploadRgb(slot, rgb); }, keyframe);
}

template <class Upload>
StepReport Tracker::pushImpl(Upload upload, bool keyframe) {
  const auto start = Clock::now();
  StepReport report;
  report.frame = frame_;
  report.tracksIn = table_.size();
  ended_.clear();
  checked_.clear();
  const int cur = frame_ == 0 ? 0 : 1 - prevSlot_;

  auto t = Clock::now();
  upload(cur);
  if (stageTiming_) backend_->synchronize();
  report.msUpload = msSince(t);

  t = Clock::now();
  backend_->buildPyramid(cur);
  if (stageTiming_) backend_->synchronize();
  report.msPyramid = msSince(t);

  if (frame_ > 0 && table_.size() > 0) trackAndCheck(cur, &report);
  if (frame_ == 0 || keyframe) select(cur, &report);

  report.alive = table_.size();
  prevSlot_ = cur;
  ++frame_;
  report.msTotal = msSince(start);
  return report;
}

void Tracker::trackAndCheck(int cur, StepReport* report) {
  const int n = table_.size();
  const int chunk = options_.chunkTracks > 0 ? options_.chunkTracks : n;
  auto t = Clock::now();
  for (Direction d : {Direction::kForward, Direction::kBackward}) {
    int calls = 0;
    for (int b = 0; b < n; b += chunk, ++calls)
      backend_->track(d, prevSlot_, cur, b, std::min(n, b + chunk));
    report->chunks = calls;
  }
  if (stageTiming_) backend_->synchronize();
  report->msTrack = msSince(t);

  t = Clock::now();
  for (int b = 0; b < n; b += chunk) backend_->check(b, std::min(n, b + chunk));
  checked_.resize(n);
  backend_->readRecords(RecordBuffer::kChecked, 0, n, checked_.data());
  report->msCheck = msSince(t);

  // Keep the survivors in table order; end the others with their reason (age last).
  TrackTable next;
  seeds_.clear();
  for (int i = 0; i < n; ++i) {
    const TrackRecord& r = checked_[i];
    const int age = table_.age[i] + 1;
    int reason = statusReason(r.status);
    if (reason == 0 && age > options_.maxAgeFrames) reason = static_cast<int>(EndReason::kAge);
    if (reason != 0) {
      ++report->ends[reason];
      ended_.push_back({table_.id[i], reason, r.x, r.y, table_.seedFrame[i], age});
      continue;
    }
    next.id.push_back(table_.id[i]);
    next.x.push_back(r.x);
    next.y.push_back(r.y);
    next.seedFrame.push_back(table_.seedFrame[i]);
    next.seedX.push_back(table_.seedX[i]);
    next.seedY.push_back(table_.seedY[i]);
    next.seedKeypoint.push_back(table_.seedKeypoint[i]);
    next.age.push_back(age);
    next.measure.push_back(r.measure);
    seeds_.push_back(seedRecord(r.x, r.y, r.measure));
  }
  table_ = std::move(next);
  backend_->uploadSeeds(seeds_.data(), static_cast<int>(seeds_.size()));
}

void Tracker::select(int cur, StepReport* report) {
  const auto t = Clock::now();
  report->selection = true;
  const int alive = table_.size();
  backend_->eigenMap(cur);
  const SelectCounts counts = backend_->select(alive);
  report->selected = counts.selected;
  report->appended = counts.appended;
  std::vector<TrackRecord> picks(counts.appended);
  if (counts.appended > 0)
    backend_->readRecords(RecordBuffer::kSeeds, alive, counts.appended, picks.data());
  for (const TrackRecord& p : picks) {
    table_.id.push_back(nextId_++);
    table_.x.push_back(p.x);
    table_.y.push_back(p.y);
    table_.seedFrame.push_back(frame_);
    table_.seedX.push_back(p.x);
    table_.seedY.push_back(p.y);
    table_.seedKeypoint.push_back(-1);
    table_.age.push_back(0);
    table_.measure.push_back(p.measure);
  }
  report->msSelect = msSince(t);
}

}  // namespace vidmap::klt
