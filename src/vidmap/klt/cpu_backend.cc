#include "vidmap/klt/cpu_backend.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"

namespace vidmap::klt {

CpuBackend::CpuBackend(int width, int height, const Options& options)
    : width_(width), height_(height), options_(options) {
  options_.checkFrame(width, height);
  layout_ = makeLayout(width, height, options_.levels);
  grid_ = makeCellGrid(width, height, options_.minDistancePx);
  for (int s = 0; s < 2; ++s) {
    gray_[s].assign(layout_.total, 0.0f);
    grad_[s].assign(2 * layout_.total, 0.0f);
  }
  for (auto& r : records_) r.assign(options_.capacity, TrackRecord{});
  eig_.assign(static_cast<std::size_t>(width) * height, 0.0f);
  picks_.assign(grid_.count(), Pick{});
  trackStart_.assign(grid_.count() + 1, 0);
  trackXY_.assign(2 * static_cast<std::size_t>(options_.capacity), 0.0f);
  keep_.assign(grid_.count(), 0);
}

void CpuBackend::checkSlot(int slot) const {
  require(slot == 0 || slot == 1, "klt: frame slot " + std::to_string(slot) + " is not 0 or 1");
}

void CpuBackend::checkRange(int begin, int end) const {
  require(begin >= 0 && begin <= end && end <= options_.capacity,
          "klt: track range [" + std::to_string(begin) + ", " + std::to_string(end) +
              ") is outside the capacity " + std::to_string(options_.capacity));
}

void CpuBackend::uploadGray(int slot, ImageView<const float> gray) {
  checkSlot(slot);
  require(gray.width == width_ && gray.height == height_,
          "klt: frame is " + std::to_string(gray.width) + " x " + std::to_string(gray.height) +
              ", the tracker was made for " + std::to_string(width_) + " x " +
              std::to_string(height_));
  float* dst = gray_[slot].data();
  for (int y = 0; y < height_; ++y)
    std::memcpy(dst + static_cast<std::size_t>(y) * width_, &gray(0, y), sizeof(float) * width_);
}

void CpuBackend::uploadRgb(int slot, ImageView<const Rgb8> rgb) {
  checkSlot(slot);
  require(rgb.width == width_ && rgb.height == height_,
          "klt: frame is " + std::to_string(rgb.width) + " x " + std::to_string(rgb.height) +
              ", the tracker was made for " + std::to_string(width_) + " x " +
              std::to_string(height_));
  float* dst = gray_[slot].data();
  parallelFor(height_, [&](std::int64_t y) {
    for (int x = 0; x < width_; ++x) {
      const Rgb8 p = rgb(x, static_cast<int>(y));
      dst[y * width_ + x] = grayFromRgb(p.r, p.g, p.b);
    }
  });
}

void CpuBackend::buildPyramid(int slot) {
  checkSlot(slot);
  float* g = gray_[slot].data();
  for (int l = 1; l < layout_.levels; ++l) {
    const float* src = g + layout_.offset[l - 1];
    float* dst = g + layout_.offset[l];
    const int sw = layout_.width[l - 1], sh = layout_.height[l - 1], w = layout_.width[l];
    parallelFor(layout_.height[l], [&](std::int64_t y) {
      for (int x = 0; x < w; ++x)
        dst[y * w + x] = pyrDownPixel(src, sw, sh, x, static_cast<int>(y));
    });
  }
  float* d = grad_[slot].data();
  for (int l = 0; l < layout_.levels; ++l) {
    const float* src = g + layout_.offset[l];
    float* dst = d + 2 * layout_.offset[l];
    const int w = layout_.width[l], h = layout_.height[l];
    parallelFor(h, [&](std::int64_t y) {
      for (int x = 0; x < w; ++x) {
        const std::int64_t q = 2 * (y * w + x);
        scharrPixel(src, w, h, x, static_cast<int>(y), &dst[q], &dst[q + 1]);
      }
    });
  }
}

void CpuBackend::uploadSeeds(const TrackRecord* seeds, int count) {
  checkRange(0, count);
  std::copy(seeds, seeds + count, records_[0].begin());
}

void CpuBackend::track(Direction direction, int prevSlot, int curSlot, int begin, int end) {
  checkSlot(prevSlot);
  checkSlot(curSlot);
  checkRange(begin, end);
  const PyramidView prev = pyramid(prevSlot), cur = pyramid(curSlot);
  const TrackParams p = trackParams(options_);
  const bool forward = direction == Direction::kForward;
  const TrackRecord* in = forward ? records_[0].data() : records_[1].data();
  TrackRecord* out = forward ? records_[1].data() : records_[2].data();
  parallelForDynamic(end - begin, [&](std::int64_t k) {
    TrackScratch scratch;
    const std::int64_t i = begin + k;
    out[i] = forward ? trackForward(prev, cur, in[i], p, &scratch)
                     : trackBackward(prev, cur, in[i], p, &scratch);
  });
}

void CpuBackend::check(int begin, int end) {
  checkRange(begin, end);
  const TrackRecord *s = records_[0].data(), *f = records_[1].data(), *b = records_[2].data();
  TrackRecord* out = records_[3].data();
  for (int i = begin; i < end; ++i)
    out[i] = checkTrack(s[i], f[i], b[i], options_.fbThresholdPx, options_.nccThreshold);
}

void CpuBackend::readRecords(RecordBuffer which, int begin, int count, TrackRecord* out) {
  checkRange(begin, begin + count);
  const auto& r = records_[static_cast<int>(which)];
  std::copy(r.begin() + begin, r.begin() + begin + count, out);
}

void CpuBackend::eigenMap(int slot) {
  checkSlot(slot);
  const float* grad = grad_[slot].data();
  std::vector<float> rowMax(height_, 0.0f);
  parallelFor(height_, [&](std::int64_t y) {
    float m = 0.0f;
    for (int x = 0; x < width_; ++x) {
      const float v = minEigenPixel(grad, width_, height_, x, static_cast<int>(y),
                                    options_.blockSize, options_.halfWindow);
      eig_[y * width_ + x] = v;
      m = std::max(m, v);
    }
    rowMax[y] = m;
  });
  eigenMax_ = *std::max_element(rowMax.begin(), rowMax.end());
}

SelectCounts CpuBackend::select(int aliveCount) {
  checkRange(0, aliveCount);
  const int cells = grid_.count();
  const TrackRecord* seeds = records_[0].data();
  // Bucket the alive tracks by cell (a counting sort).
  std::fill(trackStart_.begin(), trackStart_.end(), 0);
  std::vector<int> cellOfTrack(aliveCount);
  for (int i = 0; i < aliveCount; ++i) {
    cellOfTrack[i] = cellOf(grid_, seeds[i].x, seeds[i].y);
    ++trackStart_[cellOfTrack[i] + 1];
  }
  for (int c = 0; c < cells; ++c) trackStart_[c + 1] += trackStart_[c];
  std::vector<int> fill(trackStart_.begin(), trackStart_.end() - 1);
  for (int i = 0; i < aliveCount; ++i) {
    const int slot = fill[cellOfTrack[i]]++;
    trackXY_[2 * slot] = seeds[i].x;
    trackXY_[2 * slot + 1] = seeds[i].y;
  }
  const float threshold = options_.qualityLevel * eigenMax_;
  parallelFor(cells, [&](std::int64_t c) {
    const bool occupied = trackStart_[c + 1] > trackStart_[c];
    picks_[c] =
        selectCell(eig_.data(), width_, height_, grid_, static_cast<int>(c), threshold, occupied);
  });
  parallelFor(cells, [&](std::int64_t c) {
    keep_[c] = picks_[c].score > 0.0f &&
               keepPick(picks_.data(), grid_, static_cast<int>(c), options_.minDistancePx,
                        trackStart_.data(), trackXY_.data());
  });
  std::vector<int> kept;
  for (int c = 0; c < cells; ++c)
    if (keep_[c]) kept.push_back(c);
  SelectCounts counts;
  counts.selected = static_cast<int>(kept.size());
  const int room = options_.capacity - aliveCount;
  if (counts.selected > room) {
    std::vector<int> order = kept;
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return pickStronger(picks_[a].score, a, picks_[b].score, b); });
    order.resize(room);
    std::sort(order.begin(), order.end());
    kept = order;
  }
  counts.appended = static_cast<int>(kept.size());
  TrackRecord* out = records_[0].data() + aliveCount;
  for (int i = 0; i < counts.appended; ++i) {
    const Pick& p = picks_[kept[i]];
    out[i] = seedRecord(p.x, p.y, p.score);
  }
  return counts;
}

