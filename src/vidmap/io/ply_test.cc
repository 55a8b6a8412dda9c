#include "vidmap/io/ply.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;

TEST(Ply, BinaryRoundTripWithColoursAndNormals) {
  fs::path p = testFolder("ply") / "test.ply";
  std::vector<PlyPoint> pts = {{{1.5f, -2.f, 3.25f}, {255, 0, 7}, {0, 0, 1}},
                               {{0.f, 1e-3f, -4.f}, {1, 2, 3}, {1, 0, 0}}};
  writePly(p, pts, true);
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  std::string text = s.str();
  EXPECT_EQ(text.rfind("ply\nformat binary_little_endian 1.0\n", 0), 0u);
  EXPECT_NE(text.find("element vertex 2\n"), std::string::npos);
  size_t body = text.find("end_header\n") + 11;
  EXPECT_EQ(text.size() - body, 2u * (12 + 12 + 3));
  auto back = readPly(p);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].xyz, pts[0].xyz);
  EXPECT_EQ(back[0].rgb, pts[0].rgb);
  EXPECT_EQ(back[1].normal, pts[1].normal);
}

TEST(Ply, NonFinitePointIsAnErrorAndNothingIsWritten) {
  fs::path p = testFolder("ply_nan") / "nan.ply";
  fs::remove(p);
  std::vector<PlyPoint> pts(1);
  pts[0].xyz[2] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(writePly(p, pts), Error);
  EXPECT_FALSE(fs::exists(p));
}

TEST(Ply, TruncatedFileIsAnError) {
  fs::path p = testFolder("ply_trunc") / "trunc.ply";
  std::ofstream(p) << "ply\nformat binary_little_endian 1.0\nelement vertex 5\n"
                      "property float x\nproperty float y\nproperty float z\nend_header\nabc";
  EXPECT_THROW(readPly(p), Error);
}

}  // namespace
}  // namespace vidmap::io
