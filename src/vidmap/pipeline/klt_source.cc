#include "vidmap/pipeline/klt_source.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <tuple>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"

#if defined(VIDMAP_HAVE_CUDA) && __has_include("vidmap/klt/cuda_backend.h")
#include "vidmap/gpu/context.h"
#include "vidmap/klt/cuda_backend.h"
#define VIDMAP_KLT_SOURCE_CUDA 1
#endif

namespace vidmap::pipeline {

void KltSourceOptions::check() const {
  checkRange("klt.joinRadiusPx", joinRadiusPx, 0.01, 100.0);
  checkRange("klt.capacity", capacity, 16, klt::kMaxCapacity);
  if (levels != 0) checkRange("klt.levels", levels, 1, klt::kMaxLevels);
  checkRange("klt.fbThresholdPx", fbThresholdPx, 0.0, 1000.0);
  checkRange("klt.seedQuality", seedQuality, 0.0, 1.0);
  checkRange("klt.chainKeyframes", chainKeyframes, 1, 1000);
  checkRange("klt.minGateTracks", minGateTracks, 1, 1000000);
  checkRange("klt.outlierLag", outlierLag, 0, 64);
}

double KltStats::meanTrackKeyframes() const {
  std::int64_t n = 0, sum = 0;
  for (size_t k = 0; k < lengthHistogram.size(); ++k) {
    n += lengthHistogram[k];
    sum += lengthHistogram[k] * static_cast<std::int64_t>(k);
  }
  return n ? static_cast<double>(sum) / n : 0.0;
}

void KltStats::writeTo(io::RunRecord& r) const {
  r.addStage("klt_upload", msUpload, 0, pushes);
  r.addStage("klt_pyramid", msPyramid, 0, pushes);
  r.addStage("klt_track", msTrack, 0, pushes);
  r.addStage("klt_check", msCheck, 0, pushes);
  r.addStage("klt_select", msSelect, 0, keyframes);
  r.addStage("klt_join", msJoin, 0, keyframes);
  r.setCount("klt_pushes", pushes);
  r.setCount("klt_resets", resets);
  r.setCount("klt_alive_max", aliveMax);
  r.setMetric("klt_alive_mean", pushes ? static_cast<double>(aliveSum) / pushes : 0.0);
  for (int k = 1; k < klt::kEndReasonCount; ++k)
    r.setCount(std::string("klt_ends_") + klt::endReasonName(k), ends[k]);
  r.setCount("klt_seeds", seeds);
  r.setCount("klt_fill_in", fillIn);
  r.setCount("klt_joins", joins);
  r.setCount("klt_join_candidates", joinCandidates);
  for (int k = 1; k < klt::kEndReasonCount; ++k)
    r.setCount(std::string("klt_ends_unjoined_") + klt::endReasonName(k), endsUnjoined[k]);
  r.setCount("klt_matches", matches);
  for (size_t k = 0; k < lengthHistogram.size(); ++k)
    r.setCount("klt_track_keyframes_" + std::to_string(k) +
                   (k + 1 == lengthHistogram.size() ? "_or_more" : ""),
               lengthHistogram[k]);
  r.setMetric("klt_mean_track_keyframes", meanTrackKeyframes());
}

namespace {

std::int64_t claimKey(int keyframe, int keypoint) {
  return (static_cast<std::int64_t>(keyframe) << 32) | static_cast<std::uint32_t>(keypoint);
}

// The keypoints of a keyframe in cells of the join radius: the nearest within the radius is
// among the 3 x 3 cells around a point.
class KeypointGrid {
 public:
  KeypointGrid(const features::Features& f, double cell, int width, int height)
      : cell_(cell),
        cols_(std::max(1, static_cast<int>(width / cell) + 1)),
        rows_(std::max(1, static_cast<int>(height / cell) + 1)),
        f_(f) {
    start_.assign(static_cast<size_t>(cols_) * rows_ + 1, 0);
    std::vector<int> c(f.keypoints.size());
    for (size_t k = 0; k < f.keypoints.size(); ++k) {
      c[k] = index(f.keypoints[k].x, f.keypoints[k].y);
      ++start_[c[k] + 1];
    }
    for (size_t i = 1; i < start_.size(); ++i) start_[i] += start_[i - 1];
    items_.resize(f.keypoints.size());
    std::vector<int> fill(start_.begin(), start_.end() - 1);
    for (size_t k = 0; k < f.keypoints.size(); ++k) items_[fill[c[k]]++] = static_cast<int>(k);
  }
  // The nearest keypoint within `radius` of (x, y), -1 if none (ties: the lower index).
  int nearest(float x, float y, double radius, double* dist = nullptr) const {
    const int cx = cellOf(x, cols_), cy = cellOf(y, rows_);
    int best = -1;
    double bd = radius * radius;
    for (int yy = std::max(0, cy - 1); yy <= std::min(rows_ - 1, cy + 1); ++yy)
      for (int xx = std::max(0, cx - 1); xx <= std::min(cols_ - 1, cx + 1); ++xx) {
        const int c = yy * cols_ + xx;
        for (int i = start_[c]; i < start_[c + 1]; ++i) {
          const int k = items_[i];
          const double dx = f_.keypoints[k].x - x, dy = f_.keypoints[k].y - y;
          const double d = dx * dx + dy * dy;
          if (d < bd || (d == bd && best >= 0 && k < best)) {
            if (d <= radius * radius) {
              bd = d;
              best = k;
            }
          }
        }
      }
    if (dist) *dist = std::sqrt(bd);
    return best;
  }

