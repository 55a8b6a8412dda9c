// The cases of issue 20 run as a user would, through the `vidmap` tool (and scripts/demo.sh):
// each asserts the exit code, the message and what is left on disk, and prints one row of the
// table in docs/reliability_track.md (scripts/reliability_track.sh collects them):
//   | case | exit | message | left on disk |
// `vidmap track` never replaces what it did not write, damaged input says so, inputs are
// validated before any work, and the tool sets OpenMP's passive wait policy itself.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "vidmap/core/temp_dir.h"
#include "vidmap/io/frame_source.h"
#include "vidmap/io/image_file.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/sequence.h"
#include "vidmap/synth/warp2d.h"

namespace {

namespace fs = std::filesystem;
using namespace vidmap;

struct ToolRun {
  int rc = -1;
  std::string output;  // stdout and stderr
};

// Runs `command` (a shell line) in `dir`; the tool is $VIDMAP.
ToolRun shell(const fs::path& dir, const std::string& command) {
  const fs::path log = dir / ".." / (dir.filename().string() + ".log");
  const std::string line = "cd '" + dir.string() + "' && export VIDMAP='" + VIDMAP_TOOL_PATH +
                           "' && " + command + " > '" + log.string() + "' 2>&1";
  const int status = std::system(line.c_str());
  std::ifstream f(log);
  std::stringstream s;
  s << f.rdbuf();
  fs::remove(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), s.str()};
}

ToolRun tool(const fs::path& dir, const std::string& args) {
  return shell(dir, "\"$VIDMAP\" " + args);
}

std::string readText(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The line a user reads: the error or warning, else the last line.
std::string message(const std::string& output) {
  std::istringstream in(output);
  std::string line, last, pick;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (pick.empty() &&
        (line.find("error") != std::string::npos || line.find("warning") != std::string::npos ||
         line.find("demo:") != std::string::npos))
      pick = line;
  }
  std::string m = pick.empty() ? last : pick;
  std::replace(m.begin(), m.end(), '|', '/');
  return m;
}

// The files under `dir` (relative, sorted), hidden ones included: temporaries would show.
std::string listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    if (it.depth() >= 1 && it->is_directory()) it.disable_recursion_pending();
    names.push_back(fs::relative(it->path(), dir).string() + (it->is_directory() ? "/" : ""));
  }
  std::sort(names.begin(), names.end());
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "(nothing)" : s;
}

// One row of the evidence table.
void row(const std::string& name, const ToolRun& r, const std::string& left) {
  std::printf("| %s | %d | %s | %s |\n", name.c_str(), r.rc, message(r.output).c_str(),
              left.c_str());
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A folder of textured frames moving 1.5 px a frame (what `track` needs to succeed).
void writeFrames(const fs::path& dir, int n = 4) {
  fs::create_directories(dir);
  synth::TexturedSceneOptions o;
  o.width = 320;
  o.height = 200;
  o.seed = 5;
  const GrayImage scene = synth::makeTexturedScene(o);
  for (int k = 0; k < n; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "f%02d.png", k);
    io::writePng(dir / name, synth::warpImage(scene, synth::translation(1.5 * k, 0)));
  }
}

class Safety : public ::testing::Test {
 protected:
  TempDir tmp_{"safety"};
  fs::path dir(const std::string& name) {
    const fs::path d = tmp_ / name;
    fs::create_directories(d);
    return d;
  }
};

// --- vidmap track: outputs -------------------------------------------------------------------

TEST_F(Safety, TrackRefusesToReplaceAUsersFile) {
  const fs::path d = dir("track_existing");
  writeFrames(d / "frames");
  std::ofstream(d / "results.csv") << "the user's results\n";
  ToolRun r = tool(d, "track frames --out results.csv --quiet");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "results.csv' exists")) << r.output;
  EXPECT_TRUE(has(r.output, "--overwrite")) << r.output;
  EXPECT_EQ(readText(d / "results.csv"), "the user's results\n");
  EXPECT_FALSE(fs::exists(d / "results.run.json"));
  row("track --out results.csv (a user's file)", r, "results.csv unchanged; " + listing(d));
  r = tool(d, "track frames --out results.csv --overwrite --quiet");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_TRUE(has(readText(d / "results.csv"), "id,frame,x,y,status"));
  EXPECT_TRUE(fs::exists(d / "results.run.json"));
  row("track --out results.csv --overwrite", r, "replaced; " + listing(d));
}

