#include "vidmap/geometry/two_view_batch.h"

#include <memory>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/geometry/two_view_steps.h"

namespace vidmap::geometry {

namespace {

// A pair's state across the phases. Estimators keep references to the points: the pair's
// storage does not move (held by unique_ptr).
struct PairState {
  const TwoViewPair* in = nullptr;
  detail::TwoViewSetup setup;
  TwoViewGeometry early;  // the result when setup refuses the pair
  bool ok = false;
  std::optional<EssentialEstimator> e;
  std::optional<FundamentalEstimator> f;
  std::optional<HomographyEstimator> h;
  int pe = -1, pf = -1, ph = -1;  // problems in the score batch
  std::unique_ptr<RansacTask<EssentialEstimator>> te;
  std::unique_ptr<RansacTask<FundamentalEstimator>> tf;
  std::unique_ptr<RansacTask<HomographyEstimator>> th;
};

template <class T>
RansacResult<Mat3R> resultOf(const std::unique_ptr<T>& t) {
  return t ? t->result() : RansacResult<Mat3R>();
}

}  // namespace

std::vector<TwoViewGeometry> estimateRelativePoses(const std::vector<TwoViewPair>& pairs,
                                                   BatchScorer& scorer,
                                                   const LockstepOptions& lockstep,
                                                   TwoViewBatchStats* stats) {
  lockstep.check();
  const auto np = static_cast<std::int64_t>(pairs.size());
  std::vector<std::unique_ptr<PairState>> st(pairs.size());
  for (auto& p : st) p = std::make_unique<PairState>();
  // Checks and normalisation (the first failing pair's error is thrown).
  parallelFor(np, [&](std::int64_t k) {
    const TwoViewPair& in = pairs[k];
    require(in.pts1 && in.pts2,
            "estimateRelativePoses: pair " + std::to_string(k) + " has no points");
    PairState& s = *st[k];
    s.in = &in;
    s.ok = detail::setupTwoView(*in.pts1, *in.pts2, in.cam1, in.cam2, in.options,
                                in.essential_prior.has_value(), &s.setup, &s.early);
    if (!s.ok) return;
    s.e.emplace(s.setup.x1, s.setup.x2);
    if (in.options.estimate_fundamental && s.setup.n >= 7) s.f.emplace(*in.pts1, *in.pts2);
    if (in.options.estimate_homography) s.h.emplace(*in.pts1, *in.pts2);
  });
  ScoreBatch batch;
  for (auto& sp : st) {
    PairState& s = *sp;
    if (!s.ok) continue;
    s.pe =
        batch.add(ModelKind::kEpipolar, s.e->packed(), s.setup.e.max_error * s.setup.e.max_error);
    const double t2 = s.setup.fh.max_error * s.setup.fh.max_error;
    if (s.h) s.ph = batch.add(ModelKind::kHomography, s.h->packed(), t2);
    if (s.f)  // the same pixel points as H's, when there are
      s.pf = s.h ? batch.addSharing(s.ph, ModelKind::kEpipolar, t2)
                 : batch.add(ModelKind::kEpipolar, s.f->packed(), t2);
  }
  scorer.setProblems(batch);
  const long calls0 = scorer.calls(), hyp0 = scorer.hypotheses();
  // Phase 1: E (with its prior) of every pair, and H and F where they do not wait for E.
  std::vector<LockstepTask*> tasks;
  for (auto& sp : st) {
    PairState& s = *sp;
    if (!s.ok) continue;
    Mat3R prior;
    if (s.in->essential_prior) prior = *s.in->essential_prior;
    s.te = std::make_unique<RansacTask<EssentialEstimator>>(
        *s.e, s.setup.e, s.pe, s.in->essential_prior ? &prior : nullptr);
    tasks.push_back(s.te.get());
    if (s.h && !detail::homographyWaitsForEssential(s.in->options)) {
      s.th = std::make_unique<RansacTask<HomographyEstimator>>(*s.h, s.setup.fh, s.ph);
      tasks.push_back(s.th.get());
    }
    if (s.f && s.in->options.fundamental == TwoViewOptions::Fundamental::kAlways) {
      s.tf = std::make_unique<RansacTask<FundamentalEstimator>>(*s.f, s.setup.fh, s.pf);
      tasks.push_back(s.tf.get());
    }
  }
  runLockstep(tasks, scorer, lockstep);
  // Phase 2: F where E failed, and H where its budget follows from E's inliers.
  tasks.clear();
  for (auto& sp : st) {
    PairState& s = *sp;
    if (!s.ok) continue;
    if (s.h && !s.th) {
      s.th = std::make_unique<RansacTask<HomographyEstimator>>(
          *s.h, detail::homographyOptions(s.in->options, s.setup, s.te->result()), s.ph);
      tasks.push_back(s.th.get());
    }
    if (s.tf || !s.f) continue;
    if (!detail::needsFundamental(s.in->options, s.setup.n, s.te->result())) continue;
    s.tf = std::make_unique<RansacTask<FundamentalEstimator>>(*s.f, s.setup.fh, s.pf);
    tasks.push_back(s.tf.get());
  }
  runLockstep(tasks, scorer, lockstep);
  if (stats) {
    stats->rounds = static_cast<int>(scorer.calls() - calls0);
    stats->hypotheses = scorer.hypotheses() - hyp0;
  }
  // The model choice, pose and triangulation of each pair.
  std::vector<TwoViewGeometry> out(pairs.size());
  parallelForDynamic(
      np,
      [&](std::int64_t k) {
        PairState& s = *st[k];
        if (!s.ok) {
          out[k] = std::move(s.early);
          return;
        }
        out[k] =
            detail::finishTwoView(*s.in->pts1, *s.in->pts2, s.in->cam1, s.in->cam2, s.in->options,
                                  s.setup, *s.e, resultOf(s.te), resultOf(s.tf), resultOf(s.th));
      },
      1);
  return out;
}

}  // namespace vidmap::geometry
