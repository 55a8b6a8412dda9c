// The band schedule of the CUDA SIFT's first octave (sift_cuda_bands.h), checked on the CPU by
// replaying it: every pass covers every row once, and no launch reads a row of its input that
// an earlier launch has not written. (Equality of the banded levels with the frame in one piece
// is checked on the device: SiftCuda.BandedUploadGivesTheSameFeatures.)
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "vidmap/features/sift_cuda_bands.h"

namespace vidmap::features {
namespace {

// Replays the schedule on per-row "written" flags of each pass's output.
void expectSound(int height, int bands, const std::vector<int>& halo) {
  SCOPED_TRACE(::testing::Message() << "height " << height << ", bands " << bands);
  const std::vector<BandStep> steps = bandSchedule(height, bands, halo);
  const int passes = static_cast<int>(halo.size());
  std::vector<std::vector<int>> written(passes, std::vector<int>(height, 0));
  int lastBand = -1;
  for (const BandStep& s : steps) {
    ASSERT_GE(s.band, lastBand);  // issued band by band
    lastBand = s.band;
    ASSERT_GE(s.pass, 0);
    ASSERT_LT(s.pass, passes);
    ASSERT_LT(s.y0, s.y1);
    ASSERT_GE(s.y0, 0);
    ASSERT_LE(s.y1, height);
    // What this launch reads: the arrived rows (pass 0), else its input's rows within the halo
    // (clamped at the edges, as the kernels clamp).
    if (s.pass == 0) {
      ASSERT_LE(s.y1, bandEnd(height, bands, s.band));
    } else {
      const int lo = std::max(0, s.y0 - halo[s.pass]);
      const int hi = std::min(height, s.y1 + halo[s.pass]);
      for (int y = lo; y < hi; ++y) ASSERT_EQ(written[s.pass - 1][y], 1) << "row " << y;
      // A column pass with a DoG also reads the level below (an earlier pass) at its own rows.
      for (int q = 0; q < s.pass - 1; ++q)
        for (int y = s.y0; y < s.y1; ++y) ASSERT_EQ(written[q][y], 1);
    }
    for (int y = s.y0; y < s.y1; ++y) {
      ASSERT_EQ(written[s.pass][y], 0) << "row " << y << " written twice";
      written[s.pass][y] = 1;
    }
  }
  for (int p = 0; p < passes; ++p)
    for (int y = 0; y < height; ++y) ASSERT_EQ(written[p][y], 1) << "pass " << p << " row " << y;
}

TEST(SiftCudaBands, OneBandIsEachPassOverTheWholeFrame) {
  const std::vector<int> halo = {0, 0, 7, 0, 5, 0, 13};
  const std::vector<BandStep> steps = bandSchedule(1080, 1, halo);
  ASSERT_EQ(steps.size(), halo.size());
  for (std::size_t p = 0; p < steps.size(); ++p) {
    EXPECT_EQ(steps[p].pass, static_cast<int>(p));
    EXPECT_EQ(steps[p].y0, 0);
    EXPECT_EQ(steps[p].y1, 1080);
  }
}

TEST(SiftCudaBands, EveryRowOnceAndNoReadBeforeItsWrite) {
  // The chain of a 1080-row first octave (S = 3, sigma 1.6, input sigma 0.5): the conversion,
  // then per level a row pass (halo 0) and a column pass (its radius).
  const std::vector<int> sift = {0, 0, 7, 0, 5, 0, 7, 0, 8, 0, 10, 0, 13};
  for (int bands : {1, 2, 3, 4, 6, 8, 12, 16}) expectSound(1080, bands, sift);
  expectSound(720, 5, sift);
  // Bands thinner than the halos (a column pass then waits for several bands) and random
  // chains.
  expectSound(64, 16, sift);
  std::mt19937 rng(7);
  for (int t = 0; t < 200; ++t) {
    const int height = 1 + static_cast<int>(rng() % 300);
    const int bands = 1 + static_cast<int>(rng() % std::min(height, 20));
    std::vector<int> halo(1 + rng() % 12);
    for (int& h : halo) h = static_cast<int>(rng() % 20);
    expectSound(height, bands, halo);
  }
}

TEST(SiftCudaBands, TheLastBandLeavesOnlyTheHaloBehind) {
  // Work left after the last band arrives: each pass's last piece, its band plus the halos
  // below it, not the frame.
  const std::vector<int> sift = {0, 0, 7, 0, 5, 0, 7, 0, 8, 0, 10, 0, 13};
  const std::vector<BandStep> steps = bandSchedule(1080, 8, sift);
  int halos = 0;
  for (int h : sift) halos += h;
  for (const BandStep& s : steps) {
    if (s.band == 7) {
      EXPECT_LE(s.y1 - s.y0, 1080 - bandEnd(1080, 8, 6) + halos);
    }
  }
}

}  // namespace
}  // namespace vidmap::features
