// Two-view verification on synthetic scenes with known truth: noise 0.5-1 px, 0-70% outliers.
#include <gtest/gtest.h>

#include <cstdio>

#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/ransac.h"
#include "vidmap/geometry/refine.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/geometry/two_view.h"
#include "vidmap/geometry/two_view_steps.h"

namespace vidmap::geometry {
namespace {

using testing::makeTwoViewScene;
using testing::SceneOptions;

struct Case {
  double noise_px;
  double outliers;
};

class TwoViewAccuracy : public ::testing::TestWithParam<Case> {};

TEST_P(TwoViewAccuracy, PoseAndInliersWithinTheNoise) {
  const Case c = GetParam();
  SceneOptions o;
  o.num_points = 300;
  o.noise_px = c.noise_px;
  o.outlier_ratio = c.outliers;
  double sum_r = 0, sum_t = 0, oracle_r = 0, oracle_t = 0, worst_recall = 1;
  const int trials = 5;
  for (int trial = 0; trial < trials; ++trial) {
    const auto s = makeTwoViewScene(o, 100 * trial + static_cast<int>(c.outliers * 10));
    TwoViewOptions opt;
    opt.seed = trial;
    opt.max_error_px = 3 * c.noise_px;  // the 3-sigma threshold of the noise
    const TwoViewGeometry g = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, opt);
    ASSERT_EQ(g.config, TwoViewConfig::kCalibrated) << g.message;
    sum_r += testing::rotationErrorDeg(g.relative.R, s.rel.R);
    sum_t += testing::directionErrorDeg(g.relative.t, s.rel.t);
    // The oracle: the Sampson-optimal pose on the true inliers, started at the truth. Its error
    // is what the noise alone costs on this scene.
    std::vector<int> truth_in;
    for (size_t i = 0; i < s.inlier.size(); ++i)
      if (s.inlier[i]) truth_in.push_back(static_cast<int>(i));
    Pose oracle{s.rel.R, s.rel.t.normalized()};
    refineRelativePose(toNormalized(s.px1, s.cam), toNormalized(s.px2, s.cam), truth_in, &oracle);
    oracle_r += testing::rotationErrorDeg(oracle.R, s.rel.R);
    oracle_t += testing::directionErrorDeg(oracle.t, s.rel.t);
    int found = 0, false_in = 0;
    for (size_t i = 0; i < s.inlier.size(); ++i) {
      found += s.inlier[i] && g.inlier_mask[i];
      false_in += !s.inlier[i] && g.inlier_mask[i];
    }
    const int true_in = static_cast<int>(truth_in.size());
    worst_recall = std::min(worst_recall, static_cast<double>(found) / true_in);
    // Random outliers fall within the threshold band of an epipolar line now and then (about
    // 2 x threshold / 500 px of them here), never many more.
    EXPECT_LE(false_in, 3.0 * 2 * opt.max_error_px / 500 * (s.inlier.size() - true_in) + 2);
    EXPECT_GE(static_cast<int>(g.points.size()), found * 8 / 10);
  }
  // Mean errors over the trials within a factor of the oracle's (plus a small floor). The oracle
  // knows the true inliers; RANSAC also keeps the outliers that happen to fall within the
  // threshold band of their epipolar line (0-7 of them here), which bias the pose, more so the
  // fewer true inliers remain: the factor grows with the outlier ratio.
  const double factor = 1.5 + 2.0 * c.outliers;
  EXPECT_LT(sum_r, factor * oracle_r + 0.02 * trials) << "oracle " << oracle_r / trials;
  EXPECT_LT(sum_t, factor * oracle_t + 0.2 * trials) << "oracle " << oracle_t / trials;
  EXPECT_LT(sum_r / trials, 0.5 * c.noise_px);
  EXPECT_LT(sum_t / trials, 5.0 * c.noise_px);
  EXPECT_GE(worst_recall, 0.95);
  RecordProperty("rotation_error_deg", std::to_string(sum_r / trials));
  RecordProperty("oracle_rotation_error_deg", std::to_string(oracle_r / trials));
  std::printf(
      "noise %.1f outliers %.0f%%: rotation %.3f deg (oracle %.3f), translation %.3f deg "
      "(oracle %.3f), worst recall %.3f\n",
      c.noise_px, 100 * c.outliers, sum_r / trials, oracle_r / trials, sum_t / trials,
      oracle_t / trials, worst_recall);
}

INSTANTIATE_TEST_SUITE_P(Synthetic, TwoViewAccuracy,
                         ::testing::Values(Case{0.5, 0.0}, Case{1.0, 0.0}, Case{0.5, 0.3},
                                           Case{1.0, 0.3}, Case{1.0, 0.5}, Case{1.0, 0.7}),
                         [](const auto& info) {
                           return "noise" + std::to_string(int(info.param.noise_px * 10)) +
                                  "_outliers" + std::to_string(int(info.param.outliers * 100));
                         });

TEST(TwoView, TriangulatedPointsMatchTheTruthUpToScale) {
  SceneOptions o;
  o.noise_px = 0.5;
  const auto s = makeTwoViewScene(o, 77);
  const auto g = estimateRelativePose(s.px1, s.px2, s.cam, s.cam);
  ASSERT_TRUE(g.success());
  ASSERT_GT(g.points.size(), 150u);
  // The scale of the reconstruction is |t| = 1 against the true baseline 1.
  std::vector<double> rel;
  for (size_t k = 0; k < g.points.size(); ++k)
    rel.push_back((g.points[k] - s.X[g.point_indices[k]]).norm() / s.X[g.point_indices[k]].norm());
  std::sort(rel.begin(), rel.end());
  EXPECT_LT(rel[rel.size() / 2], 0.02);
  EXPECT_GT(g.median_triangulation_angle_deg, 5.0);
}

TEST(TwoView, DeterministicForASeed) {
  SceneOptions o;
  o.outlier_ratio = 0.4;
  const auto s = makeTwoViewScene(o, 5);
  TwoViewOptions opt;
  opt.seed = 42;
  const auto a = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, opt);
  const auto b = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, opt);
  EXPECT_EQ(a.inlier_mask, b.inlier_mask);
  EXPECT_EQ(a.relative.R, b.relative.R);
  EXPECT_EQ(a.relative.t, b.relative.t);
}

