// A robust estimation loop that drives any minimal solver (after COLMAP's optim/ransac.h and
// PoseLib's ransac_impl.h): MSAC scoring (Torr and Zisserman 2000), local optimisation of every
// new best model (LO-RANSAC: O. Chum, J. Matas, J. Kittler, "Locally optimized RANSAC", DAGM
// 2003), and adaptive stopping at a confidence (Hartley and Zisserman, eq. 4.18), between a
// minimum and a maximum number of iterations. Deterministic for a given seed on every platform:
// the generator and the sampling are written out here, not taken from <random>.
//
// An estimator provides:
//   using Model;  static constexpr int kSampleSize;
//   int numData() const;
//   void estimate(const int* sample, std::vector<Model>* models) const;   // minimal solver
//   double residualSq(const Model&, int i) const;                       // squared residual
//   void refine(const std::vector<int>& inliers, Model* model) const;   // non-minimal / LM
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "vidmap/core/check.h"
#include "vidmap/geometry/score.h"

namespace vidmap::geometry {

struct RansacOptions {
  double max_error = 4.0;     // inlier threshold on the residual (estimator's units)
  double confidence = 0.999;  // stop when an all-inlier sample was drawn with this probability
  int min_iterations = 20;
  int max_iterations = 5000;
  std::uint64_t seed = 0x5eed;
  bool local_optimization = true;
  int final_refinements = 2;  // refine on the inliers, re-select inliers, repeat
  // The fewest inliers a model needs to be of use (0: any). While the best model has fewer,
  // the stopping rule reads this count instead of the best's: after the samples that would
  // have drawn an all-inlier sample of a model with min_inliers at `confidence`, no model the
  // caller could accept is likely left unfound, so the search ends there rather than at
  // max_iterations. A pair that no geometry explains then costs the samples of its weakest
  // acceptable model, not the cap (on TUM fr1-desk at 4 fps a quarter of the pairs, each
  // 5000 samples of E, F and H: docs/benchmarks.md, "Pair verification's hopeless pairs").
  int min_inliers = 0;

  void check() const {
    checkRange("ransac.max_error", max_error, 1e-12, 1e12);
    checkRange("ransac.confidence", confidence, 0.0, 1.0 - 1e-12);
    checkRange("ransac.min_iterations", min_iterations, 1, 10000000);
    checkRange("ransac.max_iterations", max_iterations, min_iterations, 10000000);
    checkRange("ransac.final_refinements", final_refinements, 0, 100);
    checkRange("ransac.min_inliers", min_inliers, 0, 1 << 30);
  }
};

template <class Model>
struct RansacResult {
  bool success = false;
  Model model{};
  std::vector<char> inlier_mask;
  int num_inliers = 0;
  double cost = std::numeric_limits<double>::infinity();  // MSAC cost of the model
  int iterations = 0;
};

// splitmix64 (S. Vigna): a small, fast, fully specified generator.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by Lemire's multiply-shift with rejection.
  std::uint32_t below(std::uint32_t n) {
    for (;;) {
      const std::uint64_t m = (next() >> 32) * static_cast<std::uint64_t>(n);
      const std::uint32_t low = static_cast<std::uint32_t>(m);
      if (low >= n || low >= (static_cast<std::uint32_t>(-n) % n))
        return static_cast<std::uint32_t>(m >> 32);
    }
  }

 private:
  std::uint64_t s_;
};

// The number of iterations after which an all-inlier sample of size s has been drawn with the
// given confidence, for an inlier ratio w.
inline int ransacIterationsNeeded(double w, int s, double confidence, int max_iterations) {
  if (w >= 1.0) return 0;
  if (w <= 0.0) return max_iterations;
  const double p_good = std::pow(w, s);
  if (p_good <= 0) return max_iterations;
  const double denom = std::log1p(-p_good);
  if (denom >= 0) return max_iterations;
  const double n = std::log(1.0 - confidence) / denom;
  return n >= max_iterations ? max_iterations : static_cast<int>(std::ceil(n));
}

// MSAC cost of a model, stopping early once it exceeds `bound`.
template <class Estimator>
double msacScore(const Estimator& est, const typename Estimator::Model& m, double t2, double bound,
                 int* inliers) {
  const int n = est.numData();
  double cost = 0;
  int count = 0;
  for (int i = 0; i < n; ++i) {
    const double r2 = est.residualSq(m, i);
    if (r2 < t2) ++count;
    cost += msacCost(r2, t2);
    if (cost > bound) {
      *inliers = count;
      return std::numeric_limits<double>::infinity();
    }
  }
  *inliers = count;
  return cost;
}

template <class Estimator>
std::vector<int> inlierIndices(const Estimator& est, const typename Estimator::Model& m,
                               double t2) {
  std::vector<int> idx;
  for (int i = 0; i < est.numData(); ++i)
    if (est.residualSq(m, i) < t2) idx.push_back(i);
  return idx;
}

