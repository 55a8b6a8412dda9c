// The CUDA backend against the CPU backend (the oracle) on the same problems: the same LM
// trajectory (iteration counts, per-iteration costs) and final costs within 1e-9 relative with
// the dense solver, within 1e-6 with conjugate gradients; results deterministic. Skips without
// a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "vidmap/ba/bal_io.h"
#include "vidmap/ba/solver.h"
#include "vidmap/ba/synthetic.h"
#include "vidmap/core/data_dir.h"
#include "vidmap/core/error.h"
#include "vidmap/gpu/block_pool.h"
#include "vidmap/gpu/context.h"
#include "vidmap/gpu/device.h"

namespace vidmap::ba {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (gpu::deviceCount() == 0) GTEST_SKIP() << gpu::noDeviceReason()

double maxRelativeDifference(const Problem& a, const Problem& b) {
  double m = 0.0;
  auto upd = [&](double x, double y) { m = std::max(m, std::fabs(x - y) / (1.0 + std::fabs(x))); };
  for (size_t j = 0; j < a.points.size(); ++j)
    for (int k = 0; k < 3; ++k) upd(a.points[j].xyz[k], b.points[j].xyz[k]);
  for (size_t i = 0; i < a.images.size(); ++i) {
    for (int k = 0; k < 4; ++k) upd(a.images[i].rotation[k], b.images[i].rotation[k]);
    for (int k = 0; k < 3; ++k) upd(a.images[i].translation[k], b.images[i].translation[k]);
  }
  for (size_t c = 0; c < a.cameras.size(); ++c)
    for (int k = 0; k < kMaxIntrinsics; ++k) upd(a.cameras[c].params[k], b.cameras[c].params[k]);
  return m;
}

struct Case {
  const char* name;
  CameraModel model;
  RotationType rotation;
  bool shared;
  LossType loss;
  LinearSolverType solver;
  Gauge gauge;
};

class CudaVersusCpu : public ::testing::TestWithParam<Case> {};

TEST_P(CudaVersusCpu, SameTrajectoryAndResult) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  SyntheticOptions so;
  so.model = c.model;
  so.rotation = c.rotation;
  so.sharedIntrinsics = c.shared;
  so.numImages = 12;
  so.numPoints = 400;
  so.outlierFraction = c.loss == LossType::kTrivial ? 0.0 : 0.05;
  Problem pc = makeSyntheticScene(so).initial, pg = pc;
  Options o;
  o.loss = c.loss;
  o.lossScale = 1.5;
  o.linearSolver = c.solver;
  o.gauge = c.gauge;
  if (c.solver == LinearSolverType::kIterativeSchur)
    o.functionTolerance = 1e-12, o.maxNumIterations = 100;
  const Summary sc = solve(pc, o);
  o.backend = BackendType::kCuda;
  const Summary sg = solve(pg, o);
  ASSERT_TRUE(sg.isSolutionUsable()) << sg.fullReport();
  EXPECT_EQ(sg.backend, BackendType::kCuda);
  EXPECT_NEAR(sg.initialCost, sc.initialCost, 1e-12 * sc.initialCost);
  EXPECT_NEAR(sg.iterations[0].gradientMaxNorm, sc.iterations[0].gradientMaxNorm,
              1e-9 * sc.iterations[0].gradientMaxNorm);
  if (c.solver == LinearSolverType::kDenseSchur) {
    ASSERT_GE(sg.iterations.size(), 2u);
    EXPECT_NEAR(sg.iterations[1].cost, sc.iterations[1].cost, 1e-10 * sc.iterations[1].cost);
    EXPECT_NEAR(sg.iterations[1].stepNorm, sc.iterations[1].stepNorm,
                1e-8 * sc.iterations[1].stepNorm);
    EXPECT_EQ(sg.numIterations(), sc.numIterations()) << sc.fullReport() << sg.fullReport();
    EXPECT_NEAR(sg.finalCost, sc.finalCost, 1e-9 * sc.finalCost);
    EXPECT_LT(maxRelativeDifference(pc, pg), 1e-6);
  } else {
    EXPECT_NEAR(sg.finalCost, sc.finalCost, 1e-6 * sc.finalCost)
        << sc.fullReport() << sg.fullReport();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Problems, CudaVersusCpu,
    ::testing::Values(Case{"simple_radial_shared_dense", CameraModel::kSimpleRadial,
                           RotationType::kAngleAxis, true, LossType::kTrivial,
                           LinearSolverType::kDenseSchur, Gauge::kNone},
                      Case{"bal_huber_dense", CameraModel::kBal, RotationType::kAngleAxis, false,
                           LossType::kHuber, LinearSolverType::kDenseSchur, Gauge::kNone},
                      Case{"pinhole_quaternion_cauchy_gauge_dense", CameraModel::kPinhole,
                           RotationType::kQuaternion, false, LossType::kCauchy,
                           LinearSolverType::kDenseSchur, Gauge::kFirstImageAndScale},
                      Case{"radial_shared_softl1_iterative", CameraModel::kRadial,
                           RotationType::kAngleAxis, true, LossType::kSoftL1,
                           LinearSolverType::kIterativeSchur, Gauge::kNone},
                      Case{"bal_iterative", CameraModel::kBal, RotationType::kAngleAxis, false,
                           LossType::kTrivial, LinearSolverType::kIterativeSchur, Gauge::kNone},
                      Case{"simple_pinhole_quaternion_iterative", CameraModel::kSimplePinhole,
                           RotationType::kQuaternion, true, LossType::kHuber,
                           LinearSolverType::kIterativeSchur, Gauge::kFirstImageAndScale}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(CudaBackend, ConstantBlocksAndHeldPointsMatchCpu) {
  SKIP_WITHOUT_GPU();
  SyntheticOptions so;
  so.numImages = 8;
  so.numPoints = 200;
  Problem p = makeSyntheticScene(so).initial;
  p.setImageConstant(0);
  p.images[1].constantMask = Problem::kTranslationMask;
  p.cameras[0].constantMask = 0b0110;
  p.setPointConstant(3);
  Point3 lonely;
  lonely.xyz = {0.1, 0.2, 0.3};
  p.points.push_back(lonely);
  p.observations.push_back({2, static_cast<int>(p.points.size()) - 1, 320.0, 240.0});
  for (auto ls : {LinearSolverType::kDenseSchur, LinearSolverType::kIterativeSchur}) {
    Problem a = p, b = p;
    Options o;
    o.linearSolver = ls;
    const Summary sa = solve(a, o);
    o.backend = BackendType::kCuda;
    const Summary sb = solve(b, o);
    EXPECT_EQ(sb.numPointsHeld, 1);
    EXPECT_NEAR(sb.finalCost, sa.finalCost, 1e-6 * sa.finalCost);
    EXPECT_EQ(b.images[0].translation, p.images[0].translation);
    EXPECT_EQ(b.points[3].xyz, p.points[3].xyz);
    EXPECT_EQ(b.points.back().xyz, lonely.xyz);
  }
}

// The reduced system factored and solved in one kernel (Options::cudaOneBlockCholeskyMaxColumns)
// follows cuSOLVER's trajectory to rounding, on the graph and the phase paths, and a system over
// the limit still goes to cuSOLVER (the same result bit for bit as with the kernel off).
TEST(CudaBackend, OneBlockCholeskyFollowsCuSolver) {
  SKIP_WITHOUT_GPU();
  int kernel = 0, cuSolver = 0;  // solves on each side of the limit
  for (const int images : {4, 9, 14}) {
    SyntheticOptions so;
    so.numImages = images;
    so.numPoints = 300;
    so.seed = 7 + images;
    const Problem p = makeSyntheticScene(so).initial;
    for (const bool graphs : {true, false}) {
      Options o;
      o.backend = BackendType::kCuda;
      o.linearSolver = LinearSolverType::kDenseSchur;
      o.cudaGraphs = graphs;
      Problem a = p, b = p;
      const Summary sa = solve(a, o);
      constexpr int kLimit = Options::kOneBlockCholeskyColumnsLimit;
      o.cudaOneBlockCholeskyMaxColumns = kLimit;
      const Summary sb = solve(b, o);
      SCOPED_TRACE(testing::Message() << images << " images, " << sa.numCameraColumns
                                      << " columns, graphs " << graphs);
      ASSERT_GT(sa.numIterations(), 2);
      ASSERT_EQ(sa.termination, TerminationType::kConvergence);
      if (sa.numCameraColumns > kLimit) {
        ++cuSolver;
        EXPECT_EQ(sb.finalCost, sa.finalCost);
        EXPECT_EQ(maxRelativeDifference(a, b), 0.0);
        continue;
      }
      EXPECT_EQ(sb.numIterations(), sa.numIterations());
      EXPECT_NEAR(sb.finalCost, sa.finalCost, 1e-9 * sa.finalCost);
      EXPECT_LT(maxRelativeDifference(a, b), 1e-7);
      ++kernel;
    }
  }
  EXPECT_EQ(kernel, 4);
  EXPECT_EQ(cuSolver, 2);
}

TEST(CudaBackend, DeterministicFromRunToRun) {
  SKIP_WITHOUT_GPU();
  SyntheticOptions so;
  so.numImages = 20;
  so.numPoints = 1000;
  const Problem p = makeSyntheticScene(so).initial;
  for (auto ls : {LinearSolverType::kDenseSchur, LinearSolverType::kIterativeSchur}) {
    Problem a = p, b = p;
    Options o;
    o.backend = BackendType::kCuda;
    o.linearSolver = ls;
    const Summary sa = solve(a, o), sb = solve(b, o);
    EXPECT_EQ(sa.finalCost, sb.finalCost);
    EXPECT_EQ(sa.numIterations(), sb.numIterations());
    for (size_t j = 0; j < a.points.size(); ++j) EXPECT_EQ(a.points[j].xyz, b.points[j].xyz);
  }
}

// With the caller's context (the mapper's), a solve's device arrays come from the thread's
// BlockPool: blocks that held another problem are reused, and the result is the one of a solve
// with fresh allocations, bit for bit (nothing reads memory it did not write). On a thread of
// its own (an empty pool), the first solve makes the blocks and repeated solves make at most
// one more between them (a greedy best fit may hand a block to another array once).
TEST(CudaBackend, BlocksKeptOnTheCallersContextAreReusedAndChangeNothing) {
  SKIP_WITHOUT_GPU();
  SyntheticOptions sa, sb;
  sa.numImages = 12, sa.numPoints = 600, sa.seed = 3;
  sb.numImages = 20, sb.numPoints = 1500, sb.seed = 4;
  const Problem a = makeSyntheticScene(sa).initial, b = makeSyntheticScene(sb).initial;
  Options o;
  o.backend = BackendType::kCuda;
  Problem fresh = a;
  const Summary ref = solve(fresh, o);
  ASSERT_TRUE(ref.isSolutionUsable());
  const auto same = [&](const Problem& p, const Summary& s) {
    EXPECT_EQ(s.finalCost, ref.finalCost);
    EXPECT_EQ(s.numIterations(), ref.numIterations());
    for (size_t j = 0; j < p.points.size(); ++j) EXPECT_EQ(p.points[j].xyz, fresh.points[j].xyz);
    for (size_t i = 0; i < p.images.size(); ++i)
      EXPECT_EQ(p.images[i].translation, fresh.images[i].translation);
  };

  gpu::Context ctx(0);
  o.context = &ctx;
  std::size_t made[3] = {0, 0, 0};
  std::int64_t liveInThread = 0;
  std::thread t([&] {
    gpu::BlockPool& pool = gpu::BlockPool::ofThisThread();
    for (int round = 0; round < 3; ++round) {
      Problem p = a;
      same(p, solve(p, o));
      made[round] = pool.blocksMade();
    }
    Problem other = b;
    solve(other, o);  // the kept blocks now hold b's values
    Problem p = a;
    same(p, solve(p, o));
    liveInThread = ctx.memory().liveBytes();
  });
  t.join();
  EXPECT_GE(made[0], 20u) << "the solve's arrays come from the pool";
  EXPECT_LE(made[2] - made[0], 1u) << "repeated solves reuse the blocks";
  EXPECT_GT(liveInThread, 0) << "kept blocks stay counted on their context";
  EXPECT_EQ(ctx.memory().liveBytes(), 0) << "the thread's end frees its kept blocks";
}

TEST(CudaBackend, BalLadybugMatchesCpu) {
  SKIP_WITHOUT_GPU();
  auto dir = dataPath("bal");
  auto file = dir ? findBal(*dir, "ladybug/problem-49-7776-pre.txt.bz2") : std::nullopt;
  if (!file) GTEST_SKIP() << "shared/data/bal (or a decompressed copy) is absent";
  Problem pc = readBal(*file), pg = pc;
  Options o;
  o.linearSolver = LinearSolverType::kDenseSchur;
  const Summary sc = solve(pc, o);
  o.backend = BackendType::kCuda;
  const Summary sg = solve(pg, o);
  EXPECT_EQ(sg.numIterations(), sc.numIterations());
  EXPECT_NEAR(sg.finalCost, sc.finalCost, 1e-9 * sc.finalCost)
      << sc.fullReport() << sg.fullReport();
}

// The graph path (each iteration two graph replays and two read-backs of device scalars) and
// the phase-by-phase path launch the same kernels in the same order: the same trajectory,
// iteration by iteration, bit for bit, on a local-BA-sized window, a quaternion problem with
// a robust loss, and a problem whose steps all fail (its flags read from the device).
TEST(CudaBackend, GraphsGiveThePhasePathsTrajectory) {
  SKIP_WITHOUT_GPU();
  struct GraphCase {
    const char* name;
    CameraModel model;
    RotationType rotation;
    LossType loss;
    int images, points;
    bool failing;
  };
  for (const GraphCase& c :
       {GraphCase{"window", CameraModel::kSimpleRadial, RotationType::kAngleAxis, LossType::kHuber,
                  10, 350, false},
        GraphCase{"quaternion_cauchy", CameraModel::kPinhole, RotationType::kQuaternion,
                  LossType::kCauchy, 6, 150, false},
        GraphCase{"failing", CameraModel::kSimpleRadial, RotationType::kAngleAxis,
                  LossType::kTrivial, 4, 40, true}}) {
    SCOPED_TRACE(c.name);
    SyntheticOptions so;
    so.model = c.model;
    so.rotation = c.rotation;
    so.numImages = c.images;
    so.numPoints = c.points;
    so.outlierFraction = c.loss == LossType::kTrivial ? 0.0 : 0.05;
    const Problem p = makeSyntheticScene(so).initial;
    Options o;
    o.backend = BackendType::kCuda;
    o.loss = c.loss;
    o.lossScale = 1.5;
    o.gauge = Gauge::kFirstImageAndScale;
    if (c.failing) {
      o.minLmDiagonal = o.maxLmDiagonal = 1e300;
      o.initialTrustRegionRadius = 1e-300;
      o.minTrustRegionRadius = 0.0;
    }
    Problem a = p, b = p;
    o.cudaGraphs = true;
    const Summary sg = solve(a, o);
    o.cudaGraphs = false;
    const Summary sp = solve(b, o);
    EXPECT_EQ(sg.launchMode.rfind("graphs", 0), 0u) << sg.launchMode;
    EXPECT_EQ(sp.launchMode, "phases");
    EXPECT_EQ(sg.termination, sp.termination);
    EXPECT_EQ(sg.message, sp.message);
    ASSERT_EQ(sg.iterations.size(), sp.iterations.size()) << sg.fullReport() << sp.fullReport();
    for (size_t k = 0; k < sg.iterations.size(); ++k) {
      const IterationSummary &g = sg.iterations[k], &q = sp.iterations[k];
      EXPECT_EQ(g.cost, q.cost) << "iteration " << k;
      EXPECT_EQ(g.gradientMaxNorm, q.gradientMaxNorm) << "iteration " << k;
      EXPECT_EQ(g.stepNorm, q.stepNorm) << "iteration " << k;
      EXPECT_EQ(g.relativeDecrease, q.relativeDecrease) << "iteration " << k;
      EXPECT_EQ(g.stepIsSuccessful, q.stepIsSuccessful) << "iteration " << k;
      EXPECT_EQ(g.linearSolverIterations, q.linearSolverIterations) << "iteration " << k;
    }
    EXPECT_EQ(sg.finalCost, sp.finalCost);
    EXPECT_EQ(maxRelativeDifference(a, b), 0.0);
    if (c.failing) {
      EXPECT_EQ(sg.termination, TerminationType::kFailure) << sg.message;
    } else {
      EXPECT_GE(sg.numSuccessfulSteps, 2);
    }
  }
}

TEST(CudaBackend, BadInputFailsCleanly) {
  SKIP_WITHOUT_GPU();
  SyntheticOptions so;
  so.numImages = 4;
  so.numPoints = 40;
  Problem p = makeSyntheticScene(so).initial;
  const Problem before = p;
  Options o;
  o.backend = BackendType::kCuda;
  o.minLmDiagonal = 1e300;
  o.maxLmDiagonal = 1e300;
  o.initialTrustRegionRadius = 1e-300;
  o.minTrustRegionRadius = 0.0;
  const Summary s = solve(p, o);
  EXPECT_NE(s.termination, TerminationType::kConvergence);
  EXPECT_EQ(p.points[0].xyz, before.points[0].xyz);
  Problem q = before;
  q.points[1].xyz[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(solve(q, Options{}), Error);
}

}  // namespace
}  // namespace vidmap::ba
