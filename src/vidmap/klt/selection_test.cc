// Selection (docs/architecture.md, KLT: the tracker): corners of a checkerboard,
// spacing of picks and tracks, the quality threshold and border margin, a textureless frame,
// the capacity, and the lambda_min map against an independent computation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "vidmap/core/cpu_features.h"
#include "vidmap/klt/cpu_backend.h"
#include "vidmap/klt/tracker.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace vidmap::klt {
namespace {

std::vector<TrackRecord> selectOn(CpuBackend& b, const GrayImage& img, int alive = 0) {
  b.uploadGray(0, img.view());
  b.buildPyramid(0);
  b.eigenMap(0);
  const SelectCounts c = b.select(alive);
  std::vector<TrackRecord> picks(c.appended);
  if (c.appended) b.readRecords(RecordBuffer::kSeeds, alive, c.appended, picks.data());
  return picks;
}

double minPairDistance(const std::vector<std::pair<float, float>>& a) {
  double m = 1e30;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j)
      m = std::min(m,
                   std::hypot(double(a[i].first) - a[j].first, double(a[i].second) - a[j].second));
  return m;
}

TEST(Selection, CheckerboardCornersAndNoEdges) {
  const int sq = 40, nx = 5, ny = 3, ox = 60, oy = 40;
  const GrayImage img = synth::makeCheckerboard(320, 200, sq, nx, ny, ox, oy);
  CpuBackend b(320, 200, optionsFor(640));
  const auto picks = selectOn(b, img);
  ASSERT_FALSE(picks.empty());
  auto nearestVertex = [&](float x, float y) {
    double best = 1e30;
    for (int j = 0; j <= ny; ++j)
      for (int i = 0; i <= nx; ++i)
        best = std::min(best, std::hypot(x - (ox + i * sq - 0.5), y - (oy + j * sq - 0.5)));
    return best;
  };
  for (const auto& p : picks) EXPECT_LE(nearestVertex(p.x, p.y), 1.6) << p.x << ", " << p.y;
  int interior = 0;
  for (int j = 1; j < ny; ++j)
    for (int i = 1; i < nx; ++i) {
      double best = 1e30;
      for (const auto& p : picks)
        best = std::min(best, std::hypot(p.x - (ox + i * sq - 0.5), p.y - (oy + j * sq - 0.5)));
      EXPECT_LE(best, 1.6) << "interior vertex " << i << ", " << j;
      ++interior;
    }
  std::printf("checkerboard: %zu picks, %d interior vertices all within 1.6 px\n", picks.size(),
              interior);
  EXPECT_EQ(interior, 8);
}

TEST(Selection, TexturelessFrameGivesNoPick) {
  CpuBackend b(320, 200, optionsFor(640));
  EXPECT_TRUE(selectOn(b, synth::makeFlat(320, 200, 0.4f)).empty());
  EXPECT_EQ(b.eigenMax(), 0.0f);
}

TEST(Selection, SpacingQualityAndMarginOnTheTexturedScene) {
  const GrayImage img = synth::makeTexturedScene({});
  const Options o = optionsFor(640);
  CpuBackend b(640, 360, o);
  Options big = o;
  big.capacity = kMaxCapacity;
  CpuBackend all(640, 360, big);
  const auto picks = selectOn(all, img);
  std::vector<float> eig(640 * 360);
  all.readEigenMap(eig.data());
  std::vector<std::pair<float, float>> xy;
  for (const auto& p : picks) {
    xy.emplace_back(p.x, p.y);
    EXPECT_GE(p.measure, o.qualityLevel * all.eigenMax());
    EXPECT_EQ(p.measure, eig[static_cast<int>(p.y) * 640 + static_cast<int>(p.x)]);
    EXPECT_TRUE(insideMargin(p.x, p.y, 640, 360, o.halfWindow));
  }
  const double md = minPairDistance(xy);
  std::printf("textured 640 x 360: %zu picks, closest pair %.2f px\n", picks.size(), md);
  EXPECT_GE(md, o.minDistancePx);
  EXPECT_GT(picks.size(), 800u);
  // Capacity short: the default 1024 takes the strongest, in cell order.
  const auto capped = selectOn(b, img);
  ASSERT_EQ(capped.size(), std::min<std::size_t>(1024, picks.size()));
  if (picks.size() > 1024) {
    std::vector<float> scores;
    for (const auto& p : picks) scores.push_back(p.measure);
    std::sort(scores.begin(), scores.end(), std::greater<>());
    for (const auto& p : capped) EXPECT_GE(p.measure, scores[1023]);
    const CellGrid g = makeCellGrid(640, 360, o.minDistancePx);
    for (std::size_t i = 1; i < capped.size(); ++i)
      EXPECT_LT(cellOf(g, capped[i - 1].x, capped[i - 1].y), cellOf(g, capped[i].x, capped[i].y));
  }
}

