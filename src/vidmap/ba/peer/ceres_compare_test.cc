// vidmap's bundle adjuster against Ceres Solver on the same problems with the same
// parameterisation, loss, constant blocks and trust-region options: the final costs agree to
// 1e-6 relative and the dense solvers take the same number of steps.
#include <gtest/gtest.h>

#include <cmath>

#include "vidmap/ba/bal_io.h"
#include "vidmap/ba/peer/ceres_peer.h"
#include "vidmap/ba/solver.h"
#include "vidmap/ba/synthetic.h"
#include "vidmap/core/data_dir.h"

namespace vidmap::ba {
namespace {

using peer::CeresBlocks;
using peer::CeresSolver;

struct Case {
  const char* name;
  CameraModel model;
  RotationType rotation;
  bool shared;
  LossType loss;
  LinearSolverType solver;
  CeresBlocks blocks;
  bool holdPrincipalPoint;
  Gauge gauge;
};

class VersusCeres : public ::testing::TestWithParam<Case> {};

TEST_P(VersusCeres, SameFinalCost) {
  const Case c = GetParam();
  SyntheticOptions so;
  so.model = c.model;
  so.rotation = c.rotation;
  so.sharedIntrinsics = c.shared;
  so.numImages = 8;
  so.numPoints = 200;
  so.outlierFraction = c.loss == LossType::kTrivial ? 0.0 : 0.05;
  so.seed = 5;
  Problem p = makeSyntheticScene(so).initial;
  if (c.holdPrincipalPoint)
    for (auto& cam : p.cameras)
      cam.constantMask = c.model == CameraModel::kPinhole ? 0b1100 : 0b0110;
  Options o;
  o.loss = c.loss;
  o.lossScale = 1.5;
  o.linearSolver = c.solver;
  o.gauge = c.gauge;
  o.numThreads = 2;
  if (c.solver == LinearSolverType::kIterativeSchur) {
    // Truncated CG steps depend on the preconditioner's blocks (Ceres splits a quaternion pose
    // into two blocks), so the trajectories differ slightly: converge both fully.
    o.functionTolerance = 1e-12;
    o.maxNumIterations = 100;
  }
  Problem q = p;
  const Summary s = solve(p, o);
  const auto r = peer::solveWithCeres(q, o,
                                      c.solver == LinearSolverType::kIterativeSchur
                                          ? CeresSolver::kIterativeSchur
                                          : CeresSolver::kDenseSchur,
                                      c.blocks);
  ASSERT_TRUE(s.isSolutionUsable());
  ASSERT_TRUE(r.usable) << r.message;
  EXPECT_NEAR(s.initialCost, r.initialCost, 1e-12 * r.initialCost);
  EXPECT_NEAR(s.finalCost, r.finalCost, 1e-6 * r.finalCost)
      << s.fullReport() << "Ceres: " << r.termination << " " << r.message << " iterations "
      << r.iterations;
  if (c.solver == LinearSolverType::kDenseSchur) {
    EXPECT_EQ(s.numIterations(), r.iterations) << s.fullReport() << r.message;
    EXPECT_EQ(s.numSuccessfulSteps, r.successfulSteps);
  }
  std::printf("%s: vidmap %.12e (%d it), Ceres %.12e (%d it), relative %.2e\n", c.name, s.finalCost,
              s.numIterations(), r.finalCost, r.iterations,
              std::fabs(s.finalCost - r.finalCost) / r.finalCost);
}

INSTANTIATE_TEST_SUITE_P(
    Problems, VersusCeres,
    ::testing::Values(
        Case{"simple_radial_shared_trivial", CameraModel::kSimpleRadial, RotationType::kAngleAxis,
             true, LossType::kTrivial, LinearSolverType::kDenseSchur, CeresBlocks::kSplit, false,
             Gauge::kNone},
        Case{"bal_huber_split", CameraModel::kBal, RotationType::kAngleAxis, false,
             LossType::kHuber, LinearSolverType::kDenseSchur, CeresBlocks::kSplit, false,
             Gauge::kNone},
        Case{"bal_huber_joint", CameraModel::kBal, RotationType::kAngleAxis, false,
             LossType::kHuber, LinearSolverType::kDenseSchur, CeresBlocks::kJoint, false,
             Gauge::kNone},
        Case{"pinhole_quaternion_cauchy_gauge", CameraModel::kPinhole, RotationType::kQuaternion,
             false, LossType::kCauchy, LinearSolverType::kDenseSchur, CeresBlocks::kSplit, true,
             Gauge::kFirstImageAndScale},
        Case{"radial_shared_softl1_iterative", CameraModel::kRadial, RotationType::kAngleAxis, true,
             LossType::kSoftL1, LinearSolverType::kIterativeSchur, CeresBlocks::kSplit, false,
             Gauge::kNone},
        Case{"simple_pinhole_quaternion_iterative", CameraModel::kSimplePinhole,
             RotationType::kQuaternion, true, LossType::kHuber, LinearSolverType::kIterativeSchur,
             CeresBlocks::kSplit, false, Gauge::kFirstImageAndScale}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(VersusCeresBal, LadybugDenseSchur) {
  auto dir = dataPath("bal");
  auto file = dir ? findBal(*dir, "ladybug/problem-49-7776-pre.txt.bz2") : std::nullopt;
  if (!file) GTEST_SKIP() << "shared/data/bal (or a decompressed copy) is absent";
  Problem p = readBal(*file);
  Problem q = p;
  Options o;
  o.linearSolver = LinearSolverType::kDenseSchur;
  o.numThreads = 2;
  const Summary s = solve(p, o);
  const auto r = peer::solveWithCeres(q, o, CeresSolver::kDenseSchur, CeresBlocks::kJoint);
  EXPECT_NEAR(s.initialCost, r.initialCost, 1e-12 * r.initialCost);
  EXPECT_NEAR(s.finalCost, r.finalCost, 1e-6 * r.finalCost) << s.fullReport() << r.message;
  std::printf("ladybug-49: vidmap %.12e (%d it, %.2f s), Ceres %.12e (%d it, %.2f s)\n",
              s.finalCost, s.numIterations(), s.totalSeconds, r.finalCost, r.iterations,
              r.totalSeconds);
}

}  // namespace
}  // namespace vidmap::ba