TEST(TwoView, PlanarSceneIsDetected) {
  SceneOptions o;
  o.planar = true;
  o.noise_px = 0.5;
  o.outlier_ratio = 0.2;
  const auto s = makeTwoViewScene(o, 9);
  const auto g = estimateRelativePose(s.px1, s.px2, s.cam, s.cam);
  EXPECT_EQ(g.config, TwoViewConfig::kPlanar) << g.message;
  EXPECT_GT(g.num_h_inliers, 0.8 * g.num_e_inliers);
  // The five-point solver handles planes; the pose is one of the two that a plane admits.
  EXPECT_GT(g.points.size(), 100u);
}

TEST(TwoView, PureRotationIsPanoramic) {
  SceneOptions o;
  o.baseline = 0;
  o.noise_px = 0.5;
  o.outlier_ratio = 0.3;
  const auto s = makeTwoViewScene(o, 11);
  const auto g = estimateRelativePose(s.px1, s.px2, s.cam, s.cam);
  ASSERT_EQ(g.config, TwoViewConfig::kPanoramic) << g.message;
  EXPECT_LT(testing::rotationErrorDeg(g.relative.R, s.rel.R), 0.1);
  EXPECT_EQ(g.relative.t, Vec3::Zero());
  EXPECT_TRUE(g.points.empty());
}

