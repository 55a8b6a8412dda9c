// The batched verifier (lock-step RANSACs, one scorer call per round) against the per-pair
// oracle estimateRelativePose and against the synthetic truth: the same geometry bit for bit
// on every branch of the verification, whatever the round sizes; the lock-step RANSAC equals
// ransac() for E, F, H and absolute pose problems scored in one batch.
#include <gtest/gtest.h>

#include <set>

#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/two_view_batch.h"
#include "vidmap/geometry/two_view_batch_cases.h"

namespace vidmap::geometry {
namespace {

using testing::makeBatchCases;

TEST(TwoViewBatch, EqualsThePerPairVerificationOnEveryBranch) {
  const auto cases = makeBatchCases();
  std::vector<TwoViewPair> pairs;
  for (const auto& c : cases) pairs.push_back(c.pair);
  CpuBatchScorer scorer;
  TwoViewBatchStats stats;
  const auto batched = estimateRelativePoses(pairs, scorer, {}, &stats);
  ASSERT_EQ(batched.size(), pairs.size());
  std::set<TwoViewConfig> configs;
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto& p = pairs[k];
    const TwoViewGeometry one =
        estimateRelativePose(*p.pts1, *p.pts2, p.cam1, p.cam2, p.options,
                             p.essential_prior ? &*p.essential_prior : nullptr);
    testing::expectSameGeometry(batched[k], one, "pair " + std::to_string(k));
    configs.insert(one.config);
    if (cases[k].truth_checked) {
      ASSERT_EQ(one.config, TwoViewConfig::kCalibrated) << k << ": " << one.message;
      EXPECT_LT(testing::rotationErrorDeg(one.relative.R, cases[k].scene.rel.R), 0.5) << k;
      EXPECT_LT(testing::directionErrorDeg(one.relative.t, cases[k].scene.rel.t), 3.0) << k;
    }
  }
  // Every branch was exercised.
  for (auto c : {TwoViewConfig::kCalibrated, TwoViewConfig::kUncalibrated, TwoViewConfig::kPlanar,
                 TwoViewConfig::kPanoramic, TwoViewConfig::kDegenerate})
    EXPECT_TRUE(configs.count(c)) << toString(c);
  EXPECT_GT(stats.rounds, 1);
  EXPECT_EQ(stats.rounds, scorer.calls());
}

TEST(TwoViewBatch, RoundSizesDoNotChangeTheResult) {
  const auto cases = makeBatchCases();
  std::vector<TwoViewPair> pairs;
  for (const auto& c : cases) pairs.push_back(c.pair);
  CpuBatchScorer a, b;
  LockstepOptions small;
  small.first_round_samples = 1;
  small.max_round_samples = 3;
  LockstepOptions large;
  large.first_round_samples = 500;
  large.max_round_samples = 5000;
  TwoViewBatchStats sa, sb;
  const auto ga = estimateRelativePoses(pairs, a, small, &sa);
  const auto gb = estimateRelativePoses(pairs, b, large, &sb);
  for (size_t k = 0; k < pairs.size(); ++k)
    testing::expectSameGeometry(ga[k], gb[k], "pair " + std::to_string(k));
  EXPECT_GT(sa.rounds, sb.rounds);
}

// E, H, F and absolute-pose problems in the same rounds, each equal to its own ransac().
TEST(RansacLockstep, EachProblemEqualsItsSequentialRansac) {
  testing::SceneOptions o;
  o.num_points = 400;
  o.outlier_ratio = 0.4;
  const auto s = testing::makeTwoViewScene(o, 41);
  Vec2List x1, x2;
  for (size_t i = 0; i < s.px1.size(); ++i) {
    x1.push_back(s.cam.normalize(s.px1[i]));
    x2.push_back(s.cam.normalize(s.px2[i]));
  }
  const auto q = testing::makePnPScene(o, 42);
  Vec2List xn;
  for (const auto& p : q.px) xn.push_back(q.cam.normalize(p));
  EssentialEstimator e(x1, x2);
  HomographyEstimator h(s.px1, s.px2);
  FundamentalEstimator f(s.px1, s.px2);
  AbsolutePoseEstimator a(xn, q.X);
  RansacOptions rn, rp;
  rn.max_error = 2.0 / 500;
  rp.max_error = 2.0;
  ScoreBatch batch;
  const int pe = batch.add(ModelKind::kEpipolar, e.packed(), rn.max_error * rn.max_error);
  const int ph = batch.add(ModelKind::kHomography, h.packed(), rp.max_error * rp.max_error);
  const int pf = batch.addSharing(ph, ModelKind::kEpipolar, rp.max_error * rp.max_error);
  const int pa = batch.add(ModelKind::kProjection, a.packed(), rn.max_error * rn.max_error);
  CpuBatchScorer scorer;
  scorer.setProblems(batch);
  RansacTask<EssentialEstimator> te(e, rn, pe);
  RansacTask<HomographyEstimator> th(h, rp, ph);
  RansacTask<FundamentalEstimator> tf(f, rp, pf);
  RansacTask<AbsolutePoseEstimator> ta(a, rn, pa);
  EXPECT_GT(runLockstep({&te, &th, &tf, &ta}, scorer), 1);
  const auto check = [](const auto& lock, const auto& seq) {
    EXPECT_EQ(lock.success, seq.success);
    EXPECT_EQ(lock.iterations, seq.iterations);
    EXPECT_EQ(lock.inlier_mask, seq.inlier_mask);
    EXPECT_EQ(lock.cost, seq.cost);
  };
  check(te.result(), ransac(e, rn));
  check(th.result(), ransac(h, rp));
  check(tf.result(), ransac(f, rp));
  check(ta.result(), ransac(a, rn));
  EXPECT_EQ(te.result().model, ransac(e, rn).model);
  EXPECT_EQ(ta.result().model.P, ransac(a, rn).model.P);
  // The absolute pose against the truth.
  EXPECT_LT(testing::rotationErrorDeg(ta.result().model.pose.R, q.pose.R), 0.3);
}

TEST(RansacLockstep, ScorerErrorsAndBadOptions) {
  ScoreBatch batch;
  EXPECT_THROW(batch.add(ModelKind::kEpipolar, std::vector<double>(5), 1.0), Error);
  EXPECT_THROW(batch.addSharing(3, ModelKind::kEpipolar, 1.0), Error);
  HypothesisBatch hyp;
  hyp.add(0, std::vector<double>(9, 1.0).data(), 9);
  EXPECT_THROW(scoreBatchCpu(batch, hyp), Error);  // names no problem
  LockstepOptions o;
  o.max_round_samples = 0;
  EXPECT_THROW(o.check(), Error);
}

}  // namespace
}  // namespace vidmap::geometry
