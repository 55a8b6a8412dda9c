// The solver on synthetic scenes with known truth: it reaches the noise floor with every camera
// model, rotation and linear solver, the robust losses keep the fit with outliers, constant
// blocks and the gauge hold, and bad input gives a clear error or a documented skip.
#include "vidmap/ba/solver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "vidmap/ba/synthetic.h"
#include "vidmap/core/error.h"

namespace vidmap::ba {
namespace {

double costOf(const Problem& p, LossType loss = LossType::kTrivial, double a = 1.0) {
  Options o;
  o.loss = loss;
  o.lossScale = a;
  o.maxNumIterations = 0;
  Problem q = p;
  return solve(q, o).initialCost;
}

// Free parameters minus the 7 of the similarity gauge.
int freeParameters(const Problem& p) {
  const int K = numIntrinsics(p.model);
  int n = 6 * static_cast<int>(p.images.size()) + 3 * static_cast<int>(p.points.size()) - 7;
  for (const auto& c : p.cameras)
    for (int k = 0; k < K; ++k) n += (c.constantMask >> k & 1) ? 0 : 1;
  return n;
}

struct Case {
  CameraModel model;
  RotationType rotation;
  bool shared;
  LinearSolverType solver;
};

class NoiseFloor : public ::testing::TestWithParam<Case> {};

TEST_P(NoiseFloor, ConvergesToTheNoiseFloor) {
  const Case c = GetParam();
  SyntheticOptions so;
  so.model = c.model;
  so.rotation = c.rotation;
  so.sharedIntrinsics = c.shared;
  so.numImages = 10;
  so.numPoints = 300;
  so.seed = 7;
  const SyntheticScene scene = makeSyntheticScene(so);
  Problem p = scene.initial;
  // Per-image principal points are nearly degenerate with the rotations; hold them as COLMAP
  // does by default (refine_principal_point = false).
  if (!c.shared && c.model != CameraModel::kBal)
    for (auto& cam : p.cameras)
      cam.constantMask = c.model == CameraModel::kPinhole ? 0b1100 : 0b0110;
  Options o;
  o.linearSolver = c.solver;
  o.functionTolerance = 1e-10;
  o.maxNumIterations = 100;
  const double truthCost = costOf(scene.noisy);
  const Summary s = solve(p, o);
  ASSERT_TRUE(s.isSolutionUsable()) << s.fullReport();
  EXPECT_EQ(s.termination, TerminationType::kConvergence) << s.fullReport();
  EXPECT_EQ(s.linearSolver, c.solver);
  // Least squares ends below the cost at the truth, at sigma^2/2 (2m - p) in expectation.
  const int m = static_cast<int>(p.observations.size());
  const double expected = 0.5 * so.noiseSigma * so.noiseSigma * (2.0 * m - freeParameters(p));
  EXPECT_LT(s.finalCost, truthCost);
  EXPECT_NEAR(s.finalCost / expected, 1.0, 0.1) << s.fullReport();
  EXPECT_GT(s.initialCost, 20 * s.finalCost);
  EXPECT_NEAR(rmsReprojectionError(p), std::sqrt(2.0) * so.noiseSigma, 0.1);
  EXPECT_NEAR(costOf(p), s.finalCost, 1e-9 * s.finalCost);
}

INSTANTIATE_TEST_SUITE_P(
    Models, NoiseFloor,
    ::testing::Values(
        Case{CameraModel::kSimpleRadial, RotationType::kAngleAxis, true,
             LinearSolverType::kDenseSchur},
        Case{CameraModel::kSimpleRadial, RotationType::kAngleAxis, true,
             LinearSolverType::kIterativeSchur},
        Case{CameraModel::kSimplePinhole, RotationType::kQuaternion, true,
             LinearSolverType::kDenseSchur},
        Case{CameraModel::kPinhole, RotationType::kAngleAxis, false, LinearSolverType::kDenseSchur},
        Case{CameraModel::kPinhole, RotationType::kQuaternion, false,
             LinearSolverType::kIterativeSchur},
        Case{CameraModel::kRadial, RotationType::kAngleAxis, false,
             LinearSolverType::kIterativeSchur},
        Case{CameraModel::kBal, RotationType::kAngleAxis, false, LinearSolverType::kDenseSchur},
        Case{CameraModel::kBal, RotationType::kQuaternion, false,
             LinearSolverType::kIterativeSchur}));

TEST(Solver, DenseAndIterativeReachTheSameMinimum) {
  SyntheticOptions so;
  so.numImages = 8;
  so.numPoints = 200;
  so.sharedIntrinsics = false;
  so.model = CameraModel::kBal;
  const SyntheticScene scene = makeSyntheticScene(so);
  Options o;
  o.gauge = Gauge::kFirstImageAndScale;
  o.functionTolerance = 1e-14;
  o.gradientTolerance = 1e-14;
  o.parameterTolerance = 1e-14;
  o.maxNumIterations = 200;
  Problem a = scene.initial, b = scene.initial;
  o.linearSolver = LinearSolverType::kDenseSchur;
  const Summary sa = solve(a, o);
  o.linearSolver = LinearSolverType::kIterativeSchur;
  o.eta = 1e-6;
  const Summary sb = solve(b, o);
  EXPECT_NEAR(sa.finalCost, sb.finalCost, 1e-9 * sa.finalCost);
  for (size_t j = 0; j < a.points.size(); ++j)
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(a.points[j].xyz[k], b.points[j].xyz[k], 1e-6);
}

TEST(Solver, RobustLossesKeepTheFitWithOutliers) {
  SyntheticOptions so;
  so.numImages = 10;
  so.numPoints = 300;
  so.outlierFraction = 0.1;
  so.outlierPixels = 30.0;
  so.seed = 11;
  const SyntheticScene scene = makeSyntheticScene(so);
  auto inlierRms = [&](const Problem& p) {
    Problem q = p;
    double s = 0.0;
    int n = 0;
    // Residuals against the noise-only observations of the inliers.
    for (size_t i = 0; i < q.observations.size(); ++i)
      q.observations[i] = scene.noisy.observations[i];
    const auto r = reprojectionResiduals(q);
    for (size_t i = 0; i < q.observations.size(); ++i)
      if (!scene.outlier[i]) s += r[2 * i] * r[2 * i] + r[2 * i + 1] * r[2 * i + 1], ++n;
    return std::sqrt(s / n);
  };
  const double floor = std::sqrt(2.0) * so.noiseSigma;
  double trivialRms = 0.0;
  for (auto loss : {LossType::kTrivial, LossType::kHuber, LossType::kCauchy, LossType::kSoftL1}) {
    Problem p = scene.initial;
    Options o;
    o.loss = loss;
    o.lossScale = 2.0;
    o.maxNumIterations = 100;
    const Summary s = solve(p, o);
    ASSERT_TRUE(s.isSolutionUsable());
    const double rms = inlierRms(p);
    if (loss == LossType::kTrivial) {
      trivialRms = rms;
      EXPECT_GT(rms, 1.3 * floor) << "outliers should pull the plain least-squares fit";
    } else {
      EXPECT_LT(rms, 1.1 * floor) << toString(loss);
      EXPECT_LT(rms, 0.8 * trivialRms) << toString(loss);
    }
  }
}

TEST(Solver, ConstantBlocksAndCoordinatesDoNotMove) {
  SyntheticOptions so;
  so.numImages = 6;
  so.numPoints = 100;
  so.model = CameraModel::kSimpleRadial;
  Problem p = makeSyntheticScene(so).initial;
  p.setImageConstant(0);
  p.images[1].constantMask = Problem::kTranslationMask;  // rotation varies, translation fixed
  p.cameras[0].constantMask = 0b0110;                    // principal point fixed
  p.setPointConstant(3);
  const Problem before = p;
  Options o;
  const Summary s = solve(p, o);
  ASSERT_TRUE(s.isSolutionUsable());
  EXPECT_LT(s.finalCost, 0.1 * s.initialCost);
  EXPECT_EQ(p.images[0].rotation, before.images[0].rotation);
  EXPECT_EQ(p.images[0].translation, before.images[0].translation);
  EXPECT_EQ(p.images[1].translation, before.images[1].translation);
  EXPECT_NE(p.images[1].rotation, before.images[1].rotation);
  EXPECT_EQ(p.cameras[0].params[1], before.cameras[0].params[1]);
  EXPECT_EQ(p.cameras[0].params[2], before.cameras[0].params[2]);
  EXPECT_NE(p.cameras[0].params[0], before.cameras[0].params[0]);
  EXPECT_EQ(p.points[3].xyz, before.points[3].xyz);
}

TEST(Solver, GaugeHoldsTheFirstPoseAndTheScale) {
  SyntheticOptions so;
  so.numImages = 6;
  so.numPoints = 100;
  Problem p = makeSyntheticScene(so).initial;
  const Problem before = p;
  Options o;
  o.gauge = Gauge::kFirstImageAndScale;
  const Summary s = solve(p, o);
  ASSERT_TRUE(s.isSolutionUsable());
  EXPECT_FALSE(s.gauge.empty());
  EXPECT_EQ(p.images[0].rotation, before.images[0].rotation);
  EXPECT_EQ(p.images[0].translation, before.images[0].translation);
  int held = 0;
  for (int k = 0; k < 3; ++k) held += p.images[1].translation[k] == before.images[1].translation[k];
  EXPECT_EQ(held, 1);
  EXPECT_EQ(s.numCameraColumns, 6 * 6 + 4 - 7);
}

TEST(Solver, SameResultWithAnyThreadCount) {
  SyntheticOptions so;
  so.numImages = 8;
  so.numPoints = 300;
  const SyntheticScene scene = makeSyntheticScene(so);
  for (auto ls : {LinearSolverType::kDenseSchur, LinearSolverType::kIterativeSchur}) {
    Problem a = scene.initial, b = scene.initial;
    Options o;
    o.linearSolver = ls;
    o.minObservationsPerThread = 0;  // a small problem: let it use both threads
    o.numThreads = 1;
    const Summary sa = solve(a, o);
    o.numThreads = 2;
    const Summary sb = solve(b, o);
    EXPECT_EQ(sa.numThreads, 1);
#if defined(_OPENMP)
    EXPECT_EQ(sb.numThreads, 2);
#endif
    EXPECT_EQ(sa.finalCost, sb.finalCost);
    EXPECT_EQ(sa.numIterations(), sb.numIterations());
    for (size_t j = 0; j < a.points.size(); ++j) EXPECT_EQ(a.points[j].xyz, b.points[j].xyz);
  }
}

// Solves `start` densely with the AVX2 segment sums off (the baseline x86-64 code, the oracle)
// and on, and expects the same adjustment bit for bit; returns the AVX2 run's problem. (On a CPU
// without AVX2 both runs take the baseline.)
Problem expectAvx2SegmentsEqualTheBaseline(const Problem& start) {
  Problem a = start, b = start;
  Options o;
  o.linearSolver = LinearSolverType::kDenseSchur;
  o.cpuAvx2 = false;
  const Summary sa = solve(a, o);
  o.cpuAvx2 = true;
  const Summary sb = solve(b, o);
  EXPECT_EQ(sa.finalCost, sb.finalCost);
  EXPECT_EQ(sa.numIterations(), sb.numIterations());
  EXPECT_LT(sb.finalCost, 0.5 * sb.initialCost);
  for (size_t j = 0; j < a.points.size(); ++j) EXPECT_EQ(a.points[j].xyz, b.points[j].xyz);
  for (size_t i = 0; i < a.images.size(); ++i) {
    EXPECT_EQ(a.images[i].rotation, b.images[i].rotation);
    EXPECT_EQ(a.images[i].translation, b.images[i].translation);
  }
  for (size_t c = 0; c < a.cameras.size(); ++c) EXPECT_EQ(a.cameras[c].params, b.cameras[c].params);
  return b;
}

// The Schur segment sums on AVX2 (cpu_backend.cc) against the baseline: the camera refined (10
// columns an image) and held (6), shared and per image.
TEST(Solver, Avx2SegmentsEqualTheBaselineBitForBit) {
  for (bool shared : {true, false})
    for (bool refine : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "shared " << shared << " refine " << refine);
      SyntheticOptions so;
      so.layout = SyntheticLayout::kCorridor;
      so.numImages = 20;
      so.numPoints = 600;
      so.sharedIntrinsics = shared;
      Problem p = makeSyntheticScene(so).initial;
      if (!refine)
        for (size_t c = 0; c < p.cameras.size(); ++c) p.setCameraConstant(static_cast<int>(c));
      expectAvx2SegmentsEqualTheBaseline(p);
    }
}

// The AVX2 segments on the columns that vary (segmentBlockAvx2Active) where every image holds
// the same intrinsics: the principal point (SIMPLE_RADIAL's 10 columns, 8 varying: the mapper's
// camera), also the distortion (7), or only the principal point's x (9). The oracle is the
// baseline path, which sums every column.
TEST(Solver, Avx2SegmentsOnTheVaryingColumnsEqualTheBaselineBitForBit) {
  // SIMPLE_RADIAL (f, cx, cy, k): bit 0 f, 1 cx, 2 cy, 3 k.
  for (std::uint32_t held : {0x6u, 0xEu, 0x2u})
    for (bool shared : {true, false}) {
      SyntheticOptions so;
      so.layout = SyntheticLayout::kCorridor;
      so.numImages = 16;
      so.numPoints = 500;
      so.sharedIntrinsics = shared;
      SCOPED_TRACE(::testing::Message() << "held " << held << " shared " << shared);
      Problem p = makeSyntheticScene(so).initial;
      for (CameraIntrinsics& c : p.cameras) c.constantMask = held;
      const Problem b = expectAvx2SegmentsEqualTheBaseline(p);
      for (size_t c = 0; c < b.cameras.size(); ++c)
        EXPECT_EQ(b.cameras[c].params[1], p.cameras[c].params[1]);  // held
    }
}

TEST(Solver, SmallProblemsRunOnFewerThreads) {
  SyntheticOptions so;
  so.numImages = 8;
  so.numPoints = 300;
  Problem p = makeSyntheticScene(so).initial;
  Options o;
  o.numThreads = 2;
  o.minObservationsPerThread = static_cast<int>(p.observations.size());  // one thread's worth
  EXPECT_EQ(solve(p, o).numThreads, 1);
}

// Bad input.

TEST(SolverBadInput, PointSeenOnceIsHeldAndCounted) {
  SyntheticOptions so;
  so.numImages = 5;
  so.numPoints = 60;
  Problem p = makeSyntheticScene(so).initial;
  Point3 lonely;
  lonely.xyz = {0.1, 0.2, 0.3};
  p.points.push_back(lonely);
  p.observations.push_back({2, static_cast<int>(p.points.size()) - 1, 320.0, 240.0});
  const Summary s = solve(p, Options{});
  ASSERT_TRUE(s.isSolutionUsable());
  EXPECT_EQ(s.numPointsHeld, 1);
  EXPECT_EQ(p.points.back().xyz, lonely.xyz);
}

TEST(SolverBadInput, ImageWithoutObservationsIsHeldAndCounted) {
  SyntheticOptions so;
  so.numImages = 5;
  so.numPoints = 60;
  so.sharedIntrinsics = false;
  Problem p = makeSyntheticScene(so).initial;
  ImagePose extra = p.images[0];
  extra.camera = static_cast<int>(p.cameras.size());
  p.cameras.push_back(p.cameras[0]);
  p.images.push_back(extra);
  const Summary s = solve(p, Options{});
  ASSERT_TRUE(s.isSolutionUsable());
  EXPECT_EQ(s.numImagesUnobserved, 1);
  EXPECT_EQ(s.numCamerasUnobserved, 1);
  EXPECT_EQ(p.images.back().translation, extra.translation);
}

TEST(SolverBadInput, NonFiniteParametersAreAnError) {
  SyntheticOptions so;
  so.numImages = 3;
  so.numPoints = 20;
  Problem p = makeSyntheticScene(so).initial;
  p.points[2].xyz[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(solve(p, Options{}), Error);
  p = makeSyntheticScene(so).initial;
  p.images[1].rotation[1] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(solve(p, Options{}), Error);
}

TEST(SolverBadInput, PointOnTheCameraPlaneIsAnError) {
  SyntheticOptions so;
  so.numImages = 3;
  so.numPoints = 20;
  so.rotation = RotationType::kAngleAxis;
  Problem p = makeSyntheticScene(so).initial;
  // Put point 0 at the centre of image 0: z = 0 in that camera.
  const auto& im = p.images[0];
  p.images[0].rotation = {0, 0, 0, 0};
  p.points[p.observations[0].point].xyz = {-im.translation[0], -im.translation[1],
                                           -im.translation[2]};
  p.observations[0].image = 0;
  EXPECT_THROW(solve(p, Options{}), Error);
}

TEST(SolverBadInput, DegenerateSystemGivesAFiniteResultNotNaN) {
  // All cameras at one centre: no point depth is observable and the gauge is free; the
  // damping keeps every system positive definite and the result finite.
  SyntheticOptions so;
  so.numImages = 4;
  so.numPoints = 40;
  Problem p = makeSyntheticScene(so).initial;
  for (auto& im : p.images)
    im.translation = p.images[0].translation, im.rotation = p.images[0].rotation;
  for (auto ls : {LinearSolverType::kDenseSchur, LinearSolverType::kIterativeSchur}) {
    Problem q = p;
    Options o;
    o.linearSolver = ls;
    const Summary s = solve(q, o);
    EXPECT_TRUE(std::isfinite(s.finalCost));
    EXPECT_LE(s.finalCost, s.initialCost);
    for (const auto& pt : q.points)
      for (double v : pt.xyz) EXPECT_TRUE(std::isfinite(v));
    for (const auto& im : q.images)
      for (double v : im.translation) EXPECT_TRUE(std::isfinite(v));
  }
}

TEST(SolverBadInput, RankDeficientSystemFailsCleanly) {
  // Infinite damping bounds make every step invalid: the solver reports a failure and
  // leaves the parameters untouched.
  SyntheticOptions so;
  so.numImages = 3;
  so.numPoints = 30;
  Problem p = makeSyntheticScene(so).initial;
  const Problem before = p;
  Options o;
  o.minLmDiagonal = 1e300;
  o.maxLmDiagonal = 1e300;
  o.initialTrustRegionRadius = 1e-300;
  o.minTrustRegionRadius = 0.0;
  const Summary s = solve(p, o);
  EXPECT_NE(s.termination, TerminationType::kConvergence);
  EXPECT_EQ(p.points[0].xyz, before.points[0].xyz);
}

TEST(SolverBadInput, BadOptionsNameTheField) {
  SyntheticOptions so;
  so.numImages = 3;
  so.numPoints = 20;
  Problem p = makeSyntheticScene(so).initial;
  Options o;
  o.functionTolerance = -1;
  try {
    solve(p, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("functionTolerance"), std::string::npos);
  }
  o = Options{};
  o.backend = BackendType::kCuda;
#if !defined(VIDMAP_HAVE_CUDA)
  EXPECT_THROW(solve(p, o), Error);
#endif
}

}  // namespace
}  // namespace vidmap::ba

namespace vidmap::ba {
namespace {

TEST(Solver, CorridorSceneIterativeMatchesDense) {
  // Sparse covisibility (each point in ~15 of 40 images), as in a video.
  SyntheticOptions so;
  so.layout = SyntheticLayout::kCorridor;
  so.numImages = 40;
  so.numPoints = 1500;
  const SyntheticScene scene = makeSyntheticScene(so);
  Problem a = scene.initial, b = scene.initial;
  ASSERT_GT(a.observations.size(), 8000u);
  Options o;
  o.gauge = Gauge::kFirstImageAndScale;
  o.functionTolerance = 1e-12;
  o.maxNumIterations = 100;
  o.linearSolver = LinearSolverType::kDenseSchur;
  const Summary sa = solve(a, o);
  o.linearSolver = LinearSolverType::kIterativeSchur;
  const Summary sb = solve(b, o);
  ASSERT_TRUE(sa.isSolutionUsable() && sb.isSolutionUsable());
  EXPECT_NEAR(sa.finalCost, sb.finalCost, 1e-8 * sa.finalCost);
  EXPECT_NEAR(rmsReprojectionError(a), std::sqrt(2.0) * so.noiseSigma, 0.1);
}

}  // namespace
}  // namespace vidmap::ba
