// The TUM trajectory reader: poses, comments, normalisation, and every malformed line named;
// the writer: a round trip through the reader gives the poses back bit for bit.
#include "vidmap/io/tum_trajectory.h"

#include <gtest/gtest.h>

#include "vidmap/core/error.h"
#include "vidmap/io/io_test_util.h"

namespace vidmap::io {
namespace {

TEST(TumTrajectory, ParsesPosesAndNormalises) {
  const auto p = parseTumTrajectory(
      "# ground truth\n\n1305031102.1758 1.2 -0.5 2.25 0 0 0.70711 0.70711\n"
      "  1305031102.2 1 2 3 0 0 0 1  \n",
      "gt.txt", 1e-3);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_DOUBLE_EQ(p[0].t, 1305031102.1758);
  EXPECT_EQ(p[0].position, Eigen::Vector3d(1.2, -0.5, 2.25));
  EXPECT_NEAR(p[0].orientation.norm(), 1.0, 1e-15);  // returned normalised
  EXPECT_NEAR(p[0].orientation.z(), std::sqrt(0.5), 1e-12);
  EXPECT_EQ(p[0].line, 3);
  EXPECT_EQ(p[1].line, 4);
  EXPECT_TRUE(parseTumTrajectory("# nothing\n", "x", 1e-3).empty());
}

TEST(TumTrajectory, MalformedLinesAreNamed) {
  using testing::expectError;
  expectError([] { parseTumTrajectory("0 1 2 3 0 0 1\n", "gt.txt", 1e-3); },
              {"gt.txt line 1", "8 fields"});
  expectError([] { parseTumTrajectory("# c\n0 1 2 nan 0 0 0 1\n", "gt.txt", 1e-3); },
              {"gt.txt line 2", "nan"});
  expectError([] { parseTumTrajectory("0 1 2 x 0 0 0 1\n", "gt.txt", 1e-3); }, {"'x'"});
  expectError([] { parseTumTrajectory("0 1 2 3 0 0 0 1.01\n", "gt.txt", 1e-3); }, {"unit length"});
  EXPECT_EQ(parseTumTrajectory("0 1 2 3 0 0 0 1.01\n", "gt.txt", 0.5).size(), 1u);
  expectError([] { readTumTrajectory("/nonexistent/groundtruth.txt", 1e-3); },
              {"/nonexistent/groundtruth.txt"});
}

TEST(TumTrajectory, WrittenPosesReadBackBitForBit) {
  std::vector<TumPose> poses(3);
  poses[0].t = 1305031102.175304;
  poses[0].position = {1.0 / 3, -2e-9, 12345.678901234567};
  poses[0].orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, -0.5).normalized()));
  poses[1].t = 1305031102.2;
  poses[1].position = {-0.0, 1e300, -7.25};
  poses[1].orientation = Eigen::Quaterniond(0.5, -0.5, 0.5, -0.5);
  poses[2].t = 12.5;
  const std::string text = formatTumTrajectory(poses, "a header\nof two lines", 6);
  EXPECT_EQ(text.rfind("# a header\n# of two lines\n1305031102.175304 ", 0), 0u) << text;
  const auto back = parseTumTrajectory(text, "written", 1e-12);
  ASSERT_EQ(back.size(), poses.size());
  for (size_t i = 0; i < poses.size(); ++i) {
    EXPECT_NEAR(back[i].t, poses[i].t, 5e-7);  // 6 decimals
    EXPECT_EQ(back[i].position, poses[i].position) << i;
    // The reader normalises the quaternion: equal up to that division.
    EXPECT_LT((back[i].orientation.coeffs() - poses[i].orientation.coeffs()).norm(), 1e-15) << i;
  }
  // 9 decimals by default; no header, no comment line.
  EXPECT_EQ(formatTumTrajectory({poses[2]}, ""), "12.500000000 0 0 0 0 0 0 1\n");
}

}  // namespace
}  // namespace vidmap::io
