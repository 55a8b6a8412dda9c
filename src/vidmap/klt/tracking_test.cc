// Synthetic sequences: known warps of the textured scene, the failure cases, the period-8
// texture and chunk invariance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "vidmap/klt/test_support.h"
#include "vidmap/synth/scene2d.h"

namespace vidmap::klt {
namespace {

using testing::PairResult;
using testing::trackPair;
using testing::warpError;
using testing::warpStats;

const GrayImage& scene640() {
  static const GrayImage img = synth::makeTexturedScene({});
  return img;
}

// The design's 40 test points: 8 x 5 with 100 px side and 80 px top/bottom margins.
std::vector<std::pair<float, float>> points40() {
  return synth::gridPoints(640, 360, 8, 5, 100, 80);
}

PairResult trackWarp(const synth::Warp2d& w, const Options& o,
                     const std::vector<std::pair<float, float>>& pts) {
  const GrayImage J = synth::warpImage(scene640(), w);
  return trackPair(640, 360, o, scene640(), J, pts);
}

struct Shift {
  double dx, dy, bound;
};

class Translation : public ::testing::TestWithParam<Shift> {};

TEST_P(Translation, EveryTrackKeptWithinBound) {
  const Shift s = GetParam();
  const auto w = synth::translation(s.dx, s.dy);
  const PairResult r = trackWarp(w, optionsFor(640), points40());
  const auto st = warpStats(r, w);
  std::printf("translation (%.1f, %.1f): kept %d/40, max error %.4f px, median %.4f px\n", s.dx,
              s.dy, st.kept, st.maxError, st.medianError);
  EXPECT_EQ(st.kept, 40);
  EXPECT_LE(st.maxError, s.bound);
}

INSTANTIATE_TEST_SUITE_P(Design71, Translation,
                         ::testing::Values(Shift{0.3, 0.2, 0.05}, Shift{3.7, -2.1, 0.05},
                                           Shift{12.5, 9.0, 0.1}, Shift{30, -24, 0.1}));

// The instrument: the 30 px shift needs the pyramid. With one level the tracks are lost or
// wrong (some pass the checks about 40 px off on the self-similar checker).
TEST(Translation, ThirtyPixelsFailsWithOneLevel) {
  const auto w = synth::translation(30, -24);
  Options o = optionsFor(640);
  o.levels = 1;
  const PairResult r = trackWarp(w, o, points40());
  int correct = 0, kept = 0;
  for (std::size_t i = 0; i < r.seeds.size(); ++i) {
    if (!statusAlive(r.checked[i].status)) continue;
    ++kept;
    if (warpError(r.seeds[i], r.checked[i], w) <= 0.1) ++correct;
  }
  std::printf("one level, (30, -24): kept %d/40, correct %d\n", kept, correct);
  EXPECT_LE(correct, 4);
}

TEST(Translation, Large1280WithTheDefaultsOf1280) {
  synth::TexturedSceneOptions so;
  so.width = 1280;
  so.height = 720;
  const GrayImage I = synth::makeTexturedScene(so);
  const auto w = synth::translation(60, -48);
  const GrayImage J = synth::warpImage(I, w);
  const Options o = optionsFor(1280);
  ASSERT_EQ(o.levels, 6);
  ASSERT_EQ(o.halfWindow, 10);
  const PairResult r = trackPair(1280, 720, o, I, J, synth::gridPoints(1280, 720, 6, 4, 200, 160));
  const auto st = warpStats(r, w);
  std::printf("1280 x 720, (60, -48): kept %d/24, max error %.4f px\n", st.kept, st.maxError);
  EXPECT_GE(st.kept, 22);
  EXPECT_LE(st.maxError, 0.1);
}

// Rotation about the centre: the translation model of the window lets the error grow with
// the distance r from the centre: < 0.2 px within 70 px, < 0.05 + 0.0035 r.
struct RotationStats {
  int kept = 0;
  int overBound = 0;
  double maxError = 0;
};

RotationStats rotationCase(double degrees) {
  const auto w = synth::rotationAboutCentre(degrees, 640, 360);
  const PairResult r = trackWarp(w, optionsFor(640), points40());
  RotationStats s;
  for (std::size_t i = 0; i < r.seeds.size(); ++i) {
    if (!statusAlive(r.checked[i].status)) continue;
    ++s.kept;
    const double e = warpError(r.seeds[i], r.checked[i], w);
    const double rad = std::hypot(r.seeds[i].x - 319.5, r.seeds[i].y - 179.5);
    const double bound = rad <= 70 ? 0.2 : 0.05 + 0.0035 * rad;
    if (e >= bound) ++s.overBound;
    s.maxError = std::max(s.maxError, e);
  }
  std::printf("rotation %.0f deg: kept %d/40, max error %.3f px, over the bound %d\n", degrees,
              s.kept, s.maxError, s.overBound);
  return s;
}

TEST(Rotation, FiveDegreesWithinTheRadialBound) {
  const RotationStats s = rotationCase(5);
  EXPECT_EQ(s.kept, 40);
  EXPECT_EQ(s.overBound, 0);
}

TEST(Rotation, TwoAndTenDegreesReported) {
  const RotationStats two = rotationCase(2);
  EXPECT_EQ(two.overBound, 0);
  EXPECT_GE(two.kept, 38);
  const RotationStats ten = rotationCase(10);  // reported; the design keeps a few wrong ones
  EXPECT_GT(ten.kept, 0);
}

TEST(Scale, OnePointZeroFive) {
  const auto w = synth::scaleAboutCentre(1.05, 640, 360);
  const PairResult r = trackWarp(w, optionsFor(640), points40());
  int over = 0;
  double maxError = 0;
  for (std::size_t i = 0; i < r.seeds.size(); ++i) {
    if (!statusAlive(r.checked[i].status)) continue;
    const double e = warpError(r.seeds[i], r.checked[i], w);
    const double rad = std::hypot(r.seeds[i].x - 319.5, r.seeds[i].y - 179.5);
    if (e >= (rad <= 70 ? 0.2 : 0.05 + 0.0035 * rad)) ++over;
    maxError = std::max(maxError, e);
  }
  const auto st = warpStats(r, w);
  std::printf("scale 1.05: kept %d/40, max error %.3f px\n", st.kept, maxError);
  EXPECT_EQ(st.kept, 40);
  EXPECT_EQ(over, 0);
}

// Gain 1.1 and offset 0.05 (item 3): photometric 2 keeps all within 0.3 px; the plain SSD
// form (0) fails, as the design documents (4 of 40 kept there).
TEST(Brightness, GainAndOffsetNeedThePhotometricModel) {
  const auto w = [] {
    auto g = synth::gainOffset(1.1, 0.05);
    g.tx = 1.3;  // a small motion too, so that the error is measured
    g.ty = -0.7;
    return g;
  }();
  Options o = optionsFor(640);
  const auto mode2 = warpStats(trackWarp(w, o, points40()), w);
  o.photometric = 1;
  const auto mode1 = warpStats(trackWarp(w, o, points40()), w);
  o.photometric = 0;
  const auto mode0 = warpStats(trackWarp(w, o, points40()), w);
  std::printf(
      "gain 1.1 offset 0.05: mode 2 kept %d/40 max %.3f px; mode 1 kept %d max %.3f; "
      "mode 0 kept %d max %.3f\n",
      mode2.kept, mode2.maxError, mode1.kept, mode1.maxError, mode0.kept, mode0.maxError);
  EXPECT_EQ(mode2.kept, 40);
  EXPECT_LE(mode2.maxError, 0.3);
  EXPECT_TRUE(mode0.kept < 40 || mode0.maxError > 0.3) << "plain SSD was expected to fail";
}

// Item 4: each failure ends with its reason of 3.5.
TEST(FailureCases, EndWithTheirReasons) {
  const synth::FailureScene s = synth::makeFailureScene(640, 360, 3);
  std::vector<std::pair<float, float>> pts;
  for (const auto& p : s.points) pts.emplace_back(p.x, p.y);
  const PairResult r = trackPair(640, 360, optionsFor(640), s.frame0, s.frame1, pts);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const int reason = statusReason(r.checked[i].status);
    const bool alive = statusAlive(r.checked[i].status);
    std::printf("failure point %zu (kind %d) at (%.0f, %.0f): reason %d (%s)\n", i,
                static_cast<int>(s.points[i].kind), pts[i].first, pts[i].second, reason,
                endReasonName(reason));
    switch (s.points[i].kind) {
      case synth::FailureKind::kTextureless:
      case synth::FailureKind::kLine:
        EXPECT_EQ(reason, 2) << "point " << i;
        break;
      case synth::FailureKind::kBorder:
        EXPECT_EQ(reason, 1) << "point " << i;
        break;
      case synth::FailureKind::kOcclusion:
        EXPECT_TRUE(reason == 3 || reason == 4 || reason == 5) << "point " << i << " " << reason;
        break;
      case synth::FailureKind::kClean: {
        EXPECT_TRUE(alive) << "point " << i << " reason " << reason;
        // A half-pixel shift resamples the frame the most (bilinear bias up to ~0.05 px).
        EXPECT_NEAR(r.checked[i].x, pts[i].first + s.dx, 0.1);
        EXPECT_NEAR(r.checked[i].y, pts[i].second + s.dy, 0.1);
        break;
      }
    }
  }
}

// Item 6: a texture of period 8 px shifted by 4 px (half a period): forward tracks converge
// to wrong places, and the check drops at least 90 % of those more than 1 px wrong. With
// the checks off the wrong tracks stay (the instrument).
TEST(ForwardBackward, PeriodEightDropsWrongTracks) {
  const GrayImage I = synth::makePeriodicTexture(640, 360, 8, 5);
  const auto w = synth::translation(4, 0);
  const GrayImage J = synth::warpImage(I, w);
  const auto pts = synth::gridPoints(640, 360, 12, 8, 60, 40);  // 96 points
  Options o = optionsFor(640);
  const PairResult r = trackPair(640, 360, o, I, J, pts);
  int wrong = 0, wrongDropped = 0, correct = 0, keptWrong = 0;
  double travel = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double e = warpError(r.seeds[i], r.forward[i], w);
    travel = std::max(travel, static_cast<double>(std::hypot(r.forward[i].x - r.seeds[i].x,
                                                             r.forward[i].y - r.seeds[i].y)));
    const bool fwdAlive = statusAlive(r.forward[i].status);
    if (e > 1.0 && fwdAlive) {
      ++wrong;
      if (!statusAlive(r.checked[i].status)) ++wrongDropped;
    }
    if (e <= 1.0) ++correct;
    if (e > 1.0 && statusAlive(r.checked[i].status)) ++keptWrong;
  }
  std::printf(
      "period 8, shift 4: %d forward tracks > 1 px wrong, %d dropped by the check, "
      "%d correct, longest travel %.1f px\n",
      wrong, wrongDropped, correct, travel);
  ASSERT_GE(wrong, 10) << "the case must produce wrong forward tracks";
  EXPECT_GE(wrongDropped * 10, wrong * 9);
  EXPECT_EQ(keptWrong, 0);
  // Instrument: with both checks off, the wrong tracks are kept.
  o.fbThresholdPx = 1e9f;
  o.nccThreshold = -2.0f;
  const PairResult off = trackPair(640, 360, o, I, J, pts);
  int keptOff = 0;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (statusAlive(off.forward[i].status) && warpError(off.seeds[i], off.forward[i], w) > 1.0 &&
        statusAlive(off.checked[i].status))
      ++keptOff;
  EXPECT_EQ(keptOff, wrong);
}

