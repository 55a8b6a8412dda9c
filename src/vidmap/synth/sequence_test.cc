// writeSequence end to end: the files read back to exactly the truth of the path, frames
// equal a direct render, the output is deterministic by seed, and bad options or folders
// give clear errors and leave nothing behind.
#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/synth/render3d.h"
#include "vidmap/synth/sequence.h"
#include "vidmap/synth/truth_io.h"

namespace vidmap::synth {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) { return testFolder("synth_" + name); }

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

RgbImage readPng(const fs::path& p) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, p.c_str())) return {};
  img.format = PNG_FORMAT_RGB;
  RgbImage out(img.width, img.height);
  if (!png_image_finish_read(&img, nullptr, out.data(), 0, nullptr)) return {};
  return out;
}

SequenceOptions small() {
  SequenceOptions o;
  o.scene = "facade";
  o.path = "sideways";
  o.frames = 4;
  o.fps = 10;
  o.width = 80;
  o.height = 60;
  o.seed = 17;
  return o;
}

// No temporary or backup folders left beside the output.
void expectNoLeftovers(const fs::path& parent) {
  for (const auto& e : fs::directory_iterator(parent))
    EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
}

TEST(Sequence, FilesHoldExactlyTheTruth) {
  fs::path root = freshDir("truth");
  SequenceOptions o = small();
  o.writeDepth = true;
  SequenceResult r = writeSequence(root / "seq", o);
  EXPECT_EQ(r.dir, root / "seq");
  Scene scene = makeScene(o.scene, o.seed);
  PathOptions po;
  po.kind = parsePathKind(o.path);
  po.frames = o.frames;
  po.fps = o.fps;
  auto path = makeCameraPath(scene, po);

  SequenceTruth t = readSequenceTruth(r.dir);
  ASSERT_EQ(t.frames.size(), path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    // Exactly the same doubles (17 significant digits round-trip).
    EXPECT_EQ(t.frames[i].pose.t, path[i].pose.t);
    EXPECT_EQ(t.frames[i].pose.q.coeffs(), path[i].pose.q.coeffs());
    EXPECT_NEAR(t.frames[i].timestamp, path[i].timestamp, 1e-9);
  }
  PinholeCamera cam = PinholeCamera::fromHfov(o.width, o.height, o.hfovDeg);
  EXPECT_EQ(t.camera.fx, cam.fx);
  EXPECT_EQ(t.camera.cx, cam.cx);
  EXPECT_EQ(t.camera.cy, cam.cy);
  EXPECT_EQ(t.info.at("scene"), "facade");

  // groundtruth.txt parsed by hand, independently of parseTumTrajectory.
  std::istringstream gt(slurp(r.dir / "groundtruth.txt"));
  std::string line;
  size_t n = 0;
  while (std::getline(gt, line)) {
    if (line.empty() || line[0] == '#') continue;
    double v[8];
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf %lf %lf %lf %lf %lf %lf %lf", v, v + 1, v + 2, v + 3,
                          v + 4, v + 5, v + 6, v + 7),
              8);
    ASSERT_LT(n, path.size());
    EXPECT_EQ(v[1], path[n].pose.t.x());
    EXPECT_EQ(v[4], path[n].pose.q.x());
    EXPECT_EQ(v[7], path[n].pose.q.w());
    ++n;
  }
  EXPECT_EQ(n, path.size());

  // images.txt is world-to-camera: it maps the camera centre to the origin.
  std::istringstream im(slurp(r.dir / "images.txt"));
  n = 0;
  while (std::getline(im, line)) {
    if (line.empty() || line[0] == '#') continue;
    double q[4], tr[3];
    int id, camId;
    char name[64];
    ASSERT_EQ(std::sscanf(line.c_str(), "%d %lf %lf %lf %lf %lf %lf %lf %d %63s", &id, q, q + 1,
                          q + 2, q + 3, tr, tr + 1, tr + 2, &camId, name),
              10);
    Eigen::Quaterniond qcw(q[0], q[1], q[2], q[3]);
    Eigen::Vector3d c = path[id - 1].pose.t;
    EXPECT_NEAR((qcw * c + Eigen::Vector3d(tr[0], tr[1], tr[2])).norm(), 0, 1e-12);
    EXPECT_EQ(std::string(name), "frame_00000" + std::to_string(id - 1) + ".png");
    ++n;
  }
  EXPECT_EQ(n, path.size());
  // cameras.txt: COLMAP's principal point is half a pixel right/down of OpenCV's.
  std::string cams = slurp(r.dir / "cameras.txt");
  EXPECT_NE(cams.find("1 PINHOLE 80 60 "), std::string::npos);
  EXPECT_NE(cams.find(" 40 30\n"), std::string::npos) << cams;

  // The frames are the renders of the truth poses, and the images rgb.txt lists exist.
  ASSERT_EQ(t.images.size(), path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    RgbImage got = readPng(t.images[i]);
    ASSERT_EQ(got.width(), o.width) << t.images[i];
    RgbImage want = renderImage(scene, cam, path[i].pose);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.vec().size() * sizeof(Rgb8)));
  }
  EXPECT_TRUE(fs::exists(r.dir / "depth" / "frame_000003.png"));
  EXPECT_TRUE(fs::exists(r.dir / "depth.txt"));
  expectNoLeftovers(root);
  fs::remove_all(root);
}

