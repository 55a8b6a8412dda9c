// The CUDA batch scorer against the CPU one (the oracle) on a keyframe's worth of mixed
// problems, and the batched verifier on the GPU against the per-pair CPU verification. Skips
// without a CUDA device. Costs differ from the CPU sums only by the order of the additions
// (and FMA in the default build): well inside the lock-step margin (kLockstepMargin, 1e-9
// relative), so the verified geometry is the CPU's bit for bit with or without FMA. Inlier
// counts are equal except for residuals within a hair of the threshold (FMA may round them
// across it; with VIDMAP_CUDA_NO_FMA there are none).
#include <gtest/gtest.h>

#include <cmath>

#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/score_batch_cuda.h"
#include "vidmap/geometry/two_view_batch_cases.h"
#include "vidmap/gpu/device.h"

namespace vidmap::geometry {
namespace {

class CudaBatchScorerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu::deviceCount() == 0) GTEST_SKIP() << gpu::noDeviceReason();
  }
};

TEST_F(CudaBatchScorerTest, MixedProblemsMatchTheCpuWithinTheLockstepMargin) {
  const auto cases = testing::makeBatchCases();
  ScoreBatch batch;
  HypothesisBatch hyp;
  int near = 0;
  for (const auto& c : cases) {
    if (c.scene.px1.size() < 20) continue;
    Vec2List x1, x2;
    for (size_t i = 0; i < c.scene.px1.size(); ++i) {
      x1.push_back(c.pair.cam1.normalize(c.scene.px1[i]));
      x2.push_back(c.pair.cam2.normalize(c.scene.px2[i]));
    }
    EssentialEstimator e(x1, x2);
    HomographyEstimator h(c.scene.px1, c.scene.px2);
    const double te = std::pow(4.0 / 500, 2), tp = 16.0;
    const int pe = batch.add(ModelKind::kEpipolar, e.packed(), te);
    const int ph = batch.add(ModelKind::kHomography, h.packed(), tp);
    const int pf = batch.addSharing(ph, ModelKind::kEpipolar, tp);
    std::vector<Mat3R> models;
    for (int k = 0; k + 5 < 60; k += 3) {
      const int sample[7] = {k, k + 1, k + 2, k + 3, k + 4, k + 5, k + 6};
      models.clear();
      e.estimate(sample, &models);
      for (const auto& m : models) hyp.add(pe, m.data(), 9);
      models.clear();
      h.estimate(sample, &models);
      for (const auto& m : models) hyp.add(ph, m.data(), 9);
      models.clear();
      FundamentalEstimator(c.scene.px1, c.scene.px2).estimate(sample, &models);
      for (const auto& m : models) hyp.add(pf, m.data(), 9);
    }
  }
  const auto cpu = scoreBatchCpu(batch, hyp);
  gpu::Context ctx;
  CudaBatchScorer dev(ctx);
  dev.setProblems(batch);
  const auto gpu = dev.score(hyp);
  ASSERT_EQ(gpu.size(), cpu.size());
  ASSERT_GT(cpu.size(), 300u);
  double worst = 0;
  for (size_t k = 0; k < cpu.size(); ++k) {
    const BatchProblem& p = batch.problems[hyp.problem[k]];
    int close = 0;  // residuals within 1e-9 of the threshold
    for (int i = 0; i < p.num_points; ++i) {
      const double r2 = batchResidualSq(p.kind, &hyp.models[k * kBatchModelStride],
                                        &batch.points[p.offset + i * pointStride(p.kind)]);
      close += std::abs(r2 - p.threshold_sq) <= 1e-9 * p.threshold_sq;
    }
    near += close;
    EXPECT_LE(std::abs(gpu[k].inliers - cpu[k].inliers), close) << k;
    const double rel = std::abs(gpu[k].cost - cpu[k].cost) / cpu[k].cost;
    worst = std::max(worst, rel);
    EXPECT_LT(rel, 1e-2 * kLockstepMargin) << k;  // a hundred times inside the margin
  }
  RecordProperty("worst_relative_cost_difference", std::to_string(worst));
  std::printf("CUDA batch scorer: %zu hypotheses, worst relative cost difference %.3g\n",
              cpu.size(), worst);
}

TEST_F(CudaBatchScorerTest, BatchedVerificationEqualsThePerPairCpuPath) {
  const auto cases = testing::makeBatchCases();
  std::vector<TwoViewPair> pairs;
  for (const auto& c : cases) pairs.push_back(c.pair);
  gpu::Context ctx;
  CudaBatchScorer dev(ctx);
  TwoViewBatchStats stats;
  const auto g = estimateRelativePoses(pairs, dev, {}, &stats);
  ASSERT_EQ(g.size(), pairs.size());
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto& p = pairs[k];
    const TwoViewGeometry one =
        estimateRelativePose(*p.pts1, *p.pts2, p.cam1, p.cam2, p.options,
                             p.essential_prior ? &*p.essential_prior : nullptr);
    testing::expectSameGeometry(g[k], one, "pair " + std::to_string(k));
  }
  EXPECT_EQ(stats.rounds, dev.calls());
}

TEST_F(CudaBatchScorerTest, EmptyBatchesAndBadInput) {
  gpu::Context ctx;
  CudaBatchScorer dev(ctx);
  dev.setProblems({});
  EXPECT_TRUE(dev.score({}).empty());
  HypothesisBatch hyp;
  hyp.add(0, std::vector<double>(9, 1.0).data(), 9);
  EXPECT_THROW(dev.score(hyp), Error);  // no problem 0
  ScoreBatch bad;
  bad.problems.push_back({ModelKind::kEpipolar, 0, 10, 1.0});  // no points
  EXPECT_THROW(dev.setProblems(bad), Error);
}

}  // namespace
}  // namespace vidmap::geometry
