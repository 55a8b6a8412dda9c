// OutputFolder never deletes what vidmap did not write: --overwrite replaces an earlier output
// and refuses user files, the input (a video inside the folder, the frame folder itself) and
// links; the stale temporary folders of killed runs are removed or restored on the next start.
#include "vidmap/pipeline/output_folder.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/pipeline/reconstruct.h"

namespace vidmap::pipeline {
namespace {

namespace fs = std::filesystem;

class OutputFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = testFolder(std::string("output_folder_") + info->name());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  static void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  static std::string read(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  // An earlier vidmap output: a model, its PLY and trajectory, the run record.
  static void writeEarlierOutput(const fs::path& dir) {
    for (const char* f : {"cameras.bin", "images.bin", "points3D.bin", "cameras.txt", "images.txt",
                          "points3D.txt", "points3D.ply", "trajectory.txt"})
      write(dir / "sparse" / "0" / f, "old");
    write(dir / "sparse" / "1" / "cameras.bin", "old");
    write(dir / "run.json", "{\"old\": true}");
  }
  // The message of the Error `f` throws ("" when it throws none).
  template <class F>
  static std::string errorOf(F&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  // A process id that no longer exists: a child that has exited and been reaped.
  static long deadPid() {
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    int status = 0;
    waitpid(pid, &status, 0);
    return pid;
  }
  fs::path root_;
};

TEST_F(OutputFolderTest, WritesIntoAnEmptyOrMissingFolder) {
  for (const fs::path& dir : {root_ / "new" / "out", root_ / "empty"}) {
    if (dir.filename() == "empty") fs::create_directories(dir);
    OutputFolder out(dir, false);
    EXPECT_EQ(out.tmp().parent_path(), dir.parent_path());
    write(out.tmp() / "run.json", "new");
    out.commit();
    EXPECT_EQ(read(dir / "run.json"), "new");
    EXPECT_FALSE(fs::exists(out.tmp()));
  }
}

TEST_F(OutputFolderTest, OverwriteReplacesAnEarlierOutputWhole) {
  const fs::path dir = root_ / "out";
  writeEarlierOutput(dir);
  OutputFolder out(dir, true);
  write(out.tmp() / "run.json", "new");
  write(out.tmp() / "sparse" / "0" / "cameras.bin", "new");
  out.commit();
  EXPECT_EQ(read(dir / "run.json"), "new");
  EXPECT_EQ(read(dir / "sparse" / "0" / "cameras.bin"), "new");
  EXPECT_FALSE(fs::exists(dir / "sparse" / "1"));  // the old second model went with the rest
  for (const auto& e : fs::directory_iterator(root_))
    EXPECT_EQ(e.path().filename(), "out") << "left beside the output: " << e.path();
}

TEST_F(OutputFolderTest, WithoutOverwriteANonEmptyFolderIsRefused) {
  const fs::path dir = root_ / "out";
  writeEarlierOutput(dir);
  EXPECT_NE(errorOf([&] { OutputFolder out(dir, false); }).find("--overwrite"), std::string::npos);
  EXPECT_EQ(read(dir / "run.json"), "{\"old\": true}");
}

TEST_F(OutputFolderTest, OverwriteRefusesUserFiles) {
  // The case: -o out --overwrite on a folder holding my_notes.txt and thesis/ch1.tex.
  const fs::path dir = root_ / "out";
  writeEarlierOutput(dir);
  write(dir / "my_notes.txt", "mine");
  write(dir / "thesis" / "ch1.tex", "mine too");
  const std::string msg = errorOf([&] { OutputFolder out(dir, true); });
  EXPECT_NE(msg.find("my_notes.txt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("thesis/"), std::string::npos) << msg;
  EXPECT_NE(msg.find("only what vidmap writes"), std::string::npos) << msg;
  EXPECT_EQ(read(dir / "my_notes.txt"), "mine");
  EXPECT_EQ(read(dir / "thesis" / "ch1.tex"), "mine too");
  EXPECT_EQ(read(dir / "run.json"), "{\"old\": true}");
  // A user file inside a model folder, or a folder named like one, is as much the user's.
  fs::remove(dir / "my_notes.txt");
  fs::remove_all(dir / "thesis");
  write(dir / "sparse" / "0" / "notes.txt", "mine");
  EXPECT_NE(errorOf([&] { OutputFolder out(dir, true); }).find("sparse/0/notes.txt"),
            std::string::npos);
  fs::remove(dir / "sparse" / "0" / "notes.txt");
  write(dir / "sparse" / "best" / "cameras.bin", "mine");
  EXPECT_NE(errorOf([&] { OutputFolder out(dir, true); }).find("sparse/best/"), std::string::npos);
  fs::remove_all(dir / "sparse" / "best");
  EXPECT_NO_THROW(OutputFolder(dir, true));
}

TEST_F(OutputFolderTest, FilesAddedDuringTheRunStopTheCommit) {
  const fs::path dir = root_ / "out";
  writeEarlierOutput(dir);
  OutputFolder out(dir, true);
  write(out.tmp() / "run.json", "new");
  write(dir / "added_meanwhile.txt", "mine");
  EXPECT_NE(errorOf([&] { out.commit(); }).find("added_meanwhile.txt"), std::string::npos);
  EXPECT_EQ(read(dir / "added_meanwhile.txt"), "mine");
  EXPECT_EQ(read(dir / "run.json"), "{\"old\": true}");
}

TEST_F(OutputFolderTest, RefusesTheInputFolderItself) {
  // The case: vidmap reconstruct frames -o frames --overwrite.
  const fs::path frames = root_ / "frames";
  write(frames / "frame_000.png", "pixels");
  for (bool overwrite : {false, true}) {
    const std::string msg = errorOf([&] { OutputFolder out(frames, overwrite, {frames}); });
    EXPECT_NE(msg.find("is the input"), std::string::npos) << msg;
  }
  // Spelt differently: a trailing slash, a relative path with "..".
  const std::string msg =
      errorOf([&] { OutputFolder out(root_ / "frames" / "..", true, {root_ / "frames" / ""}); });
  EXPECT_NE(msg.find("contains the input"), std::string::npos) << msg;
  EXPECT_EQ(read(frames / "frame_000.png"), "pixels");
}

TEST_F(OutputFolderTest, RefusesAFolderThatContainsTheInput) {
  // The case: vidmap reconstruct project/holiday.mp4 -o project --overwrite, with the
  // user's notes beside the video. The input is named in the message, before the notes.
  const fs::path project = root_ / "project";
  write(project / "holiday.mp4", "video");
  write(project / "notes.txt", "mine");
  const std::string msg =
      errorOf([&] { OutputFolder out(project, true, {project / "holiday.mp4"}); });
  EXPECT_NE(msg.find("contains the input"), std::string::npos) << msg;
  EXPECT_NE(msg.find("holiday.mp4"), std::string::npos) << msg;
  EXPECT_EQ(read(project / "holiday.mp4"), "video");
  EXPECT_EQ(read(project / "notes.txt"), "mine");
  // The same through reconstruct(), which fails before reading a frame.
  ReconstructOptions o;
  o.overwrite = true;
  o.progress = false;
  io::RunRecord record;
  EXPECT_THROW(reconstruct(project / "holiday.mp4", project, o, record), Error);
  EXPECT_EQ(read(project / "holiday.mp4"), "video");
  // An output beside the input is fine.
  EXPECT_NO_THROW(OutputFolder(project / "model", true, {project / "holiday.mp4"}));
}

TEST_F(OutputFolderTest, FollowsASymlinkedOutputAndRefusesLinksInside) {
  // out -> real: the real folder is checked and written; the link stays.
  const fs::path real = root_ / "real", link = root_ / "out";
  writeEarlierOutput(real);
  fs::create_directory_symlink(real, link);
  {
    OutputFolder out(link, true);
    EXPECT_EQ(out.dir(), fs::weakly_canonical(real));
    write(out.tmp() / "run.json", "new");
    out.commit();
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(link / "run.json"), "new");
  // A link to a folder holding user files, or to the input, is refused like the folder.
  write(real / "mine.txt", "mine");
  EXPECT_NE(errorOf([&] { OutputFolder out(link, true); }).find("mine.txt"), std::string::npos);
  fs::remove(real / "mine.txt");
  EXPECT_NE(errorOf([&] {
              OutputFolder out(link, true, {real / "run.json"});
            }).find("contains the input"),
            std::string::npos);
  // A link among vidmap's names (sparse -> the user's photos) is not vidmap's: refused, and
  // what it points to is untouched.
  const fs::path photos = root_ / "photos";
  write(photos / "a.jpg", "photo");
  fs::remove_all(real / "sparse");
  fs::create_directory_symlink(photos, real / "sparse");
  const std::string msg = errorOf([&] { OutputFolder out(real, true); });
  EXPECT_NE(msg.find("sparse (a symbolic link)"), std::string::npos) << msg;
  EXPECT_EQ(read(photos / "a.jpg"), "photo");
}

TEST_F(OutputFolderTest, RemovesTheTemporaryFolderOfAKilledRun) {
  const fs::path dir = root_ / "out";
  const long dead = deadPid();
  const fs::path stale = root_ / (".out.tmp-" + std::to_string(dead) + "-0");
  write(stale / "sparse" / "0" / "cameras.bin", "partial");
  // A live process's temporary folder (this one's) and another folder's are not touched.
  const fs::path live = root_ / (".out.tmp-" + std::to_string(getpid()) + "-99");
  const fs::path other = root_ / (".other.tmp-" + std::to_string(dead) + "-0");
  fs::create_directories(live);
  fs::create_directories(other);
  OutputFolder out(dir, false);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  ASSERT_EQ(out.notes().size(), 1u);
  EXPECT_NE(out.notes()[0].find(stale.filename().string()), std::string::npos);
}

TEST_F(OutputFolderTest, RestoresTheOldOutputOfARunKilledBetweenTheRenames) {
  // Killed after `out` was moved aside and before the new output took its place.
  const fs::path dir = root_ / "out";
  const std::string stem = ".out.tmp-" + std::to_string(deadPid()) + "-0";
  writeEarlierOutput(root_ / (stem + ".old"));
  write(root_ / stem / "run.json", "complete new output");
  {
    OutputFolder out(dir, true);
    EXPECT_EQ(read(dir / "run.json"), "{\"old\": true}");  // restored before anything else
    EXPECT_FALSE(fs::exists(root_ / (stem + ".old")));
    EXPECT_FALSE(fs::exists(root_ / stem));
    ASSERT_EQ(out.notes().size(), 2u);
    EXPECT_NE(out.notes()[0].find("restored"), std::string::npos);
  }
  // Without --overwrite the restored output is in the way, and the message says why.
  writeEarlierOutput(root_ / (stem + ".old"));
  fs::remove_all(dir);
  const std::string msg = errorOf([&] { OutputFolder out(dir, false); });
  EXPECT_NE(msg.find("restored"), std::string::npos) << msg;
  EXPECT_EQ(read(dir / "run.json"), "{\"old\": true}");
  // Killed after the new output took its place: the .old is a leftover, removed.
  writeEarlierOutput(root_ / (stem + ".old"));
  OutputFolder out(dir, true);
  EXPECT_FALSE(fs::exists(root_ / (stem + ".old")));
  EXPECT_EQ(read(dir / "run.json"), "{\"old\": true}");
  ASSERT_EQ(out.notes().size(), 1u);
  EXPECT_NE(out.notes()[0].find("removed"), std::string::npos);
}

}  // namespace
}  // namespace vidmap::pipeline
