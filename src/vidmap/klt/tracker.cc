#include "vidmap/klt/tracker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/klt/kernels.h"

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

void TrackTable::appendRow(const TrackTable& from, int i) {
  id.push_back(from.id[i]);
  x.push_back(from.x[i]);
  y.push_back(from.y[i]);
  seedFrame.push_back(from.seedFrame[i]);
  seedX.push_back(from.seedX[i]);
  seedY.push_back(from.seedY[i]);
  seedKeypoint.push_back(from.seedKeypoint[i]);
  age.push_back(from.age[i]);
  measure.push_back(from.measure[i]);
}

void TrackTable::appendNew(std::int64_t trackId, float px, float py, float m, int frame,
                           int keypoint) {
  id.push_back(trackId);
  x.push_back(px);
  y.push_back(py);
  seedFrame.push_back(frame);
  seedX.push_back(px);
  seedY.push_back(py);
  seedKeypoint.push_back(keypoint);
  age.push_back(0);
  measure.push_back(m);
}

void advanceTable(const TrackTable& table, const TrackRecord* checked, int maxAgeFrames,
                  TrackTable* next, std::vector<EndedTrack>* ended,
                  std::array<int, kEndReasonCount>* ends) {
  next->clear();
  for (int i = 0; i < table.size(); ++i) {
    const TrackRecord& r = checked[i];
    const int age = table.age[i] + 1;
    const int reason = pushEndReason(r.status, age, maxAgeFrames);
    if (reason != 0) {
      ++(*ends)[reason];
      ended->push_back({table.id[i], reason, r.x, r.y, table.seedFrame[i], age});
      continue;
    }
    next->appendRow(table, i);
    next->x.back() = r.x;
    next->y.back() = r.y;
    next->age.back() = age;
    next->measure.back() = r.measure;
  }
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
  if (autoSelect_ && (frame_ == 0 || keyframe)) select(cur, frame_, &report);

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
  advanceTable(table_, checked_.data(), options_.maxAgeFrames, &next, &ended_, &report->ends);
  seeds_.clear();
  for (int i = 0; i < next.size(); ++i)
    seeds_.push_back(seedRecord(next.x[i], next.y[i], next.measure[i]));
  table_ = std::move(next);
  backend_->uploadSeeds(seeds_.data(), static_cast<int>(seeds_.size()));
}

void Tracker::appendTrack(float x, float y, float measure, int seedFrame, int keypoint) {
  table_.appendNew(nextId_++, x, y, measure, seedFrame, keypoint);
}

void Tracker::uploadTable() {
  seeds_.clear();
  for (int i = 0; i < table_.size(); ++i)
    seeds_.push_back(seedRecord(table_.x[i], table_.y[i], table_.measure[i]));
  backend_->uploadSeeds(seeds_.data(), static_cast<int>(seeds_.size()));
}

SeedReport Tracker::seed(const std::vector<Seed>& seeds, bool fillIn, float minQuality) {
  require(frame_ > 0, "klt: seed() needs a pushed frame");
  const auto start = Clock::now();
  SeedReport rep;
  rep.offered = static_cast<int>(seeds.size());
  const int cur = prevSlot_;
  const int seedFrame = frame_ - 1;
  backend_->eigenMap(cur);
  // The test of the tracker's low-structure end (reason 2), on the selection map's block:
  // lambda_min per pixel >= minEigThreshold. A keypoint below it would end at its first push.
  float minEig = options_.minEigThreshold * options_.blockSize * options_.blockSize;
  eigen_.resize(static_cast<std::size_t>(width_) * height_);
  backend_->readEigenMap(eigen_.data());
  if (minQuality > 0) {
    float maxEig = 0;
    for (float e : eigen_) maxEig = std::max(maxEig, e);
    minEig = std::max(minEig, minQuality * maxEig);
  }
  // Occupancy at 1 px: a grid of 1 px cells, neighbours checked.
  const float border = static_cast<float>(options_.halfWindow + 1);
  std::vector<unsigned char> taken(static_cast<std::size_t>(width_) * height_, 0);
  auto cell = [&](float x, float y) {
    const int xi = std::clamp(static_cast<int>(std::lround(x)), 0, width_ - 1);
    const int yi = std::clamp(static_cast<int>(std::lround(y)), 0, height_ - 1);
    return std::pair<int, int>(xi, yi);
  };
  for (int i = 0; i < table_.size(); ++i) {
    const auto [xi, yi] = cell(table_.x[i], table_.y[i]);
    taken[static_cast<std::size_t>(yi) * width_ + xi] = 1;
  }
  for (const Seed& s : seeds) {
    if (table_.size() >= options_.capacity) break;
    if (!(s.x >= border && s.y >= border && s.x <= width_ - 1 - border &&
          s.y <= height_ - 1 - border))
      continue;
    const auto [xi, yi] = cell(s.x, s.y);
    bool near = false;
    for (int dy = -1; dy <= 1 && !near; ++dy)
      for (int dx = -1; dx <= 1 && !near; ++dx) {
        const int X = xi + dx, Y = yi + dy;
        if (X >= 0 && Y >= 0 && X < width_ && Y < height_ &&
            taken[static_cast<std::size_t>(Y) * width_ + X])
          near = true;
      }
    if (near) continue;
    const float e = eigen_[static_cast<std::size_t>(yi) * width_ + xi];
    if (!(e > 0 && e >= minEig)) continue;
    taken[static_cast<std::size_t>(yi) * width_ + xi] = 1;
    appendTrack(s.x, s.y, e, seedFrame, s.keypoint);
    ++rep.accepted;
  }
  uploadTable();
  if (fillIn) {
    StepReport r;
    const int before = table_.size();
    select(cur, seedFrame, &r);
    rep.fillIn = table_.size() - before;
  }
  rep.msSelect = msSince(start);
  return rep;
}

int Tracker::end(const std::vector<std::int64_t>& ids, EndReason reason) {
  if (ids.empty()) return 0;
  std::vector<std::int64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  TrackTable next;
  int n = 0;
  for (int i = 0; i < table_.size(); ++i) {
    if (std::binary_search(sorted.begin(), sorted.end(), table_.id[i])) {
      ended_.push_back({table_.id[i], static_cast<int>(reason), table_.x[i], table_.y[i],
                        table_.seedFrame[i], table_.age[i]});
      ++n;
      continue;
    }
    next.appendRow(table_, i);
  }
  if (n == 0) return 0;
  table_ = std::move(next);
  uploadTable();
  return n;
}

void Tracker::select(int cur, int seedFrame, StepReport* report) {
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
  for (const TrackRecord& p : picks) appendTrack(p.x, p.y, p.measure, seedFrame, -1);
  report->msSelect = msSince(t);
}

}  // namespace vidmap::klt
