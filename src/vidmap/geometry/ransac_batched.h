// RANSAC with batched hypothesis scoring, for the GPU (the design's pair verification: a batch
// of 256-512 hypotheses costs one launch instead of one launch each; docs/architecture.md, Batched
// RANSAC on the GPU). Each round draws `batch_samples` minimal samples, solves them all, scores
// every model with one call of `score` (scoreHypothesesCpu, or CudaHypothesisScorer::score), keeps
// the best, locally optimises it on the CPU, and re-checks the adaptive stopping rule between
// rounds; the final refinement is that of ransac(). For a given seed and batch size the result does
// not depend on the scorer, only on the scores it returns.
#pragma once

#include <vector>

#include "vidmap/geometry/ransac.h"
#include "vidmap/geometry/scorer.h"

namespace vidmap::geometry {

// score(models_flat, threshold_sq) -> one HypothesisScore per model; flatten(model, &flat)
// appends a model's row-major entries (the layout of score.h).
template <class Estimator, class Flatten, class Score>
RansacResult<typename Estimator::Model> ransacBatched(const Estimator& est,
                                                      const RansacOptions& opt, int batch_samples,
                                                      Flatten&& flatten, Score&& score) {
  using Model = typename Estimator::Model;
  constexpr int s = Estimator::kSampleSize;
  opt.check();
  checkRange("ransac.batch_samples", batch_samples, 1, 65535);
  RansacResult<Model> res;
  const int n = est.numData();
  if (n < s) return res;
  const double t2 = opt.max_error * opt.max_error;
  SplitMix64 rng(opt.seed);
  std::vector<Model> models;
  std::vector<double> flat;
  int sample[s];
  detail::RansacBest<Estimator> best(opt, n);
  int it = 0;
  while (it < opt.max_iterations && !(it >= opt.min_iterations && it >= best.needed)) {
    const int count = std::min(batch_samples, opt.max_iterations - it);
    models.clear();
    for (int b = 0; b < count; ++b) {
      detail::drawSample(rng, n, s, sample);
      est.estimate(sample, &models);
    }
    it += count;
    if (models.empty()) continue;
    flat.clear();
    for (const Model& m : models) flatten(m, &flat);
    const std::vector<HypothesisScore> scores = score(flat, t2);
    const int k = bestHypothesis(scores);
    if (k >= 0) best.offer(est, opt, t2, models[k], scores[k].cost, scores[k].inliers);
  }
  res.iterations = it;
  if (best.inliers < s) return res;
  detail::finishRansac(est, opt, best.model, best.cost, &res);
  return res;
}

}  // namespace vidmap::geometry