TEST(TwoView, WrongIntrinsicsFallBackToTheFundamentalMatrix) {
  SceneOptions o;
  o.noise_px = 0.5;
  o.num_points = 300;
  o.max_rotation_deg = 30;
  const auto s = makeTwoViewScene(o, 13);
  Pinhole wrong = s.cam;
  wrong.fx = wrong.fy = 200;  // far from the true 500 px: E fits badly, F fits
  const auto g = estimateRelativePose(s.px1, s.px2, wrong, wrong);
  EXPECT_EQ(g.config, TwoViewConfig::kUncalibrated) << g.message;
  EXPECT_GE(g.num_f_inliers, 290);
}

// A general scene that E explains (30% outliers): both F policies verify it as calibrated.
testing::TwoViewScene explainedScene() {
  SceneOptions o;
  o.noise_px = 0.5;
  o.outlier_ratio = 0.3;
  return makeTwoViewScene(o, 21);
}

// A noise-free scene seen through a focal length 2.5 times too short (200 px for 500).
struct WrongFocal {
  testing::TwoViewScene scene;
  Pinhole wrong;
};
WrongFocal wrongFocalScene() {
  SceneOptions w;
  w.noise_px = 0.5;
  w.num_points = 300;
  w.max_rotation_deg = 30;
  WrongFocal f{makeTwoViewScene(w, 13), {}};
  f.wrong = f.scene.cam;
  f.wrong.fx = f.wrong.fy = 200;
  return f;
}

// F only as E's fallback: a pair E explains is verified exactly as before without F (same
// inliers and pose, as E's RANSAC is unchanged), and a wrong focal length still falls back.
TEST(TwoView, FundamentalOnlyWhenTheEssentialMatrixFails) {
  const auto s = explainedScene();
  TwoViewOptions always, fallback;
  fallback.fundamental = TwoViewOptions::Fundamental::kWhenEssentialFails;
  const auto a = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, always);
  const auto b = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, fallback);
  ASSERT_EQ(a.config, TwoViewConfig::kCalibrated) << a.message;
  EXPECT_EQ(b.config, TwoViewConfig::kCalibrated) << b.message;
  EXPECT_GT(a.num_f_inliers, 0);
  EXPECT_EQ(b.num_f_inliers, 0);  // not estimated
  EXPECT_GT(b.num_h_inliers, 0);  // H still is (the rotation test)
  EXPECT_EQ(a.inlier_mask, b.inlier_mask);
  EXPECT_EQ(a.relative.R, b.relative.R);
  EXPECT_EQ(a.relative.t, b.relative.t);

  const auto [t, wrong] = wrongFocalScene();
  // A focal 2.5 times too short still lets E explain most of these noise-free matches: at
  // the default e_fail_ratio the pair is taken as calibrated (the mapper uses this policy only
  // once the focal length is known); asking E for 99% of them brings F back.
  const auto c0 = estimateRelativePose(t.px1, t.px2, wrong, wrong, fallback);
  EXPECT_EQ(c0.num_f_inliers, 0);
  EXPECT_LT(c0.num_e_inliers, 0.99 * t.px1.size());
  fallback.e_fail_ratio = 0.99;
  const auto c = estimateRelativePose(t.px1, t.px2, wrong, wrong, fallback);
  EXPECT_EQ(c.config, TwoViewConfig::kUncalibrated) << c.message;
  EXPECT_GE(c.num_f_inliers, 290);
}