TEST_F(Safety, TrackDefaultRecordIsNotReplacedSilently) {
  const fs::path d = dir("track_record");
  writeFrames(d / "frames");
  std::ofstream(d / "t.run.json") << "{\"mine\": 1}";
  const ToolRun r = tool(d, "track frames --out t.csv --quiet");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "t.run.json' exists")) << r.output;
  EXPECT_EQ(readText(d / "t.run.json"), "{\"mine\": 1}");
  EXPECT_FALSE(fs::exists(d / "t.csv"));  // neither output: both or none
  row("track --out t.csv (t.run.json exists)", r, "t.run.json unchanged; " + listing(d));
}

TEST_F(Safety, TrackNeverWritesOverAnInput) {
  const fs::path d = dir("track_input");
  writeFrames(d / "frames");
  std::ofstream(d / "rgb.txt") << "0.0 frames/f00.png\n0.25 frames/f01.png\n0.5 frames/f02.png\n";
  const std::string list = readText(d / "rgb.txt");
  ToolRun r = tool(d, "track rgb.txt --out t.csv --record rgb.txt --overwrite --quiet");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "is an input")) << r.output;
  EXPECT_EQ(readText(d / "rgb.txt"), list);
  row("track rgb.txt --record rgb.txt --overwrite", r, "rgb.txt unchanged; " + listing(d));
  // A frame of the list, named through another path.
  const std::string frame = readText(d / "frames" / "f01.png");
  r = tool(d, "track rgb.txt --out t.csv --record ./frames/../frames/f01.png --overwrite --quiet");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "is an input")) << r.output;
  EXPECT_EQ(readText(d / "frames" / "f01.png"), frame);
  row("track rgb.txt --record frames/../frames/f01.png --overwrite", r,
      "f01.png unchanged; " + listing(d));
  if (io::videoSupported() && synth::sequenceVideoAvailable()) {
    synth::SequenceOptions o;
    o.frames = 4;
    o.width = 64;
    o.height = 48;
    o.video = d / "clip.mp4";
    synth::writeSequence(d / "seq", o);
    const std::string video = readText(d / "clip.mp4");
    r = tool(d, "track clip.mp4 --out t.csv --record clip.mp4 --overwrite --quiet");
    EXPECT_EQ(r.rc, 1) << r.output;
    EXPECT_TRUE(has(r.output, "is an input")) << r.output;
    EXPECT_EQ(readText(d / "clip.mp4"), video);
    row("track clip.mp4 --record clip.mp4 --overwrite", r, "clip.mp4 unchanged");
  }
}

TEST_F(Safety, TrackOutAndRecordAreTwoFiles) {
  const fs::path d = dir("track_same");
  writeFrames(d / "frames");
  const ToolRun r = tool(d, "track frames --out t.json --record ./t.json --quiet");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "same file")) << r.output;
  EXPECT_FALSE(fs::exists(d / "t.json"));
  row("track --out t.json --record t.json", r, listing(d));
}

// The two outputs are committed together (io::AtomicFileGroup): a failure of the second
// rename (a full disk, simulated in io_test AtomicFileGroup.FailureOfTheSecondRollsBackTheFirst
// and RealRenameFailureRollsBack) restores the first. Here the success path: both, no
// temporaries.
TEST_F(Safety, TrackWritesBothOutputsAndNoTemporaries) {
  const fs::path d = dir("track_ok");
  writeFrames(d / "frames");
  const ToolRun r = tool(d, "track frames --out t.csv --record rec.json --quiet");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_EQ(listing(d),
            "frames/, frames/f00.png, frames/f01.png, frames/f02.png, frames/f03.png, rec.json, "
            "t.csv");
  row("track --out t.csv --record rec.json", r, listing(d));
}

TEST_F(Safety, TrackOptionsHaveOneMeaning) {
  const fs::path d = dir("track_opts");
  writeFrames(d / "frames");
  ToolRun r = tool(d, "track frames --out t.csv --max-frames -3 --quiet");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "--max-frames must be >= 0")) << r.output;
  row("track --max-frames -3", r, listing(d));
  r = tool(d, "track --help");
  EXPECT_TRUE(has(r.output, "0: all")) << r.output;
  EXPECT_TRUE(has(r.output, "(0, 120]") || has(r.output, "[0.001, 120]")) << r.output;
}

