// A written sequence read back through io's FrameSource: the TUM list and the MP4 video
// (when the build has FFmpeg).
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/synth/render3d.h"
#include "vidmap/synth/sequence.h"

#include "vidmap/io/frame_source.h"

namespace vidmap::synth {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) { return testFolder("synth_io_" + name); }

SequenceOptions small() {
  SequenceOptions o;
  o.scene = "room";
  o.path = "pan";
  o.frames = 5;
  o.fps = 12;
  o.width = 96;
  o.height = 64;
  o.seed = 4;
  return o;
}

std::vector<RgbImage> truthFrames(const SequenceOptions& o) {
  Scene scene = makeScene(o.scene, o.seed);
  PathOptions po;
  po.kind = parsePathKind(o.path);
  po.frames = o.frames;
  po.fps = o.fps;
  PinholeCamera cam = PinholeCamera::fromHfov(o.width, o.height, o.hfovDeg);
  std::vector<RgbImage> out;
  for (const CameraFrame& f : makeCameraPath(scene, po))
    out.push_back(renderImage(scene, cam, f.pose));
  return out;
}

double psnr(const RgbImage& a, const RgbImage& b) {
  double se = 0;
  for (long i = 0; i < a.pixels(); ++i) {
    const Rgb8 p = a.data()[i], q = b.data()[i];
    se += (p.r - q.r) * (p.r - q.r) + (p.g - q.g) * (p.g - q.g) + (p.b - q.b) * (p.b - q.b);
  }
  double mse = se / (3.0 * a.pixels());
  return mse == 0 ? 99 : 10 * std::log10(255.0 * 255.0 / mse);
}

TEST(SequenceIo, FrameSourceReadsTheImageListExactly) {
  fs::path root = freshDir("list");
  SequenceOptions o = small();
  writeSequence(root / "seq", o);
  auto want = truthFrames(o);
  io::FrameSourceOptions fo;
  fo.allFrames = true;
  auto src = io::openFrameSource(root / "seq" / "rgb.txt", fo);
  io::Frame f;
  int n = 0;
  while (src->next(f)) {
    ASSERT_LT(n, o.frames);
    EXPECT_NEAR(f.timestamp, n / o.fps, 1e-9);
    ASSERT_EQ(f.rgb.width(), o.width);
    EXPECT_EQ(psnr(f.rgb, want[n]), 99) << "frame " << n;  // lossless
    ++n;
  }
  EXPECT_EQ(n, o.frames);
  fs::remove_all(root);
}

TEST(SequenceIo, VideoHoldsTheFrames) {
  if (!sequenceVideoAvailable()) GTEST_SKIP() << "no video writer in this build";
  fs::path root = freshDir("video");
  SequenceOptions o = small();
  o.video = root / "seq.mp4";
  SequenceResult r = writeSequence(root / "seq", o);
  EXPECT_EQ(r.video, o.video);
  ASSERT_TRUE(fs::exists(o.video));
  auto want = truthFrames(o);
  io::FrameSourceOptions fo;
  fo.allFrames = true;
  auto src = io::openFrameSource(o.video, fo);
  io::Frame f;
  int n = 0;
  while (src->next(f)) {
    ASSERT_LT(n, o.frames);
    EXPECT_NEAR(f.timestamp, n / o.fps, 1e-3);
    EXPECT_GT(psnr(f.rgb, want[n]), 28.0) << "frame " << n;  // lossy codec, 4:2:0
    ++n;
  }
  EXPECT_EQ(n, o.frames);
  // Odd sizes cannot be encoded as 4:2:0; a missing folder is named.
  o.width = 95;
  EXPECT_THROW(writeSequence(root / "odd", o), Error);
  EXPECT_FALSE(fs::exists(root / "odd"));
  o = small();
  o.video = root / "missing" / "v.mp4";
  EXPECT_THROW(writeSequence(root / "nofolder", o), Error);
  EXPECT_FALSE(fs::exists(root / "nofolder"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace vidmap::synth