 private:
  int cellOf(float v, int n) const {
    return std::clamp(static_cast<int>(std::floor(v / cell_)), 0, n - 1);
  }
  int index(float x, float y) const { return cellOf(y, rows_) * cols_ + cellOf(x, cols_); }
  double cell_;
  int cols_, rows_;
  const features::Features& f_;
  std::vector<int> start_, items_;
};

}  // namespace

KltSource::KltSource(const KltSourceOptions& options) : options_(options) {
  options_.check();
#ifndef VIDMAP_KLT_SOURCE_CUDA
  if (options_.cuda)
    throw Error("klt: the CUDA tracker needs a build with the CUDA backend of the tracker");
#endif
}

KltSource::~KltSource() = default;

void KltSource::retire(std::int64_t id, int reason) {
  auto it = info_.find(id);
  if (it == info_.end()) return;
  ++stats_.ends[reason];
  if (it->second.chain.size() <= 1) ++stats_.endsUnjoined[reason];
  const size_t n = std::min(it->second.chain.size(), stats_.lengthHistogram.size() - 1);
  ++stats_.lengthHistogram[n];
  info_.erase(it);
}

void KltSource::reset(int width, int height) {
  // A new frame size (or the first frame): the tracks of the old size end here, counted as
  // leaving the frame, and a tracker for the new size starts without tracks.
  if (tracker_) {
    for (const auto& [id, inf] : info_) {
      ++stats_.ends[static_cast<int>(klt::EndReason::kOutOfFrame)];
      if (inf.chain.size() <= 1)
        ++stats_.endsUnjoined[static_cast<int>(klt::EndReason::kOutOfFrame)];
      ++stats_.lengthHistogram[std::min(inf.chain.size(), stats_.lengthHistogram.size() - 1)];
    }
    ++stats_.resets;
  }
  info_.clear();
  claims_.clear();
  keyframeTracks_ = 0;
  tracker_.reset();
  width_ = width;
  height_ = height;
  klt::Options o = klt::optionsFor(width);
  o.capacity = options_.capacity;
  if (options_.levels > 0) o.levels = options_.levels;
  if (options_.fbThresholdPx > 0)
    o.fbThresholdPx = static_cast<float>(options_.fbThresholdPx * width / 640.0);
  try {
    o.checkFrame(width, height);
  } catch (const Error&) {
    return;  // too small for the window: no tracks, the gate uses descriptors
  }
  std::unique_ptr<klt::Backend> backend;
#ifdef VIDMAP_KLT_SOURCE_CUDA
  if (options_.cuda) {
    if (!ctx_) ctx_ = std::make_shared<gpu::Context>();
    backend = klt::makeCudaBackend(*ctx_, width, height, o);
  }
#endif
  tracker_ = std::make_unique<klt::Tracker>(width, height, o, std::move(backend));
  tracker_->setAutoSelect(false);
  tracker_->setStageTiming(false);
}

void KltSource::onFrame(const io::Frame& frame) {
  const int w = frame.gray.width(), h = frame.gray.height();
  if (!tracker_ || w != width_ || h != height_) reset(w, h);
  if (!tracker_) return;
  applyDueOutliers();
  const klt::StepReport r = tracker_->push(frame.gray);
  ++stats_.pushes;
  stats_.msUpload += r.msUpload;
  stats_.msPyramid += r.msPyramid;
  stats_.msTrack += r.msTrack;
  stats_.msCheck += r.msCheck;
  stats_.aliveSum += r.alive;
  stats_.aliveMax = std::max(stats_.aliveMax, r.alive);
  for (const klt::EndedTrack& e : tracker_->ended()) retire(e.id, e.reason);
}

bool KltSource::gateMotion(int lastKeyframe, sfm::GateTracks* g,
                           sfm::TrackedFrame* observed) const {
  if (!tracker_ || tracker_->frames() == 0) return false;
  const klt::TrackTable& t = tracker_->tracks();
  if (t.size() < options_.minGateTracks) return false;
  g->clear();
  g->keyframeTracks = keyframeTracks_;
  g->atKeyframe.reserve(t.size());
  g->now.reserve(t.size());
  for (int i = 0; i < t.size(); ++i) {
    const auto it = info_.find(t.id[i]);
    if (it == info_.end()) continue;
    const TrackInfo& inf = it->second;
    g->atKeyframe.emplace_back(inf.kfX, inf.kfY);
    g->now.emplace_back(t.x[i], t.y[i]);
    if (observed && !inf.chain.empty() && inf.chain.back().keyframe == lastKeyframe) {
      observed->keypoints.emplace_back(t.x[i], t.y[i]);
      observed->keyframeKeypoint.push_back(inf.chain.back().keypoint);
    }
  }
  return static_cast<int>(g->now.size()) >= options_.minGateTracks;
}

void KltSource::startTracks(int first, int keyframeId, const features::Features& features) {
  (void)features;
  const klt::TrackTable& t = tracker_->tracks();
  for (int i = first; i < t.size(); ++i) {
    TrackInfo inf;
    inf.kfX = t.x[i];
    inf.kfY = t.y[i];
    const int kp = t.seedKeypoint[i];
    if (kp >= 0) {
      inf.chain.push_back({keyframeId, kp});
      claims_[claimKey(keyframeId, kp)] = t.id[i];
    }
    info_[t.id[i]] = std::move(inf);
  }
}

std::vector<sfm::PairMatches> KltSource::onKeyframe(int keyframeId,
                                                    const features::Features& features) {
  ++stats_.keyframes;
  newestKeyframe_ = std::max(newestKeyframe_, keyframeId);
  if (!tracker_) return {};
  const auto t0 = std::chrono::steady_clock::now();
  const double radius = options_.joinRadiusPx * width_ / 640.0;
  const KeypointGrid grid(features, radius, width_, height_);
  const klt::TrackTable& t = tracker_->tracks();
  stats_.joinCandidates += t.size();

  // Candidates (distance, track index, keypoint), nearest first: a keypoint goes to the
  // nearest track that wants it; the order is total, so the claim does not depend on threads.
  std::vector<std::tuple<double, int, int>> cand;
  for (int i = 0; i < t.size(); ++i) {
    double dist = 0;
    const int k = grid.nearest(t.x[i], t.y[i], radius, &dist);
    if (k >= 0) cand.emplace_back(dist, i, k);
  }
  std::sort(cand.begin(), cand.end());
  std::vector<char> keyClaimed(features.keypoints.size(), 0), trackJoined(t.size(), 0);
  std::vector<sfm::PairMatches> out;
  auto pairFor = [&](int kf) -> sfm::PairMatches& {
    for (auto& p : out)
      if (p.image1 == kf) return p;
    out.push_back({kf, keyframeId, {}});
    return out.back();
  };
  for (const auto& [dist, i, k] : cand) {
    if (keyClaimed[k] || trackJoined[i]) continue;
    keyClaimed[k] = 1;
    trackJoined[i] = 1;
    TrackInfo& inf = info_[t.id[i]];
    const int n = static_cast<int>(inf.chain.size());
    for (int c = std::max(0, n - options_.chainKeyframes); c < n; ++c)
      pairFor(inf.chain[c].keyframe).matches.emplace_back(inf.chain[c].keypoint, k);
    inf.chain.push_back({keyframeId, k});
    claims_[claimKey(keyframeId, k)] = t.id[i];
    tracker_->resetAge(i);
    ++stats_.joins;
  }
  // Every alive track moves its keyframe reference here (the gate measures from this one).
  for (int i = 0; i < t.size(); ++i) {
    TrackInfo& inf = info_[t.id[i]];
    inf.kfX = t.x[i];
    inf.kfY = t.y[i];
  }
  // Unclaimed keypoints become seeds, then the fill-in picks around all tracks.
  std::vector<klt::Seed> seeds;
  for (size_t k = 0; k < features.keypoints.size(); ++k)
    if (!keyClaimed[k])
      seeds.push_back({features.keypoints[k].x, features.keypoints[k].y, static_cast<int>(k)});
  const int first = t.size();
  const klt::SeedReport sr =
      tracker_->seed(seeds, options_.fillIn, static_cast<float>(options_.seedQuality));
  stats_.seeds += sr.accepted;
  stats_.fillIn += sr.fillIn;
  stats_.msSelect += sr.msSelect;
  startTracks(first, keyframeId, features);
  keyframeTracks_ = tracker_->tracks().size();
  // A fill-in track starts its chain at the nearest keypoint of its keyframe, if one is
  // within the radius and not claimed .
  const klt::TrackTable& t2 = tracker_->tracks();
  for (int i = first; i < t2.size(); ++i) {
    if (t2.seedKeypoint[i] >= 0) continue;
    const int k = grid.nearest(t2.x[i], t2.y[i], radius);
    if (k < 0 || claims_.count(claimKey(keyframeId, k))) continue;
    info_[t2.id[i]].chain.push_back({keyframeId, k});
    claims_[claimKey(keyframeId, k)] = t2.id[i];
  }
  if (!options_.matches) out.clear();  // the gate only: the joins kept, no matches out
  for (auto& p : out) {
    std::sort(p.matches.begin(), p.matches.end());
    p.matches.erase(std::unique(p.matches.begin(), p.matches.end()), p.matches.end());
    stats_.matches += static_cast<std::int64_t>(p.matches.size());
  }
  std::sort(out.begin(), out.end(), [](const sfm::PairMatches& a, const sfm::PairMatches& b) {
    return a.image1 < b.image1;
  });
  stats_.msJoin +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() -
      sr.msSelect;
  return out;
}

void KltSource::onOutliers(const sfm::PairMatches& pm) {
  std::lock_guard lock(pendingMutex_);
  pending_.emplace_back(std::max(pm.image1, pm.image2), pm);
}

int KltSource::pendingOutlierPairs() const {
  std::lock_guard lock(pendingMutex_);
  return static_cast<int>(pending_.size());
}

void KltSource::applyDueOutliers() {
  std::vector<sfm::PairMatches> due;
  {
    std::lock_guard lock(pendingMutex_);
    while (!pending_.empty() && pending_.front().first <= newestKeyframe_ - options_.outlierLag) {
      due.push_back(std::move(pending_.front().second));
      pending_.pop_front();
    }
  }
  for (const sfm::PairMatches& pm : due) applyOutliers(pm);
}

void KltSource::applyOutliers(const sfm::PairMatches& pm) {
  if (!tracker_) return;
  // A rejected match ends the track that made it: the track that claimed the newer keypoint
  // and has the older one in its chain (a descriptor match between the same keypoints would
  // be the same match, rejected all the same).
  const bool swap = pm.image1 > pm.image2;
  const int a = swap ? pm.image2 : pm.image1, b = swap ? pm.image1 : pm.image2;
  std::vector<std::int64_t> ids;
  for (const auto& m : pm.matches) {
    const int i = swap ? m.second : m.first, j = swap ? m.first : m.second;
    const auto c = claims_.find(claimKey(b, j));
    if (c == claims_.end()) continue;
    const auto it = info_.find(c->second);
    if (it == info_.end()) continue;
    for (const Link& l : it->second.chain)
      if (l.keyframe == a && l.keypoint == i) {
        ids.push_back(c->second);
        break;
      }
  }
  if (ids.empty()) return;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  tracker_->end(ids, klt::EndReason::kEpipolar);
  for (std::int64_t id : ids) retire(id, static_cast<int>(klt::EndReason::kEpipolar));
}

const std::vector<KltSource::Link>* KltSource::chain(std::int64_t id) const {
  const auto it = info_.find(id);
  return it == info_.end() ? nullptr : &it->second.chain;
}

}  // namespace vidmap::pipeline