// --- scripts/demo.sh DIR ------------------------------------------------------------------

TEST_F(Safety, DemoRefusesAFolderItDidNotWrite) {
  const fs::path d = dir("demo");
  fs::create_directories(d / "mystuff" / "photos");
  std::ofstream(d / "mystuff" / "thesis.txt") << "chapter 1";
  const std::string demo = std::string(VIDMAP_SOURCE_DIR) + "/scripts/demo.sh";
  ToolRun r = shell(d, "bash '" + demo + "' mystuff");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "not a previous demo output")) << r.output;
  EXPECT_EQ(readText(d / "mystuff" / "thesis.txt"), "chapter 1");
  row("scripts/demo.sh mystuff (thesis.txt, photos/)", r, listing(d));
  // A previous demo output with a user's file added: refused too.
  fs::create_directories(d / "old" / "model");
  std::ofstream(d / "old" / ".vidmap-demo");
  std::ofstream(d / "old" / "notes.txt") << "mine";
  r = shell(d, "bash '" + demo + "' old");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "notes.txt")) << r.output;
  EXPECT_TRUE(fs::exists(d / "old" / "notes.txt"));
  row("scripts/demo.sh old (a demo output + notes.txt)", r, listing(d / "old"));
}

// --- damaged input ------------------------------------------------------------------------

TEST_F(Safety, TruncatedVideoIsReportedAndStrictRefusesIt) {
  if (!io::videoSupported() || !synth::sequenceVideoAvailable()) GTEST_SKIP() << "no FFmpeg";
  const fs::path d = dir("video");
  synth::SequenceOptions o;
  o.frames = 16;
  o.width = 64;
  o.height = 48;
  o.video = d / "small.mp4";
  synth::writeSequence(d / "seq", o);
  {
    std::ifstream in(d / "small.mp4", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(d / "half.mp4", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  fs::remove_all(d / "seq");
  ToolRun r = tool(d, "reconstruct half.mp4 -o out --strict --all-frames -q");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "is damaged: the video ends early")) << r.output;
  EXPECT_FALSE(fs::exists(d / "out"));
  row("reconstruct half.mp4 --strict (head -c of a valid mp4)", r, listing(d));
  r = tool(d, "reconstruct half.mp4 -o out --all-frames");
  EXPECT_TRUE(has(r.output, "warning: damaged input: the video ends early")) << r.output;
  row("reconstruct half.mp4 (64x48 blank-ish frames)", r, listing(d));
}

TEST_F(Safety, BadFramesOfAFolderFailBeforeAnyWorkOrAreSkipped) {
  const fs::path d = dir("folder");
  writeFrames(d / "frames", 6);
  io::writePng(d / "frames" / "f04.png", GrayImage(50, 40, 0.5f));  // another size
  std::ofstream(d / "frames" / "f05.png") << "not a png";
  ToolRun r = tool(d, "reconstruct frames -o out -q");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "frame 5 of 6")) << r.output;
  EXPECT_TRUE(has(r.output, "--skip-bad-frames")) << r.output;
  EXPECT_FALSE(fs::exists(d / "out"));
  row("reconstruct frames (f04 50x40, f05 unreadable)", r, listing(d));
  r = tool(d, "track frames --out t.csv --skip-bad-frames --quiet");
  EXPECT_EQ(r.rc, 0) << r.output;
  EXPECT_TRUE(has(r.output, "2 unreadable frames skipped")) << r.output;
  row("track frames --skip-bad-frames", r, listing(d));
  r = tool(d, "reconstruct frames -o out --skip-bad-frames");
  EXPECT_TRUE(has(r.output, "2 unreadable frames skipped")) << r.output;
  row("reconstruct frames --skip-bad-frames", r, listing(d));
}

TEST_F(Safety, AHugeClaimedImageIsRefusedBeforeAllocating) {
  const fs::path d = dir("huge");
  writeFrames(d / "frames", 2);
  // f01.png's header rewritten to claim 16000 x 16000 (CRC left wrong: the size check comes
  // first, from the header bytes alone).
  std::string b = readText(d / "frames" / "f01.png");
  const char size[8] = {0, 0, 0x3E, static_cast<char>(0x80), 0, 0, 0x3E, static_cast<char>(0x80)};
  b.replace(16, 8, size, 8);
  std::ofstream(d / "frames" / "f01.png", std::ios::binary) << b;
  const ToolRun r =
      shell(d, "/usr/bin/time -f 'maxrss_kb %M' \"$VIDMAP\" reconstruct frames -o out -q");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "16000x16000")) << r.output;
  EXPECT_TRUE(has(r.output, "cannot hold")) << r.output;
  row("reconstruct frames (a PNG claiming 16000x16000)", r,
      listing(d) + "; " + message(r.output.substr(r.output.rfind("maxrss_kb"))));
}

