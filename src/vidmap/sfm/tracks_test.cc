#include "vidmap/sfm/tracks.h"

#include <gtest/gtest.h>

#include "vidmap/core/error.h"

namespace vidmap::sfm {
namespace {

TEST(Tracks, ChainsPairwiseMatchesIntoTracks) {
  // Feature 0 of image 0 = feature 2 of image 1 = feature 1 of image 2 (a 3-view track), and
  // a 2-view track (0:1 - 1:0). Feature 3 of image 1 is unmatched.
  std::vector<PairMatches> pairs = {{0, 1, {{0, 2}, {1, 0}}, {}}, {1, 2, {{2, 1}}, {}}};
  auto t = buildTracks({2, 4, 2}, pairs);
  ASSERT_EQ(t.tracks.size(), 2u);
  EXPECT_EQ(t.dropped_inconsistent, 0);
  std::vector<FeatureRef> three = {{0, 0}, {1, 2}, {2, 1}};
  std::vector<FeatureRef> two = {{0, 1}, {1, 0}};
  EXPECT_EQ(t.tracks[0], three);
  EXPECT_EQ(t.tracks[1], two);
}

TEST(Tracks, ComponentWithTwoFeaturesOfOneImageIsDropped) {
  // 0:0 - 1:0 - 2:0 - 0:1: image 0 appears twice, so some match is wrong.
  std::vector<PairMatches> pairs = {
      {0, 1, {{0, 0}}, {}}, {1, 2, {{0, 0}}, {}}, {2, 0, {{0, 1}}, {}}};
  auto t = buildTracks({2, 1, 1}, pairs);
  EXPECT_TRUE(t.tracks.empty());
  EXPECT_EQ(t.dropped_inconsistent, 1);
}

TEST(Tracks, ResultDoesNotDependOnPairOrder) {
  std::vector<PairMatches> a = {
      {0, 1, {{0, 0}, {1, 1}}, {}}, {1, 2, {{0, 1}}, {}}, {0, 2, {{1, 0}}, {}}};
  std::vector<PairMatches> b = {a[2], a[0], a[1]};
  auto ta = buildTracks({2, 2, 2}, a), tb = buildTracks({2, 2, 2}, b);
  ASSERT_EQ(ta.tracks.size(), tb.tracks.size());
  for (size_t i = 0; i < ta.tracks.size(); ++i) EXPECT_EQ(ta.tracks[i], tb.tracks[i]);
}

TEST(Tracks, OutOfRangeMatchesAreClearErrors) {
  EXPECT_THROW(buildTracks({2, 2}, {{0, 1, {{0, 5}}, {}}}), Error);
  EXPECT_THROW(buildTracks({2, 2}, {{0, 3, {{0, 0}}}}), Error);
  EXPECT_THROW(buildTracks({2, 2}, {{1, 1, {{0, 0}}}}), Error);
}

}  // namespace
}  // namespace vidmap::sfm
