#include "vidmap/sfm/trajectory_eval.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "vidmap/core/data_dir.h"
#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

namespace vidmap::sfm {
namespace {

// A straight path (collinear centres, where Umeyama's alignment is degenerate): the
// orientations fix the rotation and least squares the scale and offset of a known similarity.
TEST(TrajectoryEval, OrientationAlignmentRecoversAKnownSimilarityOnAStraightPath) {
  Sim3 truth;
  truth.s = 0.4;
  truth.R = Eigen::AngleAxisd(-1.1, Eigen::Vector3d(0.3, -1, 2).normalized()).toRotationMatrix();
  truth.t = {-3, 0.25, 7};
  std::vector<PosePair> pairs;
  for (int i = 0; i < 20; ++i) {
    StampedPose e;
    e.c = {0.3 * i, 0, 0};
    e.q_wc = Eigen::Quaterniond(Eigen::AngleAxisd(0.02 * i, Eigen::Vector3d::UnitY()));
    StampedPose g = e;
    g.c = truth.apply(e.c);
    g.q_wc = Eigen::Quaterniond(truth.R) * e.q_wc;
    pairs.push_back({e, g});
  }
  EXPECT_THROW(evaluateTrajectory(pairs), Error);
  const Sim3 a = alignByOrientations(pairs);
  EXPECT_NEAR(a.s, 0.4, 1e-12);
  EXPECT_LT((a.R - truth.R).norm(), 1e-12);
  EXPECT_LT((a.t - truth.t).norm(), 1e-12);
  EXPECT_THROW(alignByOrientations({}), Error);
}

// A known similarity applied to a random trajectory: alignment recovers it and the ATE of
// the aligned trajectory is the noise we added.
TEST(TrajectoryEval, RecoversAKnownSimilarityAndNoiseLevel) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n01(0, 1);
  Sim3 truth;
  truth.s = 2.5;
  truth.R = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  truth.t = {1, -2, 0.5};
  std::vector<PosePair> pairs;
  for (int i = 0; i < 200; ++i) {
    StampedPose e;
    e.t = i * 0.1;
    e.c = {std::cos(i * 0.05) * 3, std::sin(i * 0.05) * 2, 0.01 * i};
    e.q_wc = Eigen::Quaterniond(Eigen::AngleAxisd(i * 0.01, Eigen::Vector3d::UnitY()));
    StampedPose g = e;
    g.c = truth.apply(e.c);
    g.q_wc = Eigen::Quaterniond(truth.R) * e.q_wc;
    pairs.push_back({e, g});
  }
  auto r = evaluateTrajectory(pairs);
  EXPECT_NEAR(r.alignment.s, 2.5, 1e-9);
  EXPECT_LT((r.alignment.R - truth.R).norm(), 1e-9);
  EXPECT_LT(r.ate_rmse, 1e-9);
  EXPECT_LT(r.rot_rmse_deg, 1e-6);

  const double sigma = 0.01;
  for (auto& p : pairs) p.gt.c += sigma * Eigen::Vector3d(n01(rng), n01(rng), n01(rng));
  r = evaluateTrajectory(pairs);
  // The RMSE of 3D Gaussian noise is sigma * sqrt(3), less the 7 fitted degrees of freedom.
  EXPECT_NEAR(r.ate_rmse, sigma * std::sqrt(3.0), 0.15 * sigma * std::sqrt(3.0));
  EXPECT_NEAR(r.alignment.s, 2.5, 0.01);
}

TEST(TrajectoryEval, CollinearCentresAreDegenerate) {
  std::vector<Eigen::Vector3d> a, b;
  for (int i = 0; i < 10; ++i) {
    a.push_back({double(i), 0, 0});
    b.push_back({double(2 * i), 1, 0});
  }
  EXPECT_THROW(alignUmeyama(a, b), Error);
  EXPECT_THROW(alignUmeyama({a[0], a[1]}, {b[0], b[1]}), Error);
}

TEST(TrajectoryEval, AssociationInterpolatesBetweenNeighbours) {
  std::vector<StampedPose> gt(2), est(3);
  gt[0].t = 1.0;
  gt[0].c = {0, 0, 0};
  gt[1].t = 1.01;
  gt[1].c = {1, 0, 0};
  est[0].t = 1.0025;
  est[1].t = 5.0;  // no truth near: dropped
  est[2].t = 0.995;
  auto p = associate(est, gt, 0.02);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NEAR(p[0].gt.c.x(), 0.25, 1e-9);
  EXPECT_NEAR(p[1].gt.c.x(), 0.0, 1e-12);
}

TEST(TrajectoryEval, ReadsTumGroundTruthAndRejectsMalformedLines) {
  auto bad = testFolder("traj") / "bad.txt";
  std::ofstream(bad) << "# header\n1.0 0 0 0 0 0 0 1\n2.0 0 0 zero\n";
  EXPECT_THROW(readTumTrajectory(bad), Error);
  EXPECT_THROW(readTumTrajectory("/nonexistent/traj.txt"), Error);
  auto dir = dataPath("tum-fr1-rpy");
  if (!dir) GTEST_SKIP() << "shared data absent";
  auto gt = readTumTrajectory(*dir / "groundtruth.txt");
  ASSERT_GT(gt.size(), 100u);
  for (size_t i = 1; i < gt.size(); ++i) ASSERT_LE(gt[i - 1].t, gt[i].t);
}

}  // namespace
}  // namespace vidmap::sfm
