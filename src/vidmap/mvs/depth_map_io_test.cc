// COLMAP dense array files: the layout (header, channel planes, x fastest) and bad files.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/mvs/depth_map_io.h"

namespace vidmap::mvs {
namespace {

namespace fs = std::filesystem;

fs::path tempDir() { return testCacheFolder("depth_map_io"); }

TEST(DenseArray, LayoutIsColmaps) {
  DenseArray a{3, 2, 2, {}};
  for (int c = 0; c < 2; ++c)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x) a.data.push_back(100 * c + 10 * y + x);
  fs::path p = tempDir() / "a.geometric.bin";
  writeDenseArray(p, a);
  std::ifstream f(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.substr(0, 6), "3&2&2&");
  ASSERT_EQ(bytes.size(), 6 + 12 * sizeof(float));
  float v[12];
  std::memcpy(v, bytes.data() + 6, sizeof(v));
  EXPECT_EQ(v[1], 1.0f);    // (x=1, y=0, c=0)
  EXPECT_EQ(v[3], 10.0f);   // (x=0, y=1, c=0)
  EXPECT_EQ(v[6], 100.0f);  // (x=0, y=0, c=1)
  DenseArray b = readDenseArray(p);
  EXPECT_EQ(b.width, 3);
  EXPECT_EQ(b.height, 2);
  EXPECT_EQ(b.channels, 2);
  EXPECT_EQ(b.data, a.data);
  fs::remove_all(p.parent_path());
}

TEST(DenseArray, BadFilesAreErrors) {
  fs::path d = tempDir();
  std::ofstream(d / "trunc.bin", std::ios::binary) << "4&4&1&abcd";
  std::ofstream(d / "nohdr.bin", std::ios::binary) << "garbage";
  EXPECT_THROW(readDenseArray(d / "trunc.bin"), Error);
  EXPECT_THROW(readDenseArray(d / "nohdr.bin"), Error);
  EXPECT_THROW(readDenseArray(d / "missing.bin"), Error);
  EXPECT_THROW(writeDenseArray(d / "x.bin", DenseArray{2, 2, 1, {1, 2, 3}}), Error);
  EXPECT_FALSE(fs::exists(d / "x.bin"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace vidmap::mvs