// kWhenEssentialExplainsPart: F is the fallback of a doubtful focal length (E found a model
// that explains part of the matches), not of a pair that no E explains. A pair of 40 chance
// correspondences (all outliers: no geometry) is verified without F and refused, where
// kWhenEssentialFails estimates F on it; a pair that E explains is verified as by
// kWhenEssentialFails, bit for bit; and a wrong focal length that leaves E part of the
// matches still brings F in.
TEST(TwoView, FundamentalNotForAPairThatNoEssentialMatrixExplains) {
  SceneOptions chance;
  chance.num_points = 40;
  chance.outlier_ratio = 1.0;
  TwoViewOptions fails, part;
  fails.fundamental = TwoViewOptions::Fundamental::kWhenEssentialFails;
  part.fundamental = TwoViewOptions::Fundamental::kWhenEssentialExplainsPart;
  int refusedWithoutF = 0;
  for (std::uint64_t seed = 80; seed < 86; ++seed) {
    SCOPED_TRACE(seed);
    const auto s = makeTwoViewScene(chance, seed);
    const auto a = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, fails);
    const auto b = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, part);
    ASSERT_LT(a.num_e_inliers, fails.min_num_inliers);  // the scene is one no E explains
    EXPECT_GT(a.num_f_inliers, 0);                      // F was estimated ...
    EXPECT_EQ(b.num_f_inliers, 0);                      // ... and is not
    EXPECT_EQ(b.num_e_inliers, a.num_e_inliers);        // E's RANSAC is the same
    EXPECT_NE(b.config, TwoViewConfig::kUncalibrated);
    refusedWithoutF += !b.success();
  }
  EXPECT_EQ(refusedWithoutF, 6);

  const auto s = explainedScene();
  const auto a = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, fails);
  const auto b = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, part);
  ASSERT_EQ(a.config, TwoViewConfig::kCalibrated) << a.message;
  EXPECT_EQ(b.config, a.config);
  EXPECT_EQ(b.inlier_mask, a.inlier_mask);
  EXPECT_EQ(b.relative.R, a.relative.R);
  EXPECT_EQ(b.relative.t, a.relative.t);

  const auto [t, wrong] = wrongFocalScene();
  part.e_fail_ratio = 0.99;  // as in FundamentalOnlyWhenTheEssentialMatrixFails
  const auto c = estimateRelativePose(t.px1, t.px2, wrong, wrong, part);
  EXPECT_GE(c.num_e_inliers, part.min_num_inliers);
  EXPECT_EQ(c.config, TwoViewConfig::kUncalibrated) << c.message;
  EXPECT_GE(c.num_f_inliers, 290);
}

// The guide's E as the first hypothesis: a true prior ends E's search after the samples the
// adaptive rule asks for at its inlier ratio; a wrong prior does not keep the search from the
// truth.
TEST(TwoView, AnEssentialPriorShortensTheSearch) {
  SceneOptions o;
  o.noise_px = 0.5;
  o.outlier_ratio = 0.05;
  o.num_points = 400;
  const auto s = makeTwoViewScene(o, 31);
  Vec2List x1, x2;
  for (size_t i = 0; i < s.px1.size(); ++i) {
    x1.push_back(s.cam.normalize(s.px1[i]));
    x2.push_back(s.cam.normalize(s.px2[i]));
  }
  EssentialEstimator est(x1, x2);
  RansacOptions ro;
  ro.max_error = 2.0 / s.cam.fx;
  ro.min_iterations = 1;
  const Mat3R truth = essentialFromPose(s.rel);
  const auto with = ransac(est, ro, &truth);
  ro.min_iterations = 20;  // the default floor, without a prior
  const auto without = ransac(est, ro);
  ASSERT_TRUE(with.success);
  ASSERT_TRUE(without.success);
  // 95% inliers: ceil(log(0.001) / log(1 - 0.95^5)) = 5 samples at 0.999.
  EXPECT_LE(with.iterations, ransacIterationsNeeded(0.94, 5, 0.999, 5000));
  EXPECT_LT(with.iterations, without.iterations);
  int recall = 0, planted = 0;
  for (size_t i = 0; i < s.inlier.size(); ++i) {
    planted += s.inlier[i];
    recall += s.inlier[i] && with.inlier_mask[i];
  }
  EXPECT_GE(recall, 0.97 * planted);
  EXPECT_NEAR(with.num_inliers, without.num_inliers, 0.02 * planted);
  // A wrong prior (another motion's E).
  Pose other = s.rel;
  other.R = other.R * Eigen::AngleAxisd(0.5, Vec3::UnitY()).toRotationMatrix();
  const Mat3R bad = essentialFromPose(other);
  ro.min_iterations = 1;
  const auto fixed = ransac(est, ro, &bad);
  ASSERT_TRUE(fixed.success);
  EXPECT_NEAR(fixed.num_inliers, without.num_inliers, 0.02 * planted);
}

