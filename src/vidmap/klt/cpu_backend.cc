#include "vidmap/klt/cpu_backend.h"

#include <algorithm>
#include <cstring>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "vidmap/core/cpu_features.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"

namespace vidmap::klt {

namespace {

// A parallel loop only when the work is worth waking the threads for: a fork and join costs
// microseconds, and much more when the cores are shared with other processes.
template <class F>
void rows(std::int64_t n, std::int64_t pixelsPerRow, F&& f) {
  if (n * pixelsPerRow < 16384) {
    for (std::int64_t i = 0; i < n; ++i) f(i);
  } else {
    parallelFor(n, f);
  }
}

template <class F>
void tracks(std::int64_t n, F&& f) {
  if (n < 8) {
    for (std::int64_t i = 0; i < n; ++i) f(i);
  } else {
    parallelForDynamic(n, f);
  }
}

// One track, forward or backward: the baseline x86-64 code, and (flatten: everything it calls
// compiled into it) the same with AVX2, whose window loops (bilinear sampling, the target's
// terms) the compiler runs eight lanes at a time. Only element-wise products and sums
// vectorise (no FMA: "avx2" does not enable it, and -ffp-contract=off) and the lane-strided
// sums are written out in kernels.h, so both give the same records bit for bit. About a tenth
// of the tracking's time on TUM at all frames (docs/benchmarks.md, stop 38).
inline TrackRecord trackOneImpl(const PyramidView& prev, const PyramidView& cur,
                                const TrackRecord& in, const TrackParams& p, bool forward) {
  TrackScratch scratch;
  return forward ? trackForward(prev, cur, in, p, &scratch)
                 : trackBackward(prev, cur, in, p, &scratch);
}

__attribute__((flatten)) TrackRecord trackOneBase(const PyramidView& prev, const PyramidView& cur,
                                                  const TrackRecord& in, const TrackParams& p,
                                                  bool forward) {
  return trackOneImpl(prev, cur, in, p, forward);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"), flatten)) TrackRecord trackOneAvx2(const PyramidView& prev,
                                                                  const PyramidView& cur,
                                                                  const TrackRecord& in,
                                                                  const TrackParams& p,
                                                                  bool forward) {
  return trackOneImpl(prev, cur, in, p, forward);
}

// minEigenPixel for the pixels x0, x0 + 1, ... of an interior row y (every block tap inside the
// frame, so no clamp), eight at a time: per pixel the same products and sums in the same order
// (dy, then dx), and minEigen2x2's operations with the correctly rounded vector square root, so
// the same values bit for bit. Returns the first x it did not do (the caller does the rest).
__attribute__((target("avx2"))) int minEigenRowAvx2(const float* grad, int w, int y, int x0, int x1,
                                                    int r, float* out) {
  typedef float V8 __attribute__((vector_size(32)));
#if !defined(__clang__)
  typedef int I8 __attribute__((vector_size(32)));
  const I8 even = {0, 2, 4, 6, 8, 10, 12, 14}, odd = {1, 3, 5, 7, 9, 11, 13, 15};
#endif
  const V8 zero = {}, four = zero + 4.0f, half = zero + 0.5f;
  int x = x0;
  for (; x + 8 <= x1; x += 8) {
    V8 gxx = zero, gxy = zero, gyy = zero;
    for (int dy = -r; dy <= r; ++dy) {
      const float* row = grad + 2 * (static_cast<std::int64_t>(y + dy) * w + x);
      for (int dx = -r; dx <= r; ++dx) {
        V8 lo, hi;
        std::memcpy(&lo, row + 2 * dx, sizeof lo);
        std::memcpy(&hi, row + 2 * dx + 8, sizeof hi);
#if defined(__clang__)
        const V8 gx = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
        const V8 gy = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
#else
        const V8 gx = __builtin_shuffle(lo, hi, even), gy = __builtin_shuffle(lo, hi, odd);
#endif
        gxx += gx * gx;
        gxy += gx * gy;
        gyy += gy * gy;
      }
    }
    const V8 d = gxx - gyy;
    const V8 q = d * d + four * (gxy * gxy);
    __m256 qs;
    std::memcpy(&qs, &q, sizeof qs);
    const __m256 ss = _mm256_sqrt_ps(qs);
    V8 sq;
    std::memcpy(&sq, &ss, sizeof sq);
    V8 l = ((gxx + gyy) - sq) * half;
    l = l > zero ? l : zero;  // NaN -> 0
    std::memcpy(out + x, &l, sizeof l);
  }
  return x;
}
#endif

// The pyramid's and the gradient's rows (buildPyramid): kernels.h's per-pixel functions,
// the interior without a branch so that the compiler runs it several pixels at a time (each
// pixel's operations unchanged), in a baseline and an AVX2 copy.
inline void pyrRowXImpl(const float* row, int sw, int w, float* out) {
  const int xEnd = (sw - 3) / 2;  // last x with 2x + 2 <= sw - 1
  const int x1 = std::min(xEnd, w - 1);
  for (int x = 0; x < std::min(1, w); ++x) out[x] = pyrDownX(row, sw, x);
  for (int x = 1; x <= x1; ++x)
    out[x] = binomial5(row[2 * x - 2], row[2 * x - 1], row[2 * x], row[2 * x + 1], row[2 * x + 2]);
  for (int x = std::max(1, x1 + 1); x < w; ++x) out[x] = pyrDownX(row, sw, x);
}

inline void pyrRowYImpl(const float* const* r, int w, float* out) {
  for (int x = 0; x < w; ++x) out[x] = binomial5(r[0][x], r[1][x], r[2][x], r[3][x], r[4][x]);
}

inline void scharrRowImpl(const float* src, int w, int h, int y, float* out) {
  const float* r0 = src + static_cast<std::int64_t>(clampInt(y - 1, 0, h - 1)) * w;
  const float* r1 = src + static_cast<std::int64_t>(y) * w;
  const float* r2 = src + static_cast<std::int64_t>(clampInt(y + 1, 0, h - 1)) * w;
  if (w < 3) {
    for (int x = 0; x < w; ++x) scharrPixel(src, w, h, x, y, &out[2 * x], &out[2 * x + 1]);
    return;
  }
  scharrPixel(src, w, h, 0, y, &out[0], &out[1]);
  for (int x = 1; x <= w - 2; ++x) {
    out[2 * x] = scharrX(r0[x - 1], r0[x + 1], r1[x - 1], r1[x + 1], r2[x - 1], r2[x + 1]);
    out[2 * x + 1] = scharrY(r0[x - 1], r2[x - 1], r0[x], r2[x], r0[x + 1], r2[x + 1]);
  }
  scharrPixel(src, w, h, w - 1, y, &out[2 * (w - 1)], &out[2 * (w - 1) + 1]);
}

void pyrRowXBase(const float* row, int sw, int w, float* out) { pyrRowXImpl(row, sw, w, out); }
void pyrRowYBase(const float* const* r, int w, float* out) { pyrRowYImpl(r, w, out); }
void scharrRowBase(const float* src, int w, int h, int y, float* out) {
  scharrRowImpl(src, w, h, y, out);
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"), flatten)) void pyrRowXAvx2(const float* row, int sw, int w,
                                                          float* out) {
  pyrRowXImpl(row, sw, w, out);
}
__attribute__((target("avx2"), flatten)) void pyrRowYAvx2(const float* const* r, int w,
                                                          float* out) {
  pyrRowYImpl(r, w, out);
}
__attribute__((target("avx2"), flatten)) void scharrRowAvx2(const float* src, int w, int h, int y,
                                                            float* out) {
  scharrRowImpl(src, w, h, y, out);
}
#endif

}  // namespace

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
  scratch_.assign(options_.levels > 1 ? static_cast<std::size_t>(height) * layout_.width[1] : 0,
                  0.0f);
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
  rows(height_, width_, [&](std::int64_t y) {
    for (int x = 0; x < width_; ++x) {
      const Rgb8 p = rgb(x, static_cast<int>(y));
      dst[y * width_ + x] = grayFromRgb(p.r, p.g, p.b);
    }
  });
}

