#include "vidmap/io/atomic_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

long entries(const fs::path& d) {
  return std::distance(fs::directory_iterator(d), fs::directory_iterator());
}

TEST(AtomicFile, WritesAndLeavesNoTemporary) {
  TempDir d("atomic");
  writeTextAtomically(d / "a.txt", "hello");
  EXPECT_EQ(readText(d / "a.txt"), "hello");
  EXPECT_EQ(entries(d.path()), 1);
}

TEST(AtomicFile, FailureLeavesNothingBehind) {
  TempDir d("atomic");
  EXPECT_THROW(writeAtomically(d / "b.txt",
                               [](const fs::path& tmp) {
                                 std::ofstream(tmp) << "partial";
                                 throw Error("boom");
                               }),
               Error);
  EXPECT_TRUE(fs::is_empty(d.path()));
}

TEST(AtomicFile, MissingFolderIsAClearError) {
  EXPECT_THROW(writeTextAtomically("/nonexistent_vidmap_dir/x.txt", "x"), Error);
}

TEST(TempDir, IsUniqueAndRemovedWithItsContents) {
  fs::path kept;
  {
    TempDir a("t"), b("t");
    EXPECT_NE(a.path(), b.path());
    writeTextAtomically(a / "f.txt", "x");
    kept = a.path();
  }
  EXPECT_FALSE(fs::exists(kept));
}

// A write that fails (here: the temporary's name is a folder, so it cannot be opened) names
// the destination's folder and the system's reason, never the hidden temporary.
TEST(AtomicFile, WriteFailureNamesTheFolderAndTheReason) {
  TempDir d("atomic");
  fs::create_directory(d / "blocker");
  try {
    writeTextFile(d / "blocker", d / "out.csv", "x");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out.csv in the folder " + d.path().string()), std::string::npos) << m;
    EXPECT_NE(m.find("Is a directory"), std::string::npos) << m;
  }
}

TEST(AtomicFileGroup, CommitsEveryMember) {
  TempDir d("group");
  writeTextAtomically(d / "b.json", "old b");
  {
    AtomicFileGroup g;
    writeTextFile(g.add(d / "a.csv").tmp(), d / "a.csv", "new a");
    writeTextFile(g.add(d / "b.json").tmp(), d / "b.json", "new b");
    EXPECT_EQ(readText(d / "b.json"), "old b");  // nothing changes before commit
    g.commit();
  }
  EXPECT_EQ(readText(d / "a.csv"), "new a");
  EXPECT_EQ(readText(d / "b.json"), "new b");
  EXPECT_EQ(entries(d.path()), 2);  // no temporaries, no backups
}

// The second rename fails after the first succeeded (a full disk, simulated): the first is
// rolled back, the file it replaced restored, and no temporary is left.
TEST(AtomicFileGroup, FailureOfTheSecondRollsBackTheFirst) {
  TempDir d("group");
  writeTextAtomically(d / "a.csv", "user's a");
  {
    AtomicFileGroup g;
    writeTextFile(g.add(d / "a.csv").tmp(), d / "a.csv", "new a");
    writeTextFile(g.add(d / "b.json").tmp(), d / "b.json", "new b");
    g.failRenameForTesting(1);
    EXPECT_THROW(g.commit(), Error);
  }
  EXPECT_EQ(readText(d / "a.csv"), "user's a");
  EXPECT_FALSE(fs::exists(d / "b.json"));
  EXPECT_EQ(entries(d.path()), 1);
}

// A real rename failure (the destination is a non-empty folder): the same rollback.
TEST(AtomicFileGroup, RealRenameFailureRollsBack) {
  TempDir d("group");
  fs::create_directories(d / "b.json" / "inside");
  {
    AtomicFileGroup g;
    writeTextFile(g.add(d / "a.csv").tmp(), d / "a.csv", "new a");
    writeTextFile(g.add(d / "b.json").tmp(), d / "b.json", "new b");
    EXPECT_THROW(g.commit(), Error);
  }
  EXPECT_FALSE(fs::exists(d / "a.csv"));
  EXPECT_TRUE(fs::is_directory(d / "b.json" / "inside"));
  EXPECT_EQ(entries(d.path()), 1);
}

TEST(AtomicFileGroup, TwoMembersUnderOneNameAreRefused) {
  TempDir d("group");
  AtomicFileGroup g;
  g.add(d / "t.json");
  EXPECT_THROW(g.add(d / "." / "t.json"), Error);
}

TEST(AtomicFileGroup, UncommittedGroupLeavesNothing) {
  TempDir d("group");
  {
    AtomicFileGroup g;
    writeTextFile(g.add(d / "a.csv").tmp(), d / "a.csv", "a");
  }
  EXPECT_TRUE(fs::is_empty(d.path()));
}

}  // namespace
}  // namespace vidmap::io