// H as the plane and rotation test only (TwoViewOptions::homography_test_only): on a scene
// with parallax H's samples are cut to those that would find an H passing the test, and the
// geometry the mapper reads (configuration, inliers, pose, points) is that of the full search;
// a plane and a pure rotation, whose H passes, are detected as before.
TEST(TwoView, HomographyAsTheTestOnlyKeepsTheModelChoice) {
  struct Scene {
    const char* name;
    SceneOptions o;
    TwoViewConfig config;
  };
  std::vector<Scene> scenes;
  for (const double outliers : {0.0, 0.2, 0.4}) {
    Scene sc{"general", {}, TwoViewConfig::kCalibrated};
    sc.o.num_points = 300;
    sc.o.noise_px = 0.5;
    sc.o.outlier_ratio = outliers;
    scenes.push_back(sc);
  }
  Scene plane{"plane", {}, TwoViewConfig::kPlanar};
  plane.o.planar = true;
  plane.o.outlier_ratio = 0.1;
  plane.o.noise_px = 0.5;
  scenes.push_back(plane);
  Scene rotation{"rotation", {}, TwoViewConfig::kPanoramic};
  rotation.o.baseline = 0;
  rotation.o.noise_px = 0.5;
  scenes.push_back(rotation);
  int seed = 60;
  for (const Scene& sc : scenes) {
    SCOPED_TRACE(std::string(sc.name) + " seed " + std::to_string(seed));
    const auto s = makeTwoViewScene(sc.o, seed++);
    TwoViewOptions full;
    full.fundamental = TwoViewOptions::Fundamental::kWhenEssentialFails;
    full.max_error_px = 2.0;
    full.max_iterations = 1000;  // H on a general scene runs to it: keep the test fast
    TwoViewOptions test = full;
    test.homography_test_only = true;
    const TwoViewGeometry a = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, full);
    const TwoViewGeometry b = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, test);
    EXPECT_EQ(a.config, sc.config) << a.message;
    EXPECT_EQ(b.config, a.config) << b.message;
    EXPECT_EQ(b.inlier_mask, a.inlier_mask);
    EXPECT_EQ(b.relative.R, a.relative.R);
    EXPECT_EQ(b.relative.t, a.relative.t);
    EXPECT_EQ(b.point_indices, a.point_indices);
    EXPECT_EQ(b.median_triangulation_angle_deg, a.median_triangulation_angle_deg);
    EXPECT_LE(b.num_h_inliers, a.num_h_inliers);
    // The samples H may draw: the full budget, or the test's at 80% of E's inlier ratio.
    detail::TwoViewSetup st;
    TwoViewGeometry early;
    ASSERT_TRUE(detail::setupTwoView(s.px1, s.px2, s.cam, s.cam, test, false, &st, &early));
    RansacResult<Mat3R> er;
    er.success = true;
    er.num_inliers = a.num_e_inliers;
    const RansacOptions h = detail::homographyOptions(test, st, er);
    EXPECT_EQ(detail::homographyOptions(full, st, er).max_iterations, full.max_iterations);
    if (sc.config == TwoViewConfig::kCalibrated) {
      EXPECT_EQ(h.max_iterations,
                std::max(h.min_iterations,
                         ransacIterationsNeeded(0.8 * a.num_e_inliers / st.n, 4, 0.999, 1000)));
      // The full search of this scene's H draws more (its best H explains few points).
      const auto hfull = ransac(HomographyEstimator(s.px1, s.px2), st.fh);
      EXPECT_GT(hfull.iterations, h.max_iterations);
    }
  }
}

}  // namespace
}  // namespace vidmap::geometry
