// The TUM trajectory reader: poses, comments, normalisation, and every malformed line named.
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

}  // namespace
}  // namespace vidmap::io
