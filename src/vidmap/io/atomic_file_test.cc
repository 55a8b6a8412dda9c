#include "vidmap/io/atomic_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("vidmap_atomic_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(AtomicFile, WritesAndLeavesNoTemporary) {
  auto d = freshDir("ok");
  writeTextAtomically(d / "a.txt", "hello");
  std::ifstream f(d / "a.txt");
  std::stringstream s;
  s << f.rdbuf();
  EXPECT_EQ(s.str(), "hello");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);
}

TEST(AtomicFile, FailureLeavesNothingBehind) {
  auto d = freshDir("fail");
  EXPECT_THROW(writeAtomically(d / "b.txt",
                               [](const fs::path& tmp) {
                                 std::ofstream(tmp) << "partial";
                                 throw Error("boom");
                               }),
               Error);
  EXPECT_TRUE(fs::is_empty(d));
}

TEST(AtomicFile, MissingFolderIsAClearError) {
  EXPECT_THROW(writeTextAtomically("/nonexistent_vidmap_dir/x.txt", "x"), Error);
}

}  // namespace
}  // namespace vidmap::io
