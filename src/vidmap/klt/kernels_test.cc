// Unit tests of the shared functions of kernels.h against independent computations (double
// precision formulas, emulated warp reductions), and of the options.
#include "vidmap/klt/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/klt/layout.h"
#include "vidmap/klt/options.h"
#include "vidmap/synth/scene2d.h"

namespace vidmap::klt {
namespace {

TEST(Layout, LevelSizesAreCeilOfHalf) {
  const Layout l = makeLayout(640, 360, 5);
  const int w[] = {640, 320, 160, 80, 40}, h[] = {360, 180, 90, 45, 23};
  std::int64_t off = 0;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(l.width[i], w[i]);
    EXPECT_EQ(l.height[i], h[i]);
    EXPECT_EQ(l.offset[i], off);
    off += static_cast<std::int64_t>(w[i]) * h[i];
  }
  EXPECT_EQ(l.total, 306920);
  const Layout odd = makeLayout(7, 5, 4);
  EXPECT_EQ(odd.width[3], 1);
  EXPECT_EQ(odd.height[3], 1);
  EXPECT_EQ(odd.total, 35 + 12 + 4 + 1);
}

TEST(Gray, Rec601) {
  EXPECT_EQ(grayFromRgb(0, 0, 0), 0.0f);
  EXPECT_NEAR(grayFromRgb(255, 255, 255), 1.0f, 1e-6f);
  for (int v : {1, 17, 128, 200})
    EXPECT_NEAR(grayFromRgb(v, 255 - v, v / 2),
                (0.299 * v + 0.587 * (255 - v) + 0.114 * (v / 2)) / 255.0, 1e-6);
}

TEST(PyrDown, BinomialWeightsAndClampedBorder) {
  // An impulse at (8, 8) of a 17 x 17 image: output (4, 4) sees it with weight 36/256, and
  // (3, 4) (source column 6 = centre - 2) with 6/256.
  std::vector<float> img(17 * 17, 0.0f);
  img[8 * 17 + 8] = 256.0f;
  EXPECT_EQ(pyrDownPixel(img.data(), 17, 17, 4, 4), 36.0f);
  EXPECT_EQ(pyrDownPixel(img.data(), 17, 17, 3, 4), 6.0f);
  EXPECT_EQ(pyrDownPixel(img.data(), 17, 17, 4, 3), 6.0f);
  EXPECT_EQ(pyrDownPixel(img.data(), 17, 17, 5, 5), 1.0f);
  // A constant image stays constant, also at the clamped border.
  std::vector<float> c(9 * 5, 0.25f);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_EQ(pyrDownPixel(c.data(), 9, 5, x, y), 0.25f);
}

TEST(Scharr, RampGivesItsSlopePerPixel) {
  const int w = 12, h = 10;
  std::vector<float> img(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img[y * w + x] = 0.25f * x - 0.125f * y;
  float gx, gy;
  scharrPixel(img.data(), w, h, 5, 4, &gx, &gy);
  EXPECT_EQ(gx, 0.25f);
  EXPECT_EQ(gy, -0.125f);
  scharrPixel(img.data(), w, h, 0, 0, &gx, &gy);  // one-sided at the clamped border
  EXPECT_EQ(gx, 0.125f);
  EXPECT_EQ(gy, -0.0625f);
}

TEST(Bilinear, ExactOnAPlaneAndAtPixels) {
  const int w = 8, h = 6;
  std::vector<float> img(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img[y * w + x] = 0.5f * x + 0.25f * y;
  EXPECT_EQ(bilinearSample(img.data(), w, h, 3.0f, 2.0f), img[2 * w + 3]);
  EXPECT_NEAR(bilinearSample(img.data(), w, h, 3.25f, 2.5f), 0.5 * 3.25 + 0.25 * 2.5, 1e-6);
  EXPECT_EQ(bilinearSample(img.data(), w, h, -3.0f, -1.0f), img[0]);  // clamped
}

// laneTreeSum equals an emulated warp that reduces with xor shuffles, on every lane.
TEST(LaneSum, EqualsXorButterflyOnEveryLane) {
  synth::Rng rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    float acc[kLanes], lanes[kLanes];
    for (int l = 0; l < kLanes; ++l)
      acc[l] = lanes[l] =
          static_cast<float>(rng.uniform(-1, 1) * std::pow(10.0, rng.uniform(-3, 3)));
    for (int off = 16; off >= 1; off >>= 1) {
      float next[kLanes];
      for (int l = 0; l < kLanes; ++l) next[l] = lanes[l] + lanes[l ^ off];
      std::memcpy(lanes, next, sizeof(lanes));
    }
    const float tree = laneTreeSum(acc);
    for (int l = 0; l < kLanes; ++l) ASSERT_EQ(std::memcmp(&tree, &lanes[l], 4), 0);
  }
}

TEST(MinEigen, MatchesTheClosedFormInDouble) {
  synth::Rng rng(3);
  for (int i = 0; i < 200; ++i) {
    const double a = rng.uniform(0, 2), c = rng.uniform(0, 2),
                 b = rng.uniform(-1, 1) * std::sqrt(a * c);
    const double l = ((a + c) - std::sqrt((a - c) * (a - c) + 4 * b * b)) / 2;
    EXPECT_NEAR(minEigen2x2(float(a), float(b), float(c)), std::max(l, 0.0), 1e-5);
  }
}

TEST(StatusWord, RoundTripsAndIsExact) {
  for (int reason = 0; reason < kEndReasonCount; ++reason)
    for (int it : {0, 1, 7, 20, 255}) {
      const float s = makeStatus(reason, it);
      EXPECT_EQ(statusAlive(s), reason == 0);
      EXPECT_EQ(statusReason(s), reason);
      EXPECT_EQ(statusIterations(s), it);
      EXPECT_EQ(static_cast<float>(statusWord(s)), s);
    }
}

TEST(Check, ReasonsInOrder) {
  const TrackRecord seed = seedRecord(100, 100, 0);
  const TrackRecord fwd{103.0f, 98.0f, 0.95f, makeStatus(0, 4)};
  TrackRecord bwd{100.1f, 100.0f, 0.9f, makeStatus(0, 3)};
  TrackRecord c = checkTrack(seed, fwd, bwd, 0.5f, 0.8f);
  EXPECT_TRUE(statusAlive(c.status));
  EXPECT_EQ(statusIterations(c.status), 4);
  EXPECT_NEAR(c.measure, 0.1f, 1e-5f);
  EXPECT_EQ(c.x, 103.0f);
  bwd.x = 101.0f;  // forward-backward error 1 px
  EXPECT_EQ(statusReason(checkTrack(seed, fwd, bwd, 0.5f, 0.8f).status), 4);
  bwd.x = 100.1f;
  TrackRecord lowNcc = fwd;
  lowNcc.measure = 0.5f;
  EXPECT_EQ(statusReason(checkTrack(seed, lowNcc, bwd, 0.5f, 0.8f).status), 5);
  TrackRecord dead = fwd;
  dead.status = makeStatus(3, 20);
  c = checkTrack(seed, dead, bwd, 0.5f, 0.8f);
  EXPECT_EQ(statusReason(c.status), 3);
  EXPECT_EQ(statusIterations(c.status), 20);
  TrackRecord nanBack = bwd;
  nanBack.x = NAN;
  EXPECT_EQ(statusReason(checkTrack(seed, fwd, nanBack, 0.5f, 0.8f).status), 4);
}

TEST(Selection, CellOfAndGrid) {
  const CellGrid g = makeCellGrid(640, 360, 8.0f);
  EXPECT_EQ(g.cellPx, 8);
  EXPECT_EQ(g.cellsX, 80);
  EXPECT_EQ(g.cellsY, 45);
  EXPECT_EQ(cellOf(g, 7.9f, 0.0f), 0);
  EXPECT_EQ(cellOf(g, 8.0f, 8.0f), 81);
  EXPECT_EQ(cellOf(g, -5.0f, 1000.0f), 44 * 80);  // clamped
  EXPECT_EQ(makeCellGrid(1000, 500, 12.5f).cellPx, 13);
}

TEST(Selection, SelectCellTakesTheFirstBestAndHonoursOccupancy) {
  const int w = 16, h = 8;
  std::vector<float> eig(w * h, 0.0f);
  eig[2 * w + 3] = 0.5f;
  eig[5 * w + 6] = 0.5f;  // a tie later in raster order
  eig[1 * w + 12] = 0.001f;
  const CellGrid g = makeCellGrid(w, h, 8.0f);
  Pick p = selectCell(eig.data(), w, h, g, 0, 0.1f, false);
  EXPECT_EQ(p.x, 3.0f);
  EXPECT_EQ(p.y, 2.0f);
  EXPECT_EQ(p.score, 0.5f);
  EXPECT_EQ(selectCell(eig.data(), w, h, g, 0, 0.1f, true).score, 0.0f);
  EXPECT_EQ(selectCell(eig.data(), w, h, g, 1, 0.1f, false).score, 0.0f);  // below quality
  EXPECT_EQ(selectCell(eig.data(), w, h, g, 1, 0.0f, false).score, 0.001f);
  std::vector<float> flat(w * h, 0.0f);
  EXPECT_EQ(selectCell(flat.data(), w, h, g, 0, 0.0f, false).score, 0.0f);  // no pick at 0
}

TEST(Selection, SuppressionRule) {
  const CellGrid g = makeCellGrid(32, 8, 8.0f);  // 4 x 1 cells
  std::vector<Pick> picks(4);
  picks[0] = {7, 4, 1.0f};
  picks[1] = {10, 4, 2.0f};  // stronger, 3 px away: ends pick 0
  picks[2] = {20, 4, 2.0f};  // equal to pick 1, 10 px away: both stay
  picks[3] = {26, 4, 2.0f};  // equal to pick 2, 6 px away: the lower cell (2) wins
  const std::vector<int> noTracks(5, 0);
  const float* none = nullptr;
  EXPECT_FALSE(keepPick(picks.data(), g, 0, 8.0f, noTracks.data(), none));
  EXPECT_TRUE(keepPick(picks.data(), g, 1, 8.0f, noTracks.data(), none));
  EXPECT_TRUE(keepPick(picks.data(), g, 2, 8.0f, noTracks.data(), none));
  EXPECT_FALSE(keepPick(picks.data(), g, 3, 8.0f, noTracks.data(), none));
  // An alive track in cell 0, 5 px from pick 1, ends it.
  const std::vector<int> start = {0, 1, 1, 1, 1};
  const float xy[] = {5.0f, 4.0f};
  EXPECT_FALSE(keepPick(picks.data(), g, 1, 8.0f, start.data(), xy));
  EXPECT_TRUE(keepPick(picks.data(), g, 2, 8.0f, start.data(), xy));
}

TEST(Options, DefaultsAndClasses) {
  const Options o = optionsFor(640);
  EXPECT_EQ(o.levels, 5);
  EXPECT_EQ(o.halfWindow, 7);
  EXPECT_EQ(o.maxIterations, 20);
  EXPECT_EQ(o.epsilonPx, 0.03f);
  EXPECT_EQ(o.minEigThreshold, 1e-6f);
  EXPECT_EQ(o.fbThresholdPx, 0.5f);
  EXPECT_EQ(o.nccThreshold, 0.8f);
  EXPECT_EQ(o.photometric, 2);
  EXPECT_EQ(o.blockSize, 3);
  EXPECT_EQ(o.qualityLevel, 0.01f);
  EXPECT_EQ(o.minDistancePx, 8.0f);
  EXPECT_EQ(o.maxAgeFrames, 16);
  EXPECT_EQ(o.capacity, 1024);
  const Options big = optionsFor(1280);
  EXPECT_EQ(big.levels, 6);
  EXPECT_EQ(big.halfWindow, 10);
  EXPECT_EQ(big.minDistancePx, 16.0f);
  EXPECT_EQ(big.fbThresholdPx, 1.0f);
  EXPECT_NO_THROW(o.check());
  EXPECT_NO_THROW(big.check());
}

void expectError(const Options& o, const char* field) {
  try {
    o.check();
    ADD_FAILURE() << "no error for " << field;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(Options, CheckNamesTheBadField) {
  Options o;
  o.levels = 0;
  expectError(o, "klt.levels");
  o = {};
  o.halfWindow = 40;
  expectError(o, "klt.halfWindow");
  o = {};
  o.epsilonPx = NAN;
  expectError(o, "klt.epsilonPx");
  o = {};
  o.photometric = 3;
  expectError(o, "klt.photometric");
  o = {};
  o.blockSize = 4;
  expectError(o, "klt.blockSize");
  o = {};
  o.capacity = 9000;
  expectError(o, "klt.capacity");
  o = {};
  o.maxIterations = 300;
  expectError(o, "klt.maxIterations");
  o = {};
  o.minDistancePx = 0.0f;
  expectError(o, "klt.minDistancePx");
  o = {};
  EXPECT_THROW(o.checkFrame(14, 100), Error);  // smaller than the 15 px window
  EXPECT_NO_THROW(o.checkFrame(15, 15));
}

}  // namespace
}  // namespace vidmap::klt
