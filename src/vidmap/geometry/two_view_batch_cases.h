// Test support: a keyframe's worth of synthetic pairs with known truth (test_scene.h) that
// exercise every branch of two-view verification (general motion with 0-60% outliers, a
// plane, a pure rotation, a wrong focal length with F as E's fallback, true and wrong E
// priors, H as the plane/rotation test only on a video pair with and without a plane, too few
// matches), and the bitwise comparison of two verification results.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/geometry/two_view_batch.h"

namespace vidmap::geometry::testing {

struct BatchCase {
  TwoViewScene scene;
  TwoViewPair pair;
  bool truth_checked = false;  // a calibrated general-motion pair: its pose is checked
};

// Cases live in a deque: each pair points at its scene's points.
inline std::deque<BatchCase> makeBatchCases() {
  std::deque<BatchCase> cases;
  auto add = [&](const SceneOptions& o, std::uint64_t seed) -> BatchCase& {
    BatchCase& c = cases.emplace_back();
    c.scene = makeTwoViewScene(o, seed);
    c.pair.pts1 = &c.scene.px1;
    c.pair.pts2 = &c.scene.px2;
    c.pair.cam1 = c.pair.cam2 = c.scene.cam;
    c.pair.options.max_iterations = 1000;  // H on a general scene runs to it: keep tests fast
    return c;
  };
  for (const double outliers : {0.0, 0.1, 0.3, 0.6}) {
    SceneOptions o;
    o.num_points = 300;
    o.outlier_ratio = outliers;
    o.noise_px = 0.7;
    add(o, 100 + static_cast<int>(outliers * 10)).truth_checked = true;
  }
  {
    SceneOptions o;  // video: E with the guide's prior (the truth), F only as the fallback
    o.num_points = 500;
    o.outlier_ratio = 0.05;
    o.max_rotation_deg = 5;
    o.baseline = 0.3;
    BatchCase& c = add(o, 7);
    c.pair.essential_prior = essentialFromPose(c.scene.rel);
    c.pair.options.fundamental = TwoViewOptions::Fundamental::kWhenEssentialFails;
    c.pair.options.prior_min_iterations = 1;
    c.pair.options.homography_test_only = true;  // H only as the plane/rotation test
    c.truth_checked = true;
  }
  {
    SceneOptions o;  // video, a plane: H passes its test
    o.planar = true;
    o.num_points = 300;
    o.outlier_ratio = 0.1;
    BatchCase& c = add(o, 12);
    c.pair.essential_prior = essentialFromPose(c.scene.rel);
    c.pair.options.fundamental = TwoViewOptions::Fundamental::kWhenEssentialFails;
    c.pair.options.homography_test_only = true;
  }
  {
    SceneOptions o;  // a wrong prior
    o.num_points = 250;
    o.outlier_ratio = 0.2;
    BatchCase& c = add(o, 8);
    Pose other = c.scene.rel;
    other.R = other.R * Eigen::AngleAxisd(0.5, Vec3::UnitY()).toRotationMatrix();
    c.pair.essential_prior = essentialFromPose(other);
  }
  {
    SceneOptions o;  // a plane
    o.planar = true;
    o.num_points = 200;
    o.outlier_ratio = 0.1;
    add(o, 9);
  }
  {
    SceneOptions o;  // a pure rotation
    o.baseline = 0;
    o.num_points = 200;
    add(o, 10);
  }
  {
    SceneOptions o;  // a focal 2.5 times too short: F when E fails
    o.noise_px = 0.5;
    o.num_points = 300;
    o.max_rotation_deg = 30;
    BatchCase& c = add(o, 13);
    c.pair.cam1.fx = c.pair.cam1.fy = c.pair.cam2.fx = c.pair.cam2.fy = 200;
    c.pair.options.fundamental = TwoViewOptions::Fundamental::kWhenEssentialFails;
    c.pair.options.e_fail_ratio = 0.99;
  }
  for (const auto mode : {TwoViewOptions::Fundamental::kWhenEssentialFails,
                          TwoViewOptions::Fundamental::kWhenEssentialExplainsPart}) {
    SceneOptions o;  // chance correspondences, which no E explains: F or not by the mode
    o.num_points = 40;
    o.outlier_ratio = 1.0;
    BatchCase& c = add(o, 14);
    c.pair.options.fundamental = mode;
    c.pair.options.homography_test_only = true;
  }
  {
    SceneOptions o;  // too few matches
    o.num_points = 10;
    add(o, 11);
  }
  return cases;
}

inline void expectSameGeometry(const TwoViewGeometry& a, const TwoViewGeometry& b,
                               const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.E, b.E);
  EXPECT_EQ(a.F, b.F);
  EXPECT_EQ(a.H, b.H);
  EXPECT_EQ(a.relative.R, b.relative.R);
  EXPECT_EQ(a.relative.t, b.relative.t);
  EXPECT_EQ(a.inlier_mask, b.inlier_mask);
  EXPECT_EQ(a.num_inliers, b.num_inliers);
  EXPECT_EQ(a.num_e_inliers, b.num_e_inliers);
  EXPECT_EQ(a.num_f_inliers, b.num_f_inliers);
  EXPECT_EQ(a.num_h_inliers, b.num_h_inliers);
  EXPECT_EQ(a.point_indices, b.point_indices);
  ASSERT_EQ(a.points.size(), b.points.size());
  for (size_t i = 0; i < a.points.size(); ++i) EXPECT_EQ(a.points[i], b.points[i]);
  EXPECT_EQ(a.median_triangulation_angle_deg, b.median_triangulation_angle_deg);
}

}  // namespace vidmap::geometry::testing