TEST(Sequence, DeterministicBySeed) {
  fs::path root = freshDir("det");
  SequenceOptions o = small();
  writeSequence(root / "a", o);
  writeSequence(root / "b", o);
  o.seed = 18;
  writeSequence(root / "c", o);
  for (const auto& e : fs::recursive_directory_iterator(root / "a")) {
    if (!e.is_regular_file()) continue;
    fs::path rel = fs::relative(e.path(), root / "a");
    EXPECT_EQ(slurp(e.path()), slurp(root / "b" / rel)) << rel;
  }
  EXPECT_NE(slurp(root / "a/rgb/frame_000000.png"), slurp(root / "c/rgb/frame_000000.png"));
  // The truth does not depend on the seed (only the textures do).
  EXPECT_EQ(slurp(root / "a/groundtruth.txt"), slurp(root / "c/groundtruth.txt"));
  fs::remove_all(root);
}

TEST(Sequence, BadOptionsGiveClearErrorsAndWriteNothing) {
  fs::path root = freshDir("bad");
  auto expectError = [&](SequenceOptions o, const std::string& word) {
    try {
      writeSequence(root / "out", o);
      ADD_FAILURE() << "no error for " << word;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(root / "out")) << word;
  };
  SequenceOptions o = small();
  o.frames = 0;
  expectError(o, "frames");
  o = small();
  o.width = 0;
  expectError(o, "width");
  o = small();
  o.height = 100000;
  expectError(o, "height");
  o = small();
  o.fps = 0;
  expectError(o, "fps");
  o = small();
  o.hfovDeg = 0;
  expectError(o, "hfov");
  o = small();
  o.scene = "castle";
  expectError(o, "castle");
  o = small();
  o.path = "spiral";
  expectError(o, "spiral");
  if (!sequenceVideoAvailable()) {
    o = small();
    o.video = root / "v.mp4";
    expectError(o, "video");
    EXPECT_FALSE(fs::exists(root / "v.mp4"));
  }
  // A missing parent folder.
  EXPECT_THROW(writeSequence(root / "no" / "such" / "dir", small()), Error);
  EXPECT_FALSE(fs::exists(root / "no"));
  expectNoLeftovers(root);
  fs::remove_all(root);
}

TEST(Sequence, ExistingFoldersAreKeptUnlessOverwriteIsAsked) {
  fs::path root = freshDir("exist");
  fs::create_directories(root / "seq");
  { std::ofstream(root / "seq" / "keep.txt") << "mine"; }
  EXPECT_THROW(writeSequence(root / "seq", small()), Error);
  EXPECT_EQ(slurp(root / "seq" / "keep.txt"), "mine");
  { std::ofstream(root / "file") << "x"; }
  EXPECT_THROW(writeSequence(root / "file", small()), Error);
  SequenceOptions o = small();
  o.overwrite = true;
  writeSequence(root / "seq", o);
  EXPECT_FALSE(fs::exists(root / "seq" / "keep.txt"));
  EXPECT_TRUE(fs::exists(root / "seq" / "groundtruth.txt"));
  // An empty folder is simply filled.
  fs::create_directories(root / "empty");
  writeSequence(root / "empty", small());
  EXPECT_TRUE(fs::exists(root / "empty" / "rgb.txt"));
  expectNoLeftovers(root);
  fs::remove_all(root);
}

TEST(TruthIo, MalformedFilesAreRejectedWithTheLine) {
  EXPECT_THROW(parseTumTrajectory("", "gt"), Error);
  try {
    parseTumTrajectory("# c\n0 1 2 3 0 0 0 1\n0.1 1 2 3 0 0 0\n", "gt.txt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gt.txt line 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parseTumTrajectory("0 1 2 3 0 0 0 2\n", "gt"), Error);    // not a unit q
  EXPECT_THROW(parseTumTrajectory("0 1 2 x 0 0 0 1\n", "gt"), Error);    // not a number
  EXPECT_THROW(parseTumTrajectory("0 1 2 nan 0 0 0 1\n", "gt"), Error);  // not finite
  EXPECT_THROW(readSequenceTruth("/nonexistent/vidmap/seq"), Error);
}

}  // namespace
}  // namespace vidmap::synth