// Item 5: one call and calls of 3 tracks give the same bits, forward, backward and checked.
TEST(ChunkInvariance, SameBitsInChunksOfThree) {
  const auto w = synth::rotationAboutCentre(5, 640, 360);
  const GrayImage J = synth::warpImage(scene640(), w);
  auto pts = points40();
  const synth::FailureScene fs = synth::makeFailureScene(640, 360, 3);
  for (const auto& p : fs.points) pts.emplace_back(p.x, p.y);  // dead tracks too
  const Options o = optionsFor(640);
  const PairResult one = trackPair(640, 360, o, scene640(), J, pts, 0);
  const PairResult three = trackPair(640, 360, o, scene640(), J, pts, 3);
  const std::size_t bytes = pts.size() * sizeof(TrackRecord);
  EXPECT_EQ(std::memcmp(one.forward.data(), three.forward.data(), bytes), 0);
  EXPECT_EQ(std::memcmp(one.backward.data(), three.backward.data(), bytes), 0);
  EXPECT_EQ(std::memcmp(one.checked.data(), three.checked.data(), bytes), 0);
}

// The status word: iterations at level 0 are recorded and within the bound.
TEST(StatusWord, IterationsAtLevelZero) {
  const auto w = synth::translation(3.7, -2.1);
  const PairResult r = trackWarp(w, optionsFor(640), points40());
  for (const auto& c : r.checked) {
    ASSERT_TRUE(statusAlive(c.status));
    EXPECT_GE(statusIterations(c.status), 1);
    EXPECT_LE(statusIterations(c.status), 20);
    EXPECT_EQ(static_cast<float>(statusWord(c.status)), c.status);  // exact integer
  }
}

}  // namespace
}  // namespace vidmap::klt
