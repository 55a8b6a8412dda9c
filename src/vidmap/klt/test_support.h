// Helpers of the KLT tests: track a set of points from one frame to another with a backend
// and compare with a known warp.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "vidmap/klt/cpu_backend.h"
#include "vidmap/synth/warp2d.h"

namespace vidmap::klt::testing {

struct PairResult {
  std::vector<TrackRecord> seeds, forward, backward, checked;
};

// Tracks `points` from frame I to frame J (forward, backward, check) in chunks of `chunk`
// tracks (0: one call per pass).
inline PairResult trackPair(Backend& b, const GrayImage& I, const GrayImage& J,
                            const std::vector<std::pair<float, float>>& points, int chunk = 0) {
  PairResult r;
  for (auto [x, y] : points) r.seeds.push_back(seedRecord(x, y, 0.0f));
  const int n = static_cast<int>(r.seeds.size());
  b.uploadGray(0, I.view());
  b.uploadGray(1, J.view());
  b.buildPyramid(0);
  b.buildPyramid(1);
  b.uploadSeeds(r.seeds.data(), n);
  const int c = chunk > 0 ? chunk : (n > 0 ? n : 1);
  for (Direction d : {Direction::kForward, Direction::kBackward})
    for (int i = 0; i < n; i += c) b.track(d, 0, 1, i, std::min(n, i + c));
  for (int i = 0; i < n; i += c) b.check(i, std::min(n, i + c));
  r.forward.resize(n);
  r.backward.resize(n);
  r.checked.resize(n);
  b.readRecords(RecordBuffer::kForward, 0, n, r.forward.data());
  b.readRecords(RecordBuffer::kBackward, 0, n, r.backward.data());
  b.readRecords(RecordBuffer::kChecked, 0, n, r.checked.data());
  return r;
}

inline PairResult trackPair(int width, int height, const Options& o, const GrayImage& I,
                            const GrayImage& J, const std::vector<std::pair<float, float>>& points,
                            int chunk = 0) {
  CpuBackend b(width, height, o);
  return trackPair(b, I, J, points, chunk);
}

// Distance of a tracked position from the warp of its seed.
inline double warpError(const TrackRecord& seed, const TrackRecord& out, const synth::Warp2d& w) {
  double tx, ty;
  w.apply(seed.x, seed.y, &tx, &ty);
  return std::hypot(out.x - tx, out.y - ty);
}

struct WarpStats {
  int kept = 0;         // alive after the check
  double maxError = 0;  // over kept tracks
  double medianError = 0;
};

inline WarpStats warpStats(const PairResult& r, const synth::Warp2d& w) {
  WarpStats s;
  std::vector<double> e;
  for (std::size_t i = 0; i < r.seeds.size(); ++i) {
    if (!statusAlive(r.checked[i].status)) continue;
    ++s.kept;
    e.push_back(warpError(r.seeds[i], r.checked[i], w));
    s.maxError = std::max(s.maxError, e.back());
  }
  if (!e.empty()) {
    std::nth_element(e.begin(), e.begin() + e.size() / 2, e.end());
    s.medianError = e[e.size() / 2];
  }
  return s;
}

}  // namespace vidmap::klt::testing
