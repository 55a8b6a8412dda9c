// The CUDA batched scorer against the CPU scorer (the oracle), for every model kind. Skips when
// no CUDA device is present. Inlier counts are equal except for residuals within a hair of the
// threshold (FMA may round them across it; with VIDMAP_CUDA_NO_FMA there are none), and costs
// agree to the rounding of a differently ordered sum.
#include <gtest/gtest.h>

#include <random>

#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/ransac_batched.h"
#include "vidmap/geometry/score_cuda.h"
#include "vidmap/geometry/scorer.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/gpu/device.h"

namespace vidmap::geometry {
namespace {

// Points whose residual is within a relative 1e-9 of the threshold, for some model.
int nearThreshold(ModelKind kind, const std::vector<double>& models,
                  const std::vector<double>& points, double t2, int model) {
  const int ms = modelStride(kind), ps = pointStride(kind);
  int n = 0;
  for (size_t i = 0; i < points.size() / ps; ++i) {
    const double r2 = batchResidualSq(kind, &models[model * ms], &points[i * ps]);
    n += std::abs(r2 - t2) <= 1e-9 * t2;
  }
  return n;
}

void compare(ModelKind kind, const std::vector<double>& models, const std::vector<double>& points,
             double t2) {
  const auto cpu = scoreHypothesesCpu(kind, models, points, t2);
  gpu::Context ctx;
  CudaHypothesisScorer gpu(ctx);
  gpu.setPoints(kind, points);
  const auto dev = gpu.score(models, t2);
  ASSERT_EQ(cpu.size(), dev.size());
  for (size_t m = 0; m < cpu.size(); ++m) {
    EXPECT_LE(std::abs(cpu[m].inliers - dev[m].inliers),
              nearThreshold(kind, models, points, t2, static_cast<int>(m)))
        << "model " << m;
    EXPECT_NEAR(dev[m].cost, cpu[m].cost, 1e-10 * cpu[m].cost + 1e-300) << "model " << m;
  }
  EXPECT_EQ(bestHypothesis(cpu), bestHypothesis(dev));
}

class CudaScorer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu::deviceCount() == 0) GTEST_SKIP() << gpu::noDeviceReason();
  }
};

TEST_F(CudaScorer, EpipolarModelsMatchTheCpu) {
  testing::SceneOptions o;
  o.num_points = 3000;  // not a multiple of the block size
  o.outlier_ratio = 0.5;
  const auto s = testing::makeTwoViewScene(o, 1);
  std::vector<double> points;
  for (size_t i = 0; i < s.px1.size(); ++i) {
    const Vec2 a = s.cam.normalize(s.px1[i]), b = s.cam.normalize(s.px2[i]);
    points.insert(points.end(), {a.x(), a.y(), b.x(), b.y()});
  }
  std::mt19937_64 rng(2);
  std::vector<double> models;
  for (int m = 0; m < 300; ++m) {
    const Pose rel{testing::randomRotation(rng, 3) * s.rel.R,
                   (s.rel.t + 0.05 * Vec3::Random()).normalized()};
    const Eigen::Matrix<double, 3, 3, Eigen::RowMajor> E = essentialFromPose(rel);
    models.insert(models.end(), E.data(), E.data() + 9);
  }
  compare(ModelKind::kEpipolar, models, points, std::pow(2.0 / 500, 2));
}

TEST_F(CudaScorer, ProjectionAndHomographyModelsMatchTheCpu) {
  testing::SceneOptions o;
  o.num_points = 5000;
  o.outlier_ratio = 0.3;
  const auto s = testing::makePnPScene(o, 3);
  std::vector<double> points;
  for (size_t i = 0; i < s.X.size(); ++i) {
    const Vec2 x = s.cam.normalize(s.px[i]);
    points.insert(points.end(), {s.X[i].x(), s.X[i].y(), s.X[i].z(), x.x(), x.y()});
  }
  std::mt19937_64 rng(4);
  std::vector<double> models;
  for (int m = 0; m < 200; ++m) {
    Eigen::Matrix<double, 3, 4, Eigen::RowMajor> P;
    P << testing::randomRotation(rng, 2) * s.pose.R, s.pose.t + 0.05 * Vec3::Random();
    models.insert(models.end(), P.data(), P.data() + 12);
  }
  compare(ModelKind::kProjection, models, points, std::pow(3.0 / 500, 2));

  std::vector<double> hp, hm;
  for (int i = 0; i < 4096; ++i) {
    const double x = (i % 64) * 10.0, y = (i / 64) * 7.5;
    hp.insert(hp.end(), {x, y, 1.01 * x + 3 + (i % 7) * 0.3, 0.99 * y - 2});
  }
  for (int m = 0; m < 64; ++m) hm.insert(hm.end(), {1.01 + 1e-4 * m, 0, 3, 0, 0.99, -2, 0, 0, 1});
  compare(ModelKind::kHomography, hm, hp, 4.0);
}

TEST_F(CudaScorer, EmptyBatchesAndBadSizes) {
  gpu::Context ctx;
  CudaHypothesisScorer gpu(ctx);
  gpu.setPoints(ModelKind::kEpipolar, {});
  EXPECT_TRUE(gpu.score({}, 1.0).empty());
  const auto s = gpu.score(std::vector<double>(9, 1.0), 1.0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].inliers, 0);
  EXPECT_THROW(gpu.score(std::vector<double>(10), 1.0), Error);
  EXPECT_THROW(gpu.setPoints(ModelKind::kProjection, std::vector<double>(4)), Error);
}

TEST_F(CudaScorer, BatchedRansacChoosesTheSameModelsAsWithTheCpuScorer) {
  testing::SceneOptions o;
  o.num_points = 4096;
  o.outlier_ratio = 0.6;
  const auto s = testing::makeTwoViewScene(o, 5);
  Vec2List x1, x2;
  for (size_t i = 0; i < s.px1.size(); ++i) {
    x1.push_back(s.cam.normalize(s.px1[i]));
    x2.push_back(s.cam.normalize(s.px2[i]));
  }
  EssentialEstimator est(x1, x2);
  RansacOptions ro;
  ro.max_error = 3.0 / 500;
  auto flatten = [](const Mat3R& m, std::vector<double>* f) { appendModel(m, f); };
  gpu::Context ctx;
  CudaHypothesisScorer scorer(ctx);
  scorer.setPoints(ModelKind::kEpipolar, est.packed());
  const auto g = ransacBatched(est, ro, 512, flatten, [&](const std::vector<double>& f, double t2) {
    return scorer.score(f, t2);
  });
  const auto c = ransacBatched(est, ro, 512, flatten, [&](const std::vector<double>& f, double t2) {
    return scoreHypothesesCpu(ModelKind::kEpipolar, f, est.packed(), t2);
  });
  ASSERT_TRUE(g.success && c.success);
  EXPECT_EQ(g.iterations, c.iterations);
  EXPECT_EQ(g.inlier_mask, c.inlier_mask);
  EXPECT_LT((g.model - c.model).norm(), 1e-9);
}

}  // namespace
}  // namespace vidmap::geometry
