// Degenerate and bad input: a clear failure (a message or a vidmap::Error naming the input),
// never a crash or a hang.
#include <gtest/gtest.h>

#include <limits>

#include "vidmap/geometry/essential_5pt.h"
#include "vidmap/geometry/fundamental_7pt.h"
#include "vidmap/geometry/pnp.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/geometry/two_view.h"

namespace vidmap::geometry {
namespace {

using testing::SceneOptions;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Degenerate, TooFewCorrespondences) {
  const Pinhole cam{500, 500, 320, 240};
  Vec2List a(4, Vec2(1, 2)), b(4, Vec2(3, 4));
  const auto g = estimateRelativePose(a, b, cam, cam);
  EXPECT_FALSE(g.success());
  EXPECT_NE(g.message.find("4 correspondences"), std::string::npos) << g.message;
  const auto r = estimatePnP(Vec2List(3), Vec3List(3, Vec3(0, 0, 1)), cam);
  EXPECT_FALSE(r.success);
  EXPECT_NE(r.message.find("3 correspondences"), std::string::npos) << r.message;
  EXPECT_FALSE(estimatePnP({}, {}, cam).success);
  EXPECT_FALSE(estimateRelativePose({}, {}, cam, cam).success());
}

TEST(Degenerate, NaNAndMismatchedInputNameTheProblem) {
  SceneOptions o;
  auto s = testing::makeTwoViewScene(o, 1);
  s.px2[17].y() = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(errorOf([&] { estimateRelativePose(s.px1, s.px2, s.cam, s.cam); }).find("pts2[17]"),
            std::string::npos);
  s.px2.pop_back();
  EXPECT_NE(errorOf([&] { estimateRelativePose(s.px1, s.px2, s.cam, s.cam); }).find("pts2 has"),
            std::string::npos);
  auto p = testing::makePnPScene(o, 2);
  p.X[3].z() = std::numeric_limits<double>::infinity();
  EXPECT_NE(errorOf([&] { estimatePnP(p.px, p.X, p.cam); }).find("world[3]"), std::string::npos);
  p.X[3].z() = 1;
  Pinhole bad = s.cam;
  bad.fx = 0;
  EXPECT_NE(errorOf([&] { estimatePnP(p.px, p.X, bad); }).find("focal"), std::string::npos);
  TwoViewOptions to;
  to.max_h_inlier_ratio = 2;
  EXPECT_NE(errorOf([&] {
              estimateRelativePose(s.px1, s.px1, s.cam, s.cam, to);
            }).find("two_view.max_h_inlier_ratio"),
            std::string::npos);
  PnPOptions po;
  po.max_error_px = -1;
  EXPECT_NE(errorOf([&] { estimatePnP(p.px, p.X, p.cam, po); }).find("pnp.max_error_px"),
            std::string::npos);
}

TEST(Degenerate, DuplicatePointsFailCleanly) {
  const Pinhole cam{500, 500, 320, 240};
  Vec2List a(50, Vec2(100, 120)), b(50, Vec2(130, 110));
  const auto g = estimateRelativePose(a, b, cam, cam);
  EXPECT_FALSE(g.success()) << toString(g.config);
  const auto r = estimatePnP(a, Vec3List(50, Vec3(0.1, 0.2, 3)), cam);
  EXPECT_FALSE(r.success);
  // The minimal solvers on repeated points return nothing usable and do not crash.
  Vec3 x[7];
  for (auto& v : x) v = Vec3(0.1, 0.2, 1);
  std::vector<Mat3> E;
  essential5pt(x, x, &E);
  Vec2 q[7];
  for (auto& v : q) v = Vec2(3, 4);
  std::vector<Mat3> F;
  EXPECT_EQ(fundamental7pt(q, q, &F), 0);
}

TEST(Degenerate, ZeroBaselineIsReportedAsPureRotation) {
  SceneOptions o;
  o.baseline = 0;
  o.max_rotation_deg = 0;  // identical cameras: no motion at all
  o.noise_px = 0.3;
  const auto s = testing::makeTwoViewScene(o, 3);
  const auto g = estimateRelativePose(s.px1, s.px2, s.cam, s.cam);
  EXPECT_EQ(g.config, TwoViewConfig::kPanoramic) << g.message;
  EXPECT_LT(testing::rotationErrorDeg(g.relative.R, Mat3::Identity()), 0.05);
}

TEST(Degenerate, CoplanarPointsAreDetectedAsPlanar) {
  SceneOptions o;
  o.planar = true;
  o.noise_px = 0.5;
  const auto s = testing::makeTwoViewScene(o, 4);
  const auto g = estimateRelativePose(s.px1, s.px2, s.cam, s.cam);
  EXPECT_EQ(g.config, TwoViewConfig::kPlanar) << g.message;
}

TEST(Degenerate, HugeCoordinatesFailCleanly) {
  SceneOptions o;
  auto s = testing::makeTwoViewScene(o, 6);
  for (auto& p : s.px2) p *= 1e200;
  const auto g = estimateRelativePose(s.px1, s.px2, s.cam, s.cam);
  EXPECT_FALSE(g.success()) << toString(g.config);
  auto q = testing::makePnPScene(o, 7);
  for (auto& X : q.X) X *= 1e300;
  EXPECT_FALSE(estimatePnP(q.px, q.X, q.cam).success);
}

TEST(Degenerate, PureOutliersFail) {
  SceneOptions o;
  o.outlier_ratio = 1.0;
  const auto s = testing::makeTwoViewScene(o, 5);
  TwoViewOptions opt;
  opt.max_iterations = 500;
  opt.min_num_inliers = 60;
  const auto g = estimateRelativePose(s.px1, s.px2, s.cam, s.cam, opt);
  EXPECT_FALSE(g.success()) << toString(g.config);
  EXPECT_FALSE(g.message.empty());
}

}  // namespace
}  // namespace vidmap::geometry