// The lambda_min map against an independent computation: Scharr and the block sums in
// double, straight from the image.
TEST(Selection, EigenMapMatchesAnIndependentComputation) {
  synth::TexturedSceneOptions so;
  so.width = 160;
  so.height = 100;
  const GrayImage img = synth::makeTexturedScene(so);
  Options o = optionsFor(640);
  o.levels = 2;
  CpuBackend b(160, 100, o);
  selectOn(b, img);
  std::vector<float> eig(160 * 100);
  b.readEigenMap(eig.data());
  auto px = [&](int x, int y) { return double(img(std::clamp(x, 0, 159), std::clamp(y, 0, 99))); };
  double worst = 0;
  for (int y = 0; y < 100; ++y)
    for (int x = 0; x < 160; ++x) {
      double ref = 0;
      if (x >= 7 && y >= 7 && x <= 152 && y <= 92) {
        double a = 0, bb = 0, c = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int u = x + dx, v = y + dy;
            const double gx =
                (3 * (px(u + 1, v - 1) - px(u - 1, v - 1)) + 10 * (px(u + 1, v) - px(u - 1, v)) +
                 3 * (px(u + 1, v + 1) - px(u - 1, v + 1))) /
                32;
            const double gy =
                (3 * (px(u - 1, v + 1) - px(u - 1, v - 1)) + 10 * (px(u, v + 1) - px(u, v - 1)) +
                 3 * (px(u + 1, v + 1) - px(u + 1, v - 1))) /
                32;
            a += gx * gx;
            bb += gx * gy;
            c += gy * gy;
          }
        ref = std::max(0.0, ((a + c) - std::sqrt((a - c) * (a - c) + 4 * bb * bb)) / 2);
      }
      worst = std::max(worst, std::abs(eig[y * 160 + x] - ref) / (std::abs(ref) + 1e-6));
    }
  EXPECT_LT(worst, 1e-3);
}

// A keyframe after tracking appends points at least minDistancePx from every alive track and
// from each other, and the strongest points track a known shift to 0.05 px.
TEST(Selection, KeyframeAfterTrackingKeepsTheSpacing) {
  // Frame 0 has texture on its left half only; frame 1 is the whole scene shifted, so the
  // keyframe tracks the left half and fills the right half between the alive tracks.
  const GrayImage I = synth::makeTexturedScene({});
  GrayImage left = I;
  for (int y = 0; y < 360; ++y)
    for (int x = 320; x < 640; ++x) left(x, y) = 0.5f;
  const GrayImage J = synth::warpImage(I, synth::translation(3.7, -2.1));
  const Options o = optionsFor(640);
  Tracker t(640, 360, o);
  const StepReport r0 = t.push(left);
  const StepReport r1 = t.push(J, true);
  const TrackTable& tab = t.tracks();
  int old = 0, added = 0;
  double worst = 0;
  for (int i = 0; i < tab.size(); ++i) {
    if (tab.seedFrame[i] != 0) {
      ++added;
      continue;
    }
    ++old;
    if (tab.seedX[i] < 300)
      worst = std::max(
          worst, std::hypot(tab.x[i] - (tab.seedX[i] + 3.7), tab.y[i] - (tab.seedY[i] - 2.1)));
  }
  std::printf(
      "keyframe: %d of %d tracked (max error %.4f px left of x = 300), %d selected, %d "
      "appended\n",
      old, r0.appended, worst, r1.selected, r1.appended);
  EXPECT_GE(old, r0.appended * 9 / 10);
  EXPECT_LE(worst, 0.05);
  EXPECT_EQ(added, r1.appended);
  EXPECT_GT(r1.appended, 200);
  // New picks are at least minDistancePx from every alive track and from each other.
  for (int i = 0; i < tab.size(); ++i) {
    if (tab.seedFrame[i] != 1) continue;
    for (int j = 0; j < tab.size(); ++j)
      if (j != i) {
        ASSERT_GE(std::hypot(tab.x[i] - tab.x[j], tab.y[i] - tab.y[j]), o.minDistancePx)
            << "pick " << i << " and track " << j;
      }
  }
}

// The lambda_min map with the CPU backend's AVX2 rows (Options::cpuAvx2) against the baseline
// code, bit for bit: frame widths that leave every remainder of eight, and block sizes 3 and 5.
TEST(Selection, Avx2EigenMapEqualsTheBaselineBitForBit) {
  if (!cpuHasAvx2()) GTEST_SKIP() << "the CPU has no AVX2";
  for (int block : {3, 5})
    for (int w = 96; w < 104; ++w) {
      synth::TexturedSceneOptions so;
      so.width = w;
      so.height = 70;
      so.seed = 5 + w;
      const GrayImage img = synth::makeTexturedScene(so);
      Options oa = optionsFor(640);
      oa.blockSize = block;
      Options ob = oa;
      ob.cpuAvx2 = false;
      CpuBackend a(w, 70, oa), b(w, 70, ob);
      std::vector<float> ma(static_cast<size_t>(w) * 70), mb(ma.size());
      for (auto [backend, map] : {std::pair{&a, &ma}, std::pair{&b, &mb}}) {
        backend->uploadGray(0, img.view());
        backend->buildPyramid(0);
        backend->eigenMap(0);
        backend->readEigenMap(map->data());
      }
      EXPECT_EQ(std::memcmp(ma.data(), mb.data(), ma.size() * sizeof(float)), 0) << w << block;
      int positive = 0;
      for (float v : ma) positive += v > 0.0f;
      EXPECT_GT(positive, w * 70 / 4) << w << block;
    }
}

}  // namespace
}  // namespace vidmap::klt
