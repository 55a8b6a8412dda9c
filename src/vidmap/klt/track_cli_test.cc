// `vidmap track` end to end: a folder of 16-bit PNG frames of the textured scene moving by a
// known (1.5, -0.75) px per frame; the tracks in the CSV must follow that motion, the JSON
// and the run record must be written, and bad input must end with one clear error and no
// output file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "vidmap/core/temp_dir.h"
#include "vidmap/io/image_file.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace {

namespace fs = std::filesystem;
using namespace vidmap;

struct ToolRun {
  int rc;
  std::string output;
};

ToolRun runTool(const std::string& args) {
  const fs::path log =
      fs::temp_directory_path() / ("vidmap_track_test_" + std::to_string(::getpid()) + ".log");
  const std::string cmd =
      std::string(VIDMAP_TOOL_PATH) + " track " + args + " > " + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream f(log);
  std::stringstream s;
  s << f.rdbuf();
  fs::remove(log);
  return {WEXITSTATUS(status), s.str()};
}

class TrackCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = vidmap::testFolder("track_cli");
    fs::create_directories(dir_ / "frames");
    synth::TexturedSceneOptions o;
    o.width = 320;
    o.height = 200;
    o.seed = 21;
    const GrayImage scene = synth::makeTexturedScene(o);
    for (int k = 0; k < kFrames; ++k) {
      char name[32];
      std::snprintf(name, sizeof name, "f%02d.png", k);
      io::writePng(dir_ / "frames" / name,
                   synth::warpImage(scene, synth::translation(kDx * k, kDy * k)), 16);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  static constexpr int kFrames = 6;
  static constexpr double kDx = 1.5, kDy = -0.75;
  fs::path dir_;
};

TEST_F(TrackCli, TracksFollowTheKnownMotion) {
  const fs::path csv = dir_ / "tracks.csv";
  const ToolRun r = runTool((dir_ / "frames").string() + " --out " + csv.string() +
                            " --keyframe-every 0 --refill-below 0 --klt.capacity 200 --quiet");
  ASSERT_EQ(r.rc, 0) << r.output;
  EXPECT_NE(r.output.find("ends by reason"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("track length"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(dir_ / "tracks.run.json"));
  std::ifstream f(csv);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "id,frame,x,y,status");
  struct Seen {
    int frame0 = -1;
    double x0 = 0, y0 = 0;
  };
  std::map<long, Seen> seeds;
  int rows = 0, checked = 0, bad = 0, aliveLast = 0;
  while (std::getline(f, line)) {
    long id;
    int frame;
    double x, y;
    char status[32];
    ASSERT_EQ(std::sscanf(line.c_str(), "%ld,%d,%lf,%lf,%31s", &id, &frame, &x, &y, status), 5)
        << line;
    ++rows;
    Seen& s = seeds[id];
    if (s.frame0 < 0) {
      s = {frame, x, y};
      continue;
    }
    if (std::string(status) != "alive") continue;
    ++checked;
    const double ex = x - (s.x0 + kDx * (frame - s.frame0)),
                 ey = y - (s.y0 + kDy * (frame - s.frame0));
    if (std::hypot(ex, ey) > 0.15) ++bad;
    if (frame == kFrames - 1) ++aliveLast;
  }
  std::printf(
      "%d rows, %zu tracks, %d alive observations checked, %d off by > 0.15 px, %d alive at "
      "the last frame\n",
      rows, seeds.size(), checked, bad, aliveLast);
  EXPECT_EQ(seeds.size(), 200u);
  EXPECT_GT(checked, 4 * 180);
  EXPECT_EQ(bad, 0);
  EXPECT_GE(aliveLast, 170);  // some leave the frame (7.5 px in 5 frames)
}

TEST_F(TrackCli, JsonOutput) {
  const fs::path json = dir_ / "t.json";
  const ToolRun r = runTool((dir_ / "frames").string() + " --out " + json.string() + " --record " +
                            (dir_ / "rec.json").string() + " --klt.capacity 50 --quiet");
  ASSERT_EQ(r.rc, 0) << r.output;
  std::ifstream f(json);
  std::stringstream s;
  s << f.rdbuf();
  EXPECT_NE(s.str().find("\"format\": \"vidmap.tracks\""), std::string::npos);
  EXPECT_NE(s.str().find("\"frames\": 6"), std::string::npos);
  std::ifstream rec(dir_ / "rec.json");
  std::stringstream t;
  t << rec.rdbuf();
  EXPECT_NE(t.str().find("\"klt.track\""), std::string::npos) << t.str().substr(0, 400);
}

TEST_F(TrackCli, BadInputGetsOneClearError) {
  const std::string frames = (dir_ / "frames").string();
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {frames + " --out " + (dir_ / "x.txt").string(), "must end in .csv or .json"},
      {(dir_ / "missing").string() + " --out " + (dir_ / "x.csv").string(), "missing"},
      {frames + " --out " + (dir_ / "x.csv").string() + " --fps 0", "fps"},
      {frames + " --out " + (dir_ / "x.csv").string() + " --klt.capacity 0", "klt.capacity"},
      {frames + " --out " + (dir_ / "x.csv").string() + " --klt.halfWindow 99", "klt.halfWindow"},
      {frames + " --out " + (dir_ / "x.csv").string() + " --backend foo", "--backend"},
      {frames + " --out " + (dir_ / "no_such_dir" / "x.csv").string(), "no_such_dir"},
  };
  for (const Case& c : cases) {
    const ToolRun r = runTool(c.args);
    EXPECT_EQ(r.rc, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find("error"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir_ / "x.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "x.txt"));
  // A frame too small for the window.
  fs::create_directories(dir_ / "tiny");
  io::writePng(dir_ / "tiny" / "a.png", GrayImage(12, 12, 0.5f));
  const ToolRun tiny = runTool((dir_ / "tiny").string() + " --out " + (dir_ / "x.csv").string());
  EXPECT_EQ(tiny.rc, 1);
  EXPECT_NE(tiny.output.find("window"), std::string::npos) << tiny.output;
}

}  // namespace