// --- validation before work, messages ------------------------------------------------------

TEST_F(Safety, CameraIsValidatedAgainstTheImage) {
  const fs::path d = dir("camera");
  writeFrames(d / "frames", 2);
  ToolRun r = tool(d, "reconstruct frames -o out -q --camera 'PINHOLE 277,277,-5000,120'");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "cx = -5000")) << r.output;
  row("--camera 'PINHOLE 277,277,-5000,120'", r, listing(d));
  r = tool(d, "reconstruct frames -o out -q --camera 'OPENCV 277,277,160,100,1e30,0,0,0'");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "k1 = 1e+30")) << r.output;
  row("--camera 'OPENCV 277,277,160,100,1e30,0,0,0'", r, listing(d));
}

TEST_F(Safety, OptionsHaveOneRangeAndMessagesSayWhatIsWrong) {
  const fs::path d = dir("messages");
  writeFrames(d / "frames", 2);
  ToolRun r = tool(d, "reconstruct frames -o out -q --fps 500");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "[0.001, 120]")) << r.output;
  row("reconstruct --fps 500", r, listing(d));
  r = tool(d, "reconstruct --help");
  EXPECT_TRUE(has(r.output, "[0.001, 120]")) << r.output;
  EXPECT_TRUE(has(r.output, "0: no cap")) << r.output;
  EXPECT_TRUE(has(r.output, "is unknown and refined")) << r.output;
  std::ofstream(d / "empty.mp4");
  r = tool(d, "reconstruct empty.mp4 -o out -q");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "empty file")) << r.output;
  row("reconstruct empty.mp4 (0 bytes)", r, listing(d));
  std::ofstream(d / "same.txt") << "1.0 frames/f00.png\n1.0 frames/f01.png\n";
  r = tool(d, "reconstruct same.txt -o out -q");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "timestamps are equal")) << r.output;
  row("reconstruct same.txt (all timestamps 1.0)", r, listing(d));
  fs::create_directories(d / "still");
  io::writePng(d / "still" / "a.png", synth::makeTexturedScene({}));
  fs::copy_file(d / "still" / "a.png", d / "still" / "b.png");
  r = tool(d, "reconstruct still -o out -q");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_FALSE(has(r.output, "--fps")) << r.output;
  row("reconstruct still (a folder of two equal photos)", r, listing(d));
  r = tool(d, "reconstruc frames -o out");
  EXPECT_EQ(r.rc, 1) << r.output;
  EXPECT_TRUE(has(r.output, "unknown command 'reconstruc'")) << r.output;
  row("vidmap reconstruc (a typo)", r, listing(d));
}

// The tool runs with OpenMP's passive wait policy unless the user chose one: with
// OMP_DISPLAY_ENV=verbose the runtime prints the spin count it uses (0: passive; libgomp's
// default 300000; active 30000000000). The last display is the process that does the work.
TEST_F(Safety, OpenMpWaitsPassivelyInTheDefaultEnvironment) {
  const fs::path d = dir("omp");
  ToolRun r = shell(d, "env -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose \"$VIDMAP\" info");
  if (!has(r.output, "OPENMP DISPLAY ENVIRONMENT")) GTEST_SKIP() << "no OpenMP in this build";
  const std::string last = r.output.substr(r.output.rfind("GOMP_SPINCOUNT"));
  EXPECT_EQ(last.rfind("GOMP_SPINCOUNT = '0'", 0), 0u) << r.output;
  row("OMP_WAIT_POLICY unset: the spin count the runtime uses", {r.rc, "GOMP_SPINCOUNT = '0'"},
      "-");
  r = shell(d, "OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=verbose \"$VIDMAP\" info");
  EXPECT_TRUE(has(r.output, "OMP_WAIT_POLICY = 'ACTIVE'")) << r.output;
  EXPECT_FALSE(has(r.output, "GOMP_SPINCOUNT = '0'")) << r.output;
}

}  // namespace