void CpuBackend::readLevel(int slot, int level, float* gray, float* grad) {
  checkSlot(slot);
  require(level >= 0 && level < layout_.levels, "klt: no level " + std::to_string(level));
  const std::int64_t n = layout_.pixels(level), off = layout_.offset[level];
  if (gray) std::copy(gray_[slot].begin() + off, gray_[slot].begin() + off + n, gray);
  if (grad) std::copy(grad_[slot].begin() + 2 * off, grad_[slot].begin() + 2 * (off + n), grad);
}

void CpuBackend::readEigenMap(float* out) { std::copy(eig_.begin(), eig_.end(), out); }

std::size_t CpuBackend::residentBytes() const {
  std::size_t b = 0;
  for (int s = 0; s < 2; ++s) b += (gray_[s].size() + grad_[s].size()) * sizeof(float);
  for (const auto& r : records_) b += r.size() * sizeof(TrackRecord);
  b += eig_.size() * sizeof(float) + picks_.size() * sizeof(Pick) +
       trackStart_.size() * sizeof(int) + trackXY_.size() * sizeof(float) + keep_.size();
  return b;
}

std::unique_ptr<Backend> makeCpuBackend(int width, int height, const Options& options) {
  return std::make_unique<CpuBackend>(width, height, options);
}

}  // namespace vidmap::klt
