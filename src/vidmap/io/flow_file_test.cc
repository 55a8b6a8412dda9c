#include "vidmap/io/flow_file.h"

#include <gtest/gtest.h>

#include <cstring>

#include "vidmap/core/data_dir.h"
#include "vidmap/io/io_test_util.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;
using testing::expectError;
using testing::freshDir;

// An independent writer: the bytes of the format, laid out by hand (little-endian host).
std::vector<unsigned char> floBytes(float tag, int w, int h, const std::vector<float>& uv) {
  std::vector<unsigned char> b(12 + uv.size() * 4);
  std::memcpy(b.data(), &tag, 4);
  std::memcpy(b.data() + 4, &w, 4);
  std::memcpy(b.data() + 8, &h, 4);
  if (!uv.empty()) std::memcpy(b.data() + 12, uv.data(), uv.size() * 4);
  return b;
}

TEST(FlowFile, ReadsTheMiddleburyLayout) {
  auto d = freshDir("flo");
  const int w = 5, h = 3;
  std::vector<float> uv;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uv.push_back(0.25f * x - 1.5f);
      uv.push_back(y == 1 && x == 2 ? 1e10f : -0.5f * y);
    }
  testing::writeBytes(d / "a.flo", floBytes(202021.25f, w, h, uv));
  FlowField f = readFlo(d / "a.flo");
  ASSERT_EQ(f.width(), w);
  ASSERT_EQ(f.height(), h);
  EXPECT_EQ(f.u(4, 2), 0.25f * 4 - 1.5f);
  EXPECT_EQ(f.v(3, 2), -1.0f);
  EXPECT_FALSE(f.known(2, 1));
  EXPECT_TRUE(f.known(3, 1));
  // writeFlo writes the same bytes.
  writeFlo(d / "b.flo", f);
  EXPECT_EQ(testing::readBytes(d / "b.flo"), testing::readBytes(d / "a.flo"));
}

TEST(FlowFile, BadFilesAreClearErrors) {
  auto d = freshDir("flobad");
  expectError([&] { readFlo(d / "none.flo"); }, {"none.flo", "does not exist"});
  testing::writeBytes(d / "tag.flo", floBytes(1.0f, 1, 1, {0, 0}));
  expectError([&] { readFlo(d / "tag.flo"); }, {"tag.flo", "PIEH"});
  testing::writeBytes(d / "size.flo", floBytes(202021.25f, 0, 4, {}));
  expectError([&] { readFlo(d / "size.flo"); }, {"size.flo", "0x4"});
  auto b = floBytes(202021.25f, 4, 4, std::vector<float>(32, 0.f));
  b.resize(b.size() - 5);
  testing::writeBytes(d / "cut.flo", b);
  expectError([&] { readFlo(d / "cut.flo"); }, {"cut.flo", "truncated"});
  testing::writeBytes(d / "short.flo", {0x50, 0x49});
  expectError([&] { readFlo(d / "short.flo"); }, {"short.flo", "truncated"});
  FlowField mismatch;
  mismatch.u.resize(2, 2);
  mismatch.v.resize(3, 2);
  expectError([&] { writeFlo(d / "m.flo", mismatch); }, {"same"});
}

TEST(FlowFile, MiddleburyGroundTruthMatchesItsFrames) {
  auto dir = dataPath("middlebury-flow/gt");
  if (!dir) GTEST_SKIP() << "shared data absent";
  struct Case {
    const char* name;
    int w, h;
  };
  for (Case c : {Case{"Dimetrodon", 584, 388}, Case{"Grove2", 640, 480}, Case{"Venus", 420, 380}}) {
    FlowField f = readFlo(*dir / c.name / "flow10.flo");
    EXPECT_EQ(f.width(), c.w) << c.name;
    EXPECT_EQ(f.height(), c.h) << c.name;
    long known = 0;
    float maxMag = 0;
    for (int y = 0; y < f.height(); ++y)
      for (int x = 0; x < f.width(); ++x)
        if (f.known(x, y)) {
          ++known;
          maxMag = std::max(maxMag, std::hypot(f.u(x, y), f.v(x, y)));
        }
    EXPECT_GT(known, f.u.pixels() * 9 / 10) << c.name;
    // The data README: maximum motion 4.6 to 22 px.
    EXPECT_GT(maxMag, 4.0f) << c.name;
    EXPECT_LT(maxMag, 23.0f) << c.name;
  }
}

}  // namespace
}  // namespace vidmap::io
