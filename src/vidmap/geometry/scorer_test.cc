// The batched CPU scorer equals the RANSAC loop's own scoring (the same residual functions),
// and checks its input sizes.
#include <gtest/gtest.h>

#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/ransac.h"
#include "vidmap/geometry/scorer.h"
#include "vidmap/geometry/test_scene.h"

namespace vidmap::geometry {
namespace {

TEST(Scorer, EqualsTheEstimatorScoreForEssentialModels) {
  testing::SceneOptions o;
  o.outlier_ratio = 0.4;
  const auto s = testing::makeTwoViewScene(o, 1);
  Vec2List x1, x2;
  for (size_t i = 0; i < s.px1.size(); ++i) {
    x1.push_back(s.cam.normalize(s.px1[i]));
    x2.push_back(s.cam.normalize(s.px2[i]));
  }
  EssentialEstimator est(x1, x2);
  std::vector<Mat3R> models;
  models.push_back(essentialFromPose({s.rel.R, s.rel.t.normalized()}));
  for (int k = 0; k < 20; ++k) {
    const int sample[5] = {k, k + 1, k + 2, k + 3, k + 4};
    std::vector<Mat3R> m;
    est.estimate(sample, &m);
    models.insert(models.end(), m.begin(), m.end());
  }
  std::vector<double> flat;
  for (const auto& m : models) flat.insert(flat.end(), m.data(), m.data() + 9);
  const double t2 = std::pow(4.0 / 500, 2);
  const auto scores = scoreHypothesesCpu(ModelKind::kEpipolar, flat, est.packed(), t2);
  ASSERT_EQ(scores.size(), models.size());
  for (size_t k = 0; k < models.size(); ++k) {
    int inl = 0;
    const double cost = msacScore(est, models[k], t2, 1e300, &inl);
    EXPECT_EQ(scores[k].cost, cost);  // same functions, same order: bit for bit
    EXPECT_EQ(scores[k].inliers, inl);
  }
  EXPECT_EQ(bestHypothesis(scores), 0);  // the truth wins
}

TEST(Scorer, ProjectionModelsCountPointsBehindAsOutliers) {
  // P = [I | 0]; a point behind the camera costs the full threshold.
  const std::vector<double> P = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  const std::vector<double> pts = {0, 0, 2,  0,   0, /* exact */
                                   0, 0, -2, 0,   0, /* behind */
                                   1, 0, 1,  0.9, 0 /* 0.1 off */};
  const auto s = scoreHypothesesCpu(ModelKind::kProjection, P, pts, 0.25);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].inliers, 2);
  EXPECT_NEAR(s[0].cost, 0 + 0.25 + 0.01, 1e-15);
}

TEST(Scorer, HomographyTransferError) {
  const std::vector<double> H = {2, 0, 1, 0, 2, 0, 0, 0, 1};
  const std::vector<double> pts = {1, 1, 3, 2, 1, 1, 4, 2};
  const auto s = scoreHypothesesCpu(ModelKind::kHomography, H, pts, 4.0);
  EXPECT_EQ(s[0].inliers, 2);
  EXPECT_DOUBLE_EQ(s[0].cost, 1.0);
}

TEST(Scorer, BadSizesAreErrors) {
  EXPECT_THROW(scoreHypothesesCpu(ModelKind::kEpipolar, std::vector<double>(10), {}, 1), Error);
  EXPECT_THROW(scoreHypothesesCpu(ModelKind::kProjection, std::vector<double>(12),
                                  std::vector<double>(7), 1),
               Error);
  EXPECT_THROW(scoreHypothesesCpu(ModelKind::kEpipolar, {}, {}, 0), Error);
  EXPECT_EQ(bestHypothesis({}), -1);
}

}  // namespace
}  // namespace vidmap::geometry
