#include "vidmap/pipeline/focal_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "vidmap/core/error.h"

namespace vidmap::pipeline {
namespace {

using geometry::Vec2;
using geometry::Vec3;

// A model built from the truth (src/vidmap/synth's conventions by hand: world-to-camera poses,
// keypoints projected with 0.5 px of noise): 10 keyframes 0.1 apart along x, turning about y by
// turnDeg each, looking at 300 points 4 to 7 in front; unknown SIMPLE_RADIAL camera with the
// true focal length 500 px (640 x 480).
struct Scene {
  sfm::KeyframeStore keyframes;
  std::unique_ptr<sfm::Reconstruction> rec;
};

void buildScene(Scene& s, double turnDeg) {
  sfm::Camera cam = sfm::Camera::fromSpec(sfm::CameraSpec{}, 640, 480, 640, 480);
  cam.mutableParams()[0] = 500;
  ASSERT_FALSE(cam.fixed());
  const int n = 10;
  std::vector<geometry::Pose> poses(n);
  for (int i = 0; i < n; ++i) {
    poses[i].R =
        Eigen::AngleAxisd(turnDeg * M_PI / 180 * (i - n / 2), Vec3::UnitY()).toRotationMatrix();
    const Vec3 centre(0.1 * i, 0, 0);
    poses[i].t = -poses[i].R * centre;
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> ux(-2, 2), uy(-1.5, 1.5), uz(4, 7);
  std::normal_distribution<double> noise(0, 0.5);
  s.keyframes.resize(n);
  std::vector<Vec3> X;
  std::vector<std::vector<sfm::FeatureRef>> tracks;
  for (int k = 0; k < 300; ++k) {
    X.emplace_back(ux(rng), uy(rng), uz(rng));
    tracks.emplace_back();
    for (int i = 0; i < n; ++i) {
      sfm::Keyframe& kf = s.keyframes[i];
      kf.id = i;
      tracks.back().push_back({i, static_cast<int>(kf.keypoints.size())});
      kf.keypoints.push_back(cam.project(poses[i].apply(X.back())) + Vec2(noise(rng), noise(rng)));
      kf.colors.push_back({});
      kf.normalized.push_back({0, 0});
    }
  }
  s.rec = std::make_unique<sfm::Reconstruction>(&s.keyframes, cam);
  for (int i = 0; i < n; ++i) s.rec->registerImage(i, poses[i]);
  for (size_t k = 0; k < X.size(); ++k) s.rec->addPoint(X[k], tracks[k]);
}

// The profiled adjustments stop at chi2Precision sigma^2 instead of a relative 1e-10: fewer
// iterations, the same statistic to well within what the decision reads (sigma_f / f against
// maxRelUncertainty), on a model whose views turn (determined) and one that only translates
// (the depth-focal ambiguity: undetermined).
TEST(FocalCheck, PrecisionStopGivesTheSameUncertainty) {
  for (const double turnDeg : {6.0, 0.0}) {
    Scene s;
    buildScene(s, turnDeg);
    FocalCheckOptions tight;
    tight.chi2Precision = 0;  // the former stop: relative cost change 1e-10
    const FocalCheck a = checkFocal(*s.rec, tight);
    const FocalCheck b = checkFocal(*s.rec);  // chi2Precision 0.01
    ASSERT_TRUE(a.ran && b.ran);
    std::printf("  turn %.0f deg/view: sigma_f / f %.5g (%d iterations) against %.5g (%d)\n",
                turnDeg, a.relUncertainty, a.iterations, b.relUncertainty, b.iterations);
    EXPECT_EQ(a.undetermined, b.undetermined);
    EXPECT_EQ(a.undetermined, turnDeg == 0.0);
    EXPECT_LE(b.iterations, a.iterations);
    // The rise of chi-square to 0.1 sigma^2 (3 x chi2Precision, with margin for where each
    // adjustment stops), and sigma_f / f within 1%.
    EXPECT_NEAR(b.deltaChi2, a.deltaChi2, std::max(0.1, 0.01 * a.deltaChi2));
    if (!a.undetermined) {
      EXPECT_NEAR(b.relUncertainty, a.relUncertainty, 0.01 * a.relUncertainty);
    }
  }
  FocalCheckOptions bad;
  bad.chi2Precision = -1;
  EXPECT_THROW(bad.check(), Error);
}

// The sides' rise rule (riseTolerance): each side stops when an iteration lowers its cost by
// less than 1e-3 of its rise over the centre. Against the sides run to the former stop (no rise
// rule, chi2Precision 0: a relative 1e-10), on views that turn by 6 to 12 degrees each (rises of
// hundreds to thousands of sigma^2): fewer iterations, the rise and sigma_f / f within 0.5%
// (the rule's 0.1% with margin for LM's tail), the same decision; on the translation
// (undetermined, a rise of a few sigma^2 at most) the same decision.
TEST(FocalCheck, RiseRuleGivesTheSameUncertaintyInFewerIterations) {
  int fewer = 0;
  for (const double turnDeg : {6.0, 8.0, 12.0, 0.0}) {
    Scene s;
    buildScene(s, turnDeg);
    FocalCheckOptions tight;
    tight.chi2Precision = 0;
    tight.riseTolerance = 0;
    FocalCheckOptions rule = tight;
    rule.riseTolerance = 1e-3;
    const FocalCheck a = checkFocal(*s.rec, tight);
    const FocalCheck b = checkFocal(*s.rec, rule);
    ASSERT_TRUE(a.ran && b.ran);
    std::printf("  turn %.0f deg/view: delta chi2 %.6g (%d iterations) against %.6g (%d)\n",
                turnDeg, a.deltaChi2, a.iterations, b.deltaChi2, b.iterations);
    EXPECT_EQ(a.undetermined, b.undetermined);
    EXPECT_EQ(a.undetermined, turnDeg == 0.0);
    EXPECT_LE(b.iterations, a.iterations);
    if (b.iterations < a.iterations) ++fewer;
    if (!a.undetermined) {
      EXPECT_NEAR(b.deltaChi2, a.deltaChi2, 0.005 * a.deltaChi2);
      EXPECT_NEAR(b.relUncertainty, a.relUncertainty, 0.005 * a.relUncertainty);
    }
  }
  EXPECT_GE(fewer, 2);  // the rule takes effect, not only the tolerance below it
  FocalCheckOptions bad;
  bad.riseTolerance = 1.5;
  EXPECT_THROW(bad.check(), Error);
}

}  // namespace
}  // namespace vidmap::pipeline