// Two passes per level (x blurs of every source row into a scratch image, then y blurs),
// and Scharr by rows: the functions of kernels.h, called with unclamped taps where no tap is
// clamped (the same values). A test compares every pixel with pyrDownPixel and scharrPixel.
void CpuBackend::buildPyramid(int slot) {
  checkSlot(slot);
  auto rowX = &pyrRowXBase;
  auto rowY = &pyrRowYBase;
  auto scharrRow = &scharrRowBase;
#if defined(__x86_64__) && defined(__GNUC__)
  if (options_.cpuAvx2 && cpuHasAvx2()) {
    rowX = &pyrRowXAvx2;
    rowY = &pyrRowYAvx2;
    scharrRow = &scharrRowAvx2;
  }
#endif
  float* g = gray_[slot].data();
  for (int l = 1; l < layout_.levels; ++l) {
    const float* src = g + layout_.offset[l - 1];
    float* dst = g + layout_.offset[l];
    const int sw = layout_.width[l - 1], sh = layout_.height[l - 1];
    const int w = layout_.width[l], h = layout_.height[l];
    float* hx = scratch_.data();  // sh x w
    rows(sh, sw, [&](std::int64_t r) { rowX(src + r * sw, sw, w, hx + r * w); });
    rows(h, w, [&](std::int64_t y) {
      const float* r[5];
      for (int k = 0; k < 5; ++k)
        r[k] = hx +
               static_cast<std::int64_t>(clampInt(2 * static_cast<int>(y) + k - 2, 0, sh - 1)) * w;
      rowY(r, w, dst + y * w);
    });
  }
  float* d = grad_[slot].data();
  for (int l = 0; l < layout_.levels; ++l) {
    const float* src = g + layout_.offset[l];
    float* dst = d + 2 * layout_.offset[l];
    const int w = layout_.width[l], h = layout_.height[l];
    rows(h, w,
         [&](std::int64_t yy) { scharrRow(src, w, h, static_cast<int>(yy), dst + 2 * yy * w); });
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
  auto trackOne = &trackOneBase;
#if defined(__x86_64__) && defined(__GNUC__)
  if (options_.cpuAvx2 && cpuHasAvx2()) trackOne = &trackOneAvx2;
#endif
  tracks(end - begin, [&](std::int64_t k) {
    const std::int64_t i = begin + k;
    out[i] = trackOne(prev, cur, in[i], p, forward);
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
  const int hw = options_.halfWindow, r = options_.blockSize / 2;
#if defined(__x86_64__) && defined(__GNUC__)
  const bool avx2 = options_.cpuAvx2 && cpuHasAvx2() && r <= hw;
#endif
  rows(height_, width_, [&](std::int64_t y) {
    float* out = &eig_[y * width_];
    int x = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (avx2 && y >= hw && y <= height_ - 1 - hw) {  // minEigenPixel's interior
      for (; x < hw; ++x) out[x] = 0.0f;
      x = minEigenRowAvx2(grad, width_, static_cast<int>(y), x, width_ - hw, r, out);
    }
#endif
    for (; x < width_; ++x)
      out[x] = minEigenPixel(grad, width_, height_, x, static_cast<int>(y), options_.blockSize,
                             options_.halfWindow);
    float m = 0.0f;
    for (x = 0; x < width_; ++x) m = std::max(m, out[x]);
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
  rows(cells, grid_.cellPx * grid_.cellPx, [&](std::int64_t c) {
    const bool occupied = trackStart_[c + 1] > trackStart_[c];
    picks_[c] =
        selectCell(eig_.data(), width_, height_, grid_, static_cast<int>(c), threshold, occupied);
  });
  rows(cells, 9, [&](std::int64_t c) {
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
       trackStart_.size() * sizeof(int) + trackXY_.size() * sizeof(float) + keep_.size() +
       scratch_.size() * sizeof(float);
  return b;
}

std::unique_ptr<Backend> makeCpuBackend(int width, int height, const Options& options) {
  return std::make_unique<CpuBackend>(width, height, options);
}

}  // namespace vidmap::klt
