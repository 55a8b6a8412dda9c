// Many RANSACs in lock-step rounds, their hypotheses scored together: each round every
// unfinished problem draws its samples with its own seeded generator and solves them on the CPU,
// one BatchScorer call scores all problems' hypotheses (on the GPU: one launch for the pairs of
// a keyframe, not one per hypothesis; docs/architecture.md, "Batched RANSAC on the GPU"), then
// each problem replays its samples in order exactly as ransac() (ransac.h) would have: the
// stopping rule before each sample, every hypothesis offered to the best (MSAC, LO-RANSAC) in
// turn. The batch scores only filter: a hypothesis whose batch cost is above the best by more
// than kLockstepMargin (relative) cannot be the best, and is skipped as ransac()'s bounded
// msacScore would reject it; any other is scored again on the CPU by msacScore, so the best,
// its local optimisation and the adaptive count see exactly the numbers of ransac(). The result
// equals ransac()'s bit for bit whatever the scorer, as long as the scorer's cost is within the
// margin of the CPU sum (a different summation order: about n * 1e-16 relative; FMA residuals
// differ by less, and score_batch_cuda_test measures both). Samples drawn past the stopping
// point of a round are wasted work, not a change of result; a round draws at most the samples
// the stopping rule still asks for.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vidmap/core/parallel.h"
#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/ransac.h"
#include "vidmap/geometry/score_batch.h"

namespace vidmap::geometry {

constexpr double kLockstepMargin = 1e-9;

struct LockstepOptions {
  int first_round_samples = 20;  // a problem's first round; each next round doubles, up to ...
  int max_round_samples = 256;   // ... this
  void check() const {
    checkRange("lockstep.first_round_samples", first_round_samples, 1, 65535);
    checkRange("lockstep.max_round_samples", max_round_samples, first_round_samples, 65535);
  }
};

// One problem of a lock-step run (type-erased over the estimator).
class LockstepTask {
 public:
  virtual ~LockstepTask() = default;
  virtual bool done() const = 0;
  // Draws and solves this round's samples; its hypotheses go to `out` (problem `problem()`).
  virtual void propose(const LockstepOptions& o) = 0;
  virtual void append(HypothesisBatch* out) const = 0;
  virtual int proposed() const = 0;
  // Replays the round with the scores of its hypotheses (in the order of append()).
  virtual void absorb(const HypothesisScore* scores) = 0;
};

template <class Estimator>
class RansacTask final : public LockstepTask {
 public:
  using Model = typename Estimator::Model;
  static constexpr int s = Estimator::kSampleSize;

  // `est` must outlive the task. `prior`: as ransac()'s, scored first (a round of its own).
  RansacTask(const Estimator& est, const RansacOptions& opt, int problem,
             const Model* prior = nullptr)
      : est_(est), opt_(opt), problem_(problem), rng_(opt.seed), best_(opt, est.numData()) {
    opt_.check();
    t2_ = opt.max_error * opt.max_error;
    if (prior) prior_ = *prior;
    done_ = est.numData() < s;
  }

  bool done() const override { return done_; }
  const RansacResult<Model>& result() const { return res_; }

  void propose(const LockstepOptions& o) override {
    models_.clear();
    sample_end_.clear();
    prior_in_round_ = false;
    if (prior_) {
      models_.push_back(*prior_);
      prior_.reset();
      prior_in_round_ = true;
      return;
    }
    const int cap = std::min(o.max_round_samples, o.first_round_samples << std::min(round_, 16));
    const int wanted = std::max(opt_.min_iterations, best_.needed) - it_;
    const int k = std::max(1, std::min({cap, opt_.max_iterations - it_, wanted}));
    ++round_;
    int sample[s];
    for (int b = 0; b < k; ++b) {
      detail::drawSample(rng_, est_.numData(), s, sample);
      est_.estimate(sample, &models_);
      sample_end_.push_back(static_cast<int>(models_.size()));
    }
  }

  void append(HypothesisBatch* out) const override {
    for (const Model& m : models_) {
      flat_.clear();
      appendModel(m, &flat_);
      out->add(problem_, flat_.data(), static_cast<int>(flat_.size()));
    }
  }
  int proposed() const override { return static_cast<int>(models_.size()); }

  void absorb(const HypothesisScore* scores) override {
    int k = 0;
    if (prior_in_round_) {
      consider(models_[0], scores[0]);
      k = 1;
    }
    for (int end : sample_end_) {
      if (stop()) break;
      for (; k < end; ++k) consider(models_[k], scores[k]);
      ++it_;
    }
    if (stop() || it_ >= opt_.max_iterations) finish();
  }

 private:
  bool stop() const { return it_ >= opt_.min_iterations && it_ >= best_.needed; }

  void consider(const Model& m, const HypothesisScore& sc) {
    if (sc.cost > best_.cost + kLockstepMargin * sc.cost) return;  // ransac() rejects it too
    int inl = 0;
    const double cost = msacScore(est_, m, t2_, best_.cost, &inl);
    best_.offer(est_, opt_, t2_, m, cost, inl);
  }

  void finish() {
    done_ = true;
    res_.iterations = it_;
    if (best_.inliers < s) return;
    detail::finishRansac(est_, opt_, best_.model, best_.cost, &res_);
  }

  const Estimator& est_;
  RansacOptions opt_;
  int problem_;
  double t2_;
  SplitMix64 rng_;
  detail::RansacBest<Estimator> best_;
  std::optional<Model> prior_;
  bool prior_in_round_ = false;
  bool done_ = false;
  int it_ = 0, round_ = 0;
  std::vector<Model> models_;
  std::vector<int> sample_end_;  // models_ size after each sample of the round
  mutable std::vector<double> flat_;
  RansacResult<Model> res_;
};

// Runs the tasks to their end in lock-step rounds with one scorer call per round (the scorer's
// problems set by the caller). Proposals and replays run in parallel over the tasks; each task
// touches only its own state, so the results do not depend on the number of threads. Returns
// the number of rounds.
inline int runLockstep(const std::vector<LockstepTask*>& tasks, BatchScorer& scorer,
                       const LockstepOptions& o = {}) {
  o.check();
  int rounds = 0;
  HypothesisBatch batch;
  std::vector<LockstepTask*> live;
  std::vector<int> offset;
  for (;;) {
    live.clear();
    for (LockstepTask* t : tasks)
      if (!t->done()) live.push_back(t);
    if (live.empty()) return rounds;
    ++rounds;
    const auto n = static_cast<std::int64_t>(live.size());
    parallelForDynamic(
        n, [&](std::int64_t i) { live[i]->propose(o); }, 1);
    batch.clear();
    offset.assign(live.size(), 0);
    for (size_t i = 0; i < live.size(); ++i) {
      offset[i] = batch.size();
      live[i]->append(&batch);
    }
    const std::vector<HypothesisScore> scores =
        batch.size() > 0 ? scorer.score(batch) : std::vector<HypothesisScore>();
    require(static_cast<int>(scores.size()) == batch.size(),
            "runLockstep: the scorer returned " + std::to_string(scores.size()) + " scores for " +
                std::to_string(batch.size()) + " hypotheses");
    parallelForDynamic(
        n, [&](std::int64_t i) { live[i]->absorb(scores.data() + offset[i]); }, 1);
  }
}

}  // namespace vidmap::geometry
