// The `vidmap` tool run as a child process, as a user runs it: SIGINT and SIGTERM during a
// reconstruction end it with 130 / 143, one line, and nothing on disk; SIGKILL leaves the
// temporary folder, which the next run removes and names; the whole reconstruction and the
// tracker give byte-identical outputs on 1 and 4 threads.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "vidmap/core/temp_dir.h"
#include "vidmap/pipeline/batch_manifest.h"
#include "vidmap/pipeline/output_folder.h"
#include "vidmap/synth/sequence.h"

extern char** environ;

namespace vidmap::cli {
namespace {

namespace fs = std::filesystem;

fs::path tempRoot() { return testCacheFolder("cli"); }

// A 320 x 240 orbit of the room, rendered once per binary (24 frames at 8 fps; with FFmpeg
// also as a video).
const synth::SequenceResult& sequence() {
  static const synth::SequenceResult r = [] {
    synth::SequenceOptions o;
    o.frames = 24;
    o.fps = 8;
    o.width = 320;
    o.height = 240;
    if (synth::sequenceVideoAvailable()) o.video = tempRoot() / "orbit.mp4";
    return synth::writeSequence(tempRoot() / "orbit", o);
  }();
  return r;
}

struct Child {
  pid_t pid = -1;
  fs::path log;  // stdout and stderr
};

// Starts `vidmap args...` with extra environment variables, its output in a file.
Child spawn(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  static int n = 0;
  Child c;
  c.log = tempRoot() / ("child_" + std::to_string(n++) + ".log");
  std::vector<std::string> argv{VIDMAP_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> a;
  for (std::string& s : argv) a.push_back(s.data());
  a.push_back(nullptr);
  std::vector<std::string> envs = env;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);  // the first of a name wins
  std::vector<char*> ev;
  for (std::string& s : envs) ev.push_back(s.data());
  ev.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, c.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  const int rc = posix_spawn(&c.pid, a[0], &fa, nullptr, a.data(), ev.data());
  posix_spawn_file_actions_destroy(&fa);
  EXPECT_EQ(rc, 0) << "cannot start " << a[0];
  return c;
}

// The exit status, or 1000 + the signal that ended the child.
int wait(const Child& c) {
  int status = 0;
  waitpid(c.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The temporary folder of OUTDIR `name` in `parent`, or "" once none exists.
fs::path temporaryOf(const fs::path& parent, const std::string& name) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec))
    if (e.path().filename().string().rfind("." + name + ".tmp-", 0) == 0) return e.path();
  return {};
}

// Waits (up to 60 s) for the child's temporary output folder: the run has started.
bool waitForTemporary(const fs::path& parent, const std::string& name) {
  for (int i = 0; i < 6000; ++i) {
    if (!temporaryOf(parent, name).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

fs::path input() {
  const synth::SequenceResult& s = sequence();
  return s.video.empty() ? s.dir / "rgb.txt" : s.video;
}

TEST(Cli, InterruptedReconstructionLeavesNothing) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const std::string name = "out_sig" + std::to_string(sig);
    const fs::path out = tempRoot() / name;
    const Child c = spawn({"reconstruct", input().string(), "-o", out.string(), "-q",
                           "--all-frames", "--device", "cpu"});
    ASSERT_TRUE(waitForTemporary(tempRoot(), name)) << read(c.log);
    kill(c.pid, sig);
    EXPECT_EQ(wait(c), 128 + sig) << read(c.log);
    const std::string log = read(c.log);
    EXPECT_NE(log.find(sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("nothing was written"), std::string::npos) << log;
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;  // one line
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(temporaryOf(tempRoot(), name), fs::path()) << "the temporary folder was left";
  }
}

TEST(Cli, AKilledRunsTemporaryFolderIsRemovedByTheNextRun) {
  const std::string name = "out_kill";
  const Child c = spawn({"reconstruct", input().string(), "-o", (tempRoot() / name).string(), "-q",
                         "--all-frames", "--device", "cpu"});
  ASSERT_TRUE(waitForTemporary(tempRoot(), name)) << read(c.log);
  kill(c.pid, SIGKILL);
  EXPECT_EQ(wait(c), 1000 + SIGKILL);
  const fs::path left = temporaryOf(tempRoot(), name);
  ASSERT_FALSE(left.empty()) << "SIGKILL leaves the temporary folder (no handler runs)";
  // The next run on the same output removes it and says so.
  pipeline::OutputFolder next(tempRoot() / name, false);
  EXPECT_FALSE(fs::exists(left));
  ASSERT_EQ(next.notes().size(), 1u);
  EXPECT_NE(next.notes()[0].find(left.filename().string()), std::string::npos);
}

// Every file of a folder, by relative path, with its bytes (run records hold times: left out).
std::map<std::string, std::string> filesOf(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    // The run record and the report hold the run's times: everything else must be equal.
    if (e.is_regular_file() && e.path().extension() != ".json" &&
        e.path().filename() != "report.html")
      files[fs::relative(e.path(), dir).string()] = read(e.path());
  return files;
}

TEST(Cli, ReconstructionIsByteIdenticalOnOneAndFourThreads) {
  std::map<std::string, std::string> models[2];
  for (int i = 0; i < 2; ++i) {
    const fs::path out = tempRoot() / ("out_threads" + std::to_string(i));
    const Child c =
        spawn({"reconstruct", input().string(), "-o", out.string(), "-q", "--device", "cpu"},
              {i == 0 ? "OMP_NUM_THREADS=1" : "OMP_NUM_THREADS=4"});
    ASSERT_EQ(wait(c), 0) << read(c.log);
    models[i] = filesOf(out);
  }
  ASSERT_TRUE(models[0].count("sparse/0/points3D.bin"));
  ASSERT_TRUE(models[0].count("sparse/0/trajectory.txt"));
  EXPECT_GT(models[0]["sparse/0/points3D.bin"].size(), 1000u);
  ASSERT_EQ(models[0].size(), models[1].size());
  for (const auto& [name, bytes] : models[0])
    EXPECT_TRUE(models[1][name] == bytes) << name << " differs between 1 and 4 threads";
}

// run.json's `command` is the command line as typed, every option with it, each word quoted as
// a shell needs it: split again, it gives back the arguments.
TEST(Cli, RunRecordHoldsTheCommandAsTyped) {
  const fs::path out = tempRoot() / "out command";  // a space: quoted
  const std::vector<std::string> args{"reconstruct",
                                      (sequence().dir / "rgb.txt").string(),
                                      "-o",
                                      out.string(),
                                      "-q",
                                      "--device",
                                      "cpu",
                                      "--width",
                                      "256",
                                      "--fps",
                                      "2",
                                      "--camera",
                                      "PINHOLE 260,260,160.5,120.5"};
  const Child c = spawn(args);
  ASSERT_EQ(wait(c), 0) << read(c.log);
  const std::string json = read(out / "run.json");
  const std::string key = "\"command\": \"";
  const size_t at = json.find(key);
  ASSERT_NE(at, std::string::npos) << json;
  const std::string command =
      json.substr(at + key.size(), json.find('"', at + key.size()) - at - key.size());
  std::vector<std::string> typed{VIDMAP_CLI_PATH};
  typed.insert(typed.end(), args.begin(), args.end());
  EXPECT_EQ(command, pipeline::shellJoin(typed));
  EXPECT_EQ(pipeline::splitShellWords(command), typed);
  EXPECT_NE(command.find("'PINHOLE 260,260,160.5,120.5'"), std::string::npos) << command;
}

TEST(Cli, TracksAreByteIdenticalOnOneAndFourThreads) {
  std::string tracks[2];
  for (int i = 0; i < 2; ++i) {
    const fs::path out = tempRoot() / ("tracks" + std::to_string(i) + ".csv");
    const Child c = spawn({"track", (sequence().dir / "rgb.txt").string(), "--out", out.string(),
                           "--quiet", "--device", "cpu"},
                          {i == 0 ? "OMP_NUM_THREADS=1" : "OMP_NUM_THREADS=4"});
    ASSERT_EQ(wait(c), 0) << read(c.log);
    tracks[i] = read(out);
  }
  // Every frame of the list is tracked (--all-frames is the default for lists).
  EXPECT_NE(tracks[0].find(",23,"), std::string::npos);
  EXPECT_GT(std::count(tracks[0].begin(), tracks[0].end(), '\n'), 24 * 100);
  EXPECT_TRUE(tracks[0] == tracks[1]) << "the tracks differ between 1 and 4 threads";
}

}  // namespace
}  // namespace vidmap::cli