namespace detail {

// s distinct indices of [0, n) (rejection; s << n in practice).
inline void drawSample(SplitMix64& rng, int n, int s, int* sample) {
  for (int k = 0; k < s; ++k) {
    bool repeat;
    do {
      sample[k] = static_cast<int>(rng.below(static_cast<std::uint32_t>(n)));
      repeat = false;
      for (int j = 0; j < k; ++j) repeat |= sample[j] == sample[k];
    } while (repeat);
  }
}

// The best hypothesis so far, shared by ransac() and ransacBatched(): a scored hypothesis that
// beats it becomes the best, is locally optimised when it also has more inliers (the costly
// step), and sets the adaptive iteration count.
template <class Estimator>
struct RansacBest {
  using Model = typename Estimator::Model;
  Model model{};
  double cost = std::numeric_limits<double>::infinity();
  int inliers = 0;
  int needed;  // iterations the stopping rule asks for

  RansacBest(const RansacOptions& opt, int n) : needed(neededFor(opt, 0, n)) {}

  // The stopping rule at the best's inlier count, or at opt.min_inliers while it is below.
  static int neededFor(const RansacOptions& opt, int inliers, int n) {
    const int count = std::max(inliers, opt.min_inliers);
    if (count <= 0 || n <= 0) return opt.max_iterations;
    return ransacIterationsNeeded(std::min(1.0, static_cast<double>(count) / n),
                                  Estimator::kSampleSize, opt.confidence, opt.max_iterations);
  }

  void offer(const Estimator& est, const RansacOptions& opt, double t2, const Model& m,
             double m_cost, int m_inliers) {
    constexpr int s = Estimator::kSampleSize;
    if (!(m_cost < cost)) return;
    const int previous_inliers = inliers;
    model = m;
    cost = m_cost;
    inliers = m_inliers;
    if (opt.local_optimization && inliers > s && inliers > previous_inliers) {
      Model lo = m;
      est.refine(inlierIndices(est, m, t2), &lo);
      int lo_inl = 0;
      const double lo_cost = msacScore(est, lo, t2, cost, &lo_inl);
      if (lo_cost < cost) {
        model = lo;
        cost = lo_cost;
        inliers = lo_inl;
      }
    }
    needed = neededFor(opt, inliers, est.numData());
  }
};

// Final refinement on the inliers (kept only when the MSAC cost does not grow), then the mask.
template <class Estimator>
void finishRansac(const Estimator& est, const RansacOptions& opt, typename Estimator::Model best,
                  double best_cost, RansacResult<typename Estimator::Model>* res) {
  constexpr int s = Estimator::kSampleSize;
  const int n = est.numData();
  const double t2 = opt.max_error * opt.max_error;
  std::vector<int> last;
  for (int r = 0; r < opt.final_refinements; ++r) {
    const std::vector<int> inl = inlierIndices(est, best, t2);
    if (static_cast<int>(inl.size()) <= s || inl == last) break;  // converged
    last = inl;
    auto m = best;
    est.refine(inl, &m);
    int count = 0;
    const double cost = msacScore(est, m, t2, std::numeric_limits<double>::infinity(), &count);
    if (!(cost <= best_cost)) break;
    best = m;
    best_cost = cost;
  }
  res->success = true;
  res->model = best;
  res->cost = best_cost;
  res->inlier_mask.assign(n, 0);
  res->num_inliers = 0;
  for (int i = 0; i < n; ++i) {
    res->inlier_mask[i] = est.residualSq(best, i) < t2;
    res->num_inliers += res->inlier_mask[i];
  }
}

}  // namespace detail

// `prior`, when given, is a hypothesis scored (and locally optimised) before any sample: a
// model known from an earlier stage (the guide's E of a video pair). Its inlier ratio sets the
// adaptive count at once, so a good prior ends the search after the samples that the stopping
// rule still asks for (and at least min_iterations).
template <class Estimator>
RansacResult<typename Estimator::Model> ransac(const Estimator& est, const RansacOptions& opt,
                                               const typename Estimator::Model* prior = nullptr) {
  using Model = typename Estimator::Model;
  constexpr int s = Estimator::kSampleSize;
  opt.check();
  RansacResult<Model> res;
  const int n = est.numData();
  if (n < s) return res;
  const double t2 = opt.max_error * opt.max_error;
  SplitMix64 rng(opt.seed);
  std::vector<Model> models;
  int sample[s];
  detail::RansacBest<Estimator> best(opt, n);
  // Scores a hypothesis and offers it as the best.
  auto consider = [&](const Model& m) {
    int inl = 0;
    const double cost = msacScore(est, m, t2, best.cost, &inl);
    best.offer(est, opt, t2, m, cost, inl);
  };
  if (prior) consider(*prior);
  int it = 0;
  for (; it < opt.max_iterations; ++it) {
    if (it >= opt.min_iterations && it >= best.needed) break;
    detail::drawSample(rng, n, s, sample);
    models.clear();
    est.estimate(sample, &models);
    for (const Model& m : models) consider(m);
  }
  res.iterations = it;
  if (best.inliers < s) return res;
  detail::finishRansac(est, opt, best.model, best.cost, &res);
  return res;
}

}  // namespace vidmap::geometry
