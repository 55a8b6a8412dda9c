// Video in and out through FFmpeg: test videos are written in the test with known frames
// (frame k has the gray level 20 + 5 k on its left half), then read back through FrameSource.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "vidmap/io/frame_source.h"
#include "vidmap/io/io_test_util.h"
#include "vidmap/io/video_writer.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;
using testing::expectError;
using testing::freshDir;

constexpr int kFrames = 40;
constexpr double kFps = 20;

int level(int k) { return 20 + 5 * k; }

// Frame k: left half level(k), right half a horizontal ramp, a white block moving right.
RgbImage patternFrame(int w, int h, int k) {
  RgbImage f(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      auto v = static_cast<std::uint8_t>(x < w / 2 ? level(k) : (x * 255) / (w - 1));
      f(x, y) = {v, static_cast<std::uint8_t>(x < w / 2 ? v : 255 - v), v};
    }
  for (int y = h / 2; y < h / 2 + 4; ++y)
    for (int x = w / 2 + k % 8; x < w / 2 + k % 8 + 4 && x < w; ++x) f(x, y) = {255, 255, 255};
  return f;
}

fs::path makeVideo(const fs::path& dir, const std::string& name, VideoCodec codec,
                   bool gray = false, int w = 64, int h = 48) {
  VideoWriterOptions o;
  o.fps = kFps;
  o.codec = codec;
  o.gray = gray;
  VideoWriter writer(dir / name, w, h, o);
  for (int k = 0; k < kFrames; ++k) {
    RgbImage f = patternFrame(w, h, k);
    if (gray) {
      GrayImage g(w, h);
      for (long i = 0; i < g.pixels(); ++i) g.data()[i] = f.data()[i].r / 255.f;
      writer.write(g);
    } else {
      writer.write(f);
    }
  }
  EXPECT_EQ(writer.framesWritten(), kFrames);
  writer.finish();
  return dir / name;
}

// Which frame a decoded image shows: from the mean level of its left quarter.
int frameId(const Frame& f) {
  double sum = 0;
  int n = 0;
  for (int y = 0; y < f.rgb.height(); ++y)
    for (int x = 0; x < f.rgb.width() / 4; ++x, ++n) sum += f.rgb(x, y).r;
  return static_cast<int>(std::lround((sum / n - 20) / 5));
}

std::vector<Frame> readAll(const fs::path& p, const FrameSourceOptions& o) {
  auto s = openFrameSource(p, o);
  std::vector<Frame> out;
  Frame f;
  while (s->next(f)) out.push_back(f);
  return out;
}

// The sampling rule by brute force over the source's frame times k / 20.
std::vector<int> expectedPicks(double fps) {
  std::vector<int> picks;
  for (int t = 0; t / fps < kFrames / kFps; ++t) {
    for (int k = 0; k < kFrames; ++k) {
      if (k / kFps >= t / fps - 1e-9) {
        if (picks.empty() || picks.back() != k) picks.push_back(k);
        break;
      }
    }
  }
  return picks;
}

class Video : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!videoSupported()) GTEST_SKIP() << "built without FFmpeg";
  }
};

TEST_F(Video, LosslessGrayFfv1RoundTripsEveryPixelAndTimestamp) {
  auto d = freshDir("ffv1");
  auto path = makeVideo(d, "gray.mkv", VideoCodec::kFfv1, true);
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);  // no temp
  FrameSourceOptions o;
  o.allFrames = true;
  auto s = openFrameSource(path, o);
  const auto& info = s->info();
  EXPECT_EQ(info.kind, SourceKind::kVideo);
  EXPECT_EQ(info.codec, "ffv1");
  EXPECT_EQ(info.nativeWidth, 64);
  EXPECT_EQ(info.nativeHeight, 48);
  EXPECT_DOUBLE_EQ(info.sourceFps, 20);
  EXPECT_NEAR(info.duration, 2.0, 0.051);
  EXPECT_EQ(info.frameCount, 40);
  Frame f;
  int k = 0;
  for (; s->next(f); ++k) {
    ASSERT_LT(k, kFrames);
    EXPECT_EQ(f.index, k);
    EXPECT_EQ(f.sourceIndex, k);
    EXPECT_NEAR(f.timestamp, k / kFps, 1e-9);
    RgbImage want = patternFrame(64, 48, k);
    for (long i = 0; i < want.pixels(); ++i) {
      ASSERT_EQ(f.rgb.data()[i].g, want.data()[i].r) << "frame " << k << " pixel " << i;
      ASSERT_EQ(f.gray.data()[i], want.data()[i].r / 255.f);
    }
  }
  EXPECT_EQ(k, kFrames);
  char name[32];
  std::snprintf(name, sizeof(name), "frame_%06d", kFrames - 1);
  EXPECT_EQ(f.name, name);
}

TEST_F(Video, LosslessRgbFfv1KeepsColours) {
  auto d = freshDir("ffv1rgb");
  auto path = makeVideo(d, "rgb.avi", VideoCodec::kAuto);  // .avi -> FFV1
  FrameSourceOptions o;
  o.fps = 120;  // above the source rate: every frame, once
  auto frames = readAll(path, o);
  ASSERT_EQ(frames.size(), static_cast<size_t>(kFrames));
  for (int k : {0, 17, 39}) {
    RgbImage want = patternFrame(64, 48, k);
    for (long i = 0; i < want.pixels(); ++i) {
      const Rgb8 a = want.data()[i], b = frames[k].rgb.data()[i];
      ASSERT_TRUE(a.r == b.r && a.g == b.g && a.b == b.b) << "frame " << k << " pixel " << i;
      float y = 0.299f * (a.r / 255.f) + 0.587f * (a.g / 255.f) + 0.114f * (a.b / 255.f);
      ASSERT_NEAR(frames[k].gray.data()[i], y, 1e-6);
    }
  }
}

TEST_F(Video, SamplingPicksTheFirstFrameAtOrAfterEachTarget) {
  auto d = freshDir("sample");
  auto path = makeVideo(d, "v.mkv", VideoCodec::kFfv1, true);
  for (double fps : {4.0, 3.0, 7.0, 0.5, 30.0}) {
    FrameSourceOptions o;
    o.fps = fps;
    auto s = openFrameSource(path, o);
    EXPECT_EQ(s->info().fps, fps);
    if (fps == 4.0) {
      EXPECT_EQ(s->info().frameCount, 8);
    }
    auto want = expectedPicks(fps);
    std::vector<Frame> frames;
    Frame f;
    while (s->next(f)) frames.push_back(f);
    ASSERT_EQ(frames.size(), want.size()) << "fps " << fps;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(frames[i].index, static_cast<int>(i));
      EXPECT_EQ(frames[i].sourceIndex, want[i]) << "fps " << fps;
      EXPECT_EQ(frameId(frames[i]), want[i]) << "fps " << fps;
      EXPECT_NEAR(frames[i].timestamp, want[i] / kFps, 1e-9);
    }
  }
  // fps 4 from 20: frames 0, 5, ..., 35 at 0, 0.25, ..., 1.75 s.
  auto w4 = expectedPicks(4);
  ASSERT_EQ(w4.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(w4[i], 5 * i);
}

TEST_F(Video, LossyCodecsKeepFramesAndTimestamps) {
  auto d = freshDir("lossy");
  std::vector<std::pair<VideoCodec, std::string>> cases = {{VideoCodec::kMpeg4, "m4.mp4"},
                                                           {VideoCodec::kMpeg4, "m4.mkv"}};
  if (videoCodecAvailable(VideoCodec::kH264)) cases.push_back({VideoCodec::kH264, "h264.mp4"});
  for (auto& [codec, name] : cases) {
    auto path = makeVideo(d, name, codec);
    FrameSourceOptions o;  // 4 fps
    auto frames = readAll(path, o);
    ASSERT_EQ(frames.size(), 8u) << name;
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(frameId(frames[i]), 5 * i) << name;
      EXPECT_NEAR(frames[i].timestamp, 0.25 * i, 1e-9) << name;
      // Lossy, but close: the left half's level within 3 of the truth.
      EXPECT_NEAR(frames[i].rgb(5, 5).r, level(5 * i), 3) << name;
      EXPECT_NEAR(frames[i].gray(5, 5), level(5 * i) / 255.0, 3 / 255.0) << name;
    }
  }
}

TEST_F(Video, ResizeToWidth) {
  auto d = freshDir("vresize");
  auto path = makeVideo(d, "v.mkv", VideoCodec::kFfv1, true, 128, 96);
  FrameSourceOptions o;
  o.width = 32;
  auto s = openFrameSource(path, o);
  EXPECT_EQ(s->info().width, 32);
  EXPECT_EQ(s->info().height, 24);
  EXPECT_EQ(s->info().nativeWidth, 128);
  Frame f;
  ASSERT_TRUE(s->next(f));
  ASSERT_TRUE(s->next(f));  // frame 5
  ASSERT_EQ(f.gray.width(), 32);
  ASSERT_EQ(f.gray.height(), 24);
  ASSERT_EQ(f.rgb.width(), 32);
  EXPECT_NEAR(f.rgb(4, 20).r, level(5), 1);  // inside the uniform left half
  EXPECT_NEAR(f.gray(4, 20), level(5) / 255.0, 1.5 / 255);
  // The ramp on the right half stays a ramp at the reduced size.
  EXPECT_LT(f.rgb(18, 2).r, f.rgb(30, 2).r);
  o.width = 256;  // enlarging works too
  s = openFrameSource(path, o);
  ASSERT_TRUE(s->next(f));
  EXPECT_EQ(f.gray.width(), 256);
  EXPECT_EQ(f.gray.height(), 192);
}

TEST_F(Video, TruncatedVideoEndsAfterItsLastDecodableFrame) {
  auto d = freshDir("trunc");
  auto path = makeVideo(d, "v.mkv", VideoCodec::kFfv1, true);
  size_t size = fs::file_size(path);
  testing::truncateCopy(path, d / "half.mkv", size / 2);
  FrameSourceOptions o;
  o.allFrames = true;
  auto frames = readAll(d / "half.mkv", o);
  EXPECT_GT(frames.size(), 5u);
  EXPECT_LT(frames.size(), static_cast<size_t>(kFrames));
  for (size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(frameId(frames[i]), static_cast<int>(i));
  // Cut inside the header: an error, never a hang.
  testing::truncateCopy(path, d / "head.mkv", 100);
  expectError([&] { openFrameSource(d / "head.mkv"); }, {"head.mkv"});
  // An MP4 (index first) cut in half also ends cleanly after the frames it holds.
  auto mp4 = makeVideo(d, "v.mp4", VideoCodec::kMpeg4);
  testing::truncateCopy(mp4, d / "half.mp4", fs::file_size(mp4) / 2);
  frames = readAll(d / "half.mp4", o);
  EXPECT_GT(frames.size(), 0u);
  EXPECT_LT(frames.size(), static_cast<size_t>(kFrames));
  for (size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(frameId(frames[i]), static_cast<int>(i));
}

// A video cut short reconstructed silently before (issue 20): the source now reports the
// early end against the container's frame count or duration, and a whole file reports none.
TEST_F(Video, TruncatedVideoIsReportedAsEndingEarly) {
  auto d = freshDir("report");
  FrameSourceOptions o;
  o.allFrames = true;
  auto drain = [&](const fs::path& p) {
    auto src = openFrameSource(p, o);
    Frame f;
    int n = 0;
    while (src->next(f)) ++n;
    SourceReport r = src->report();
    std::printf("%s: %d frames, %s\n", p.filename().c_str(), n, r.describe().c_str());
    return r;
  };
  struct Case {
    const char* name;
    VideoCodec codec;
  };
  for (const Case c : {Case{"v.mkv", VideoCodec::kFfv1}, Case{"v.mp4", VideoCodec::kMpeg4}}) {
    const fs::path path = makeVideo(d, c.name, c.codec);
    SourceReport whole = drain(path);
    EXPECT_TRUE(whole.reachedEnd);
    EXPECT_FALSE(whole.damaged()) << c.name << ": " << whole.describe();
    EXPECT_EQ(whole.describe(), "");
    const fs::path half = d / (std::string("half_") + c.name);
    testing::truncateCopy(path, half, fs::file_size(path) / 2);
    SourceReport cut = drain(half);
    EXPECT_TRUE(cut.reachedEnd);
    EXPECT_TRUE(cut.endedEarly) << c.name;
    EXPECT_TRUE(cut.damaged());
    EXPECT_LT(cut.secondsDecoded, 0.8 * cut.secondsExpected) << c.name;
    EXPECT_NE(cut.describe().find("ends early"), std::string::npos) << cut.describe();
  }
}

TEST_F(Video, ContainerWithoutFramesIsNoFrames) {
  auto d = freshDir("noframes");
  auto path = makeVideo(d, "v.mkv", VideoCodec::kFfv1, true);
  // Cut at the first Matroska Cluster: the stream is declared, the file ends early.
  auto bytes = testing::readBytes(path);
  const unsigned char cluster[4] = {0x1F, 0x43, 0xB6, 0x75};
  auto it = std::search(bytes.begin(), bytes.end(), cluster, cluster + 4);
  ASSERT_NE(it, bytes.end());
  testing::writeBytes(d / "cut.mkv", std::vector<unsigned char>(bytes.begin(), it));
  expectError([&] { openFrameSource(d / "cut.mkv"); }, {"cut.mkv", "ends early"});
  // MPEG-4 packets whose VOP start codes are wiped: every packet fails to decode.
  VideoWriterOptions m4;
  m4.codec = VideoCodec::kMpeg4;
  m4.fps = kFps;
  {
    VideoWriter w(d / "m4.mkv", 64, 48, m4);
    for (int k = 0; k < 10; ++k) w.write(patternFrame(64, 48, k));
    w.finish();
  }
  bytes = testing::readBytes(d / "m4.mkv");
  const unsigned char vop[4] = {0, 0, 1, 0xB6};
  int wiped = 0;
  for (auto p = bytes.begin(); (p = std::search(p, bytes.end(), vop, vop + 4)) != bytes.end();
       ++wiped) {
    std::fill(p, std::min(p + 40, bytes.end()), 0);
  }
  EXPECT_EQ(wiped, 10);
  testing::writeBytes(d / "dead.mkv", bytes);
  expectError([&] { openFrameSource(d / "dead.mkv"); }, {"no frames", "dead.mkv"});
  // A WAV file (audio only): no video stream.
  std::vector<unsigned char> wav = {'R', 'I', 'F',  'F',  0,   0,   0,    0,    'W', 'A', 'V',
                                    'E', 'f', 'm',  't',  ' ', 16,  0,    0,    0,   1,   0,
                                    1,   0,   0x40, 0x1F, 0,   0,   0x80, 0x3E, 0,   0,   2,
                                    0,   16,  0,    'd',  'a', 't', 'a',  0,    0,   0,   0};
  size_t samples = 8000;
  wav.resize(wav.size() + 2 * samples, 0);
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) wav[at + i] = static_cast<unsigned char>(v >> (8 * i));
  };
  put32(4, static_cast<uint32_t>(wav.size() - 8));
  put32(40, static_cast<uint32_t>(2 * samples));
  testing::writeBytes(d / "sound.wav", wav);
  expectError([&] { openFrameSource(d / "sound.wav"); }, {"no frames", "no video stream"});
}

TEST_F(Video, BadInputsAreClearErrors) {
  auto d = freshDir("vbad");
  expectError([&] { openFrameSource(d / "missing.mp4"); }, {"does not exist", "missing.mp4"});
  std::vector<unsigned char> junk(20000);
  uint32_t x = 12345;
  for (auto& b : junk) b = static_cast<unsigned char>((x = x * 1103515245 + 12345) >> 24);
  testing::writeBytes(d / "junk.mp4", junk);
  expectError([&] { openFrameSource(d / "junk.mp4"); }, {"junk.mp4"});
  testing::writeBytes(d / "tiny.mp4", {0, 0, 0});
  expectError([&] { openFrameSource(d / "tiny.mp4"); }, {"tiny.mp4"});
  auto path = makeVideo(d, "ok.mkv", VideoCodec::kFfv1, true);
  for (double fps : {0.0, 121.0, std::numeric_limits<double>::quiet_NaN()}) {
    FrameSourceOptions o;
    o.fps = fps;
    expectError([&] { openFrameSource(path, o); }, {"fps", "[0.001, 120]"});
  }
}

TEST_F(Video, WriterProblemsAreClearErrorsAndLeaveNothing) {
  auto d = freshDir("wbad");
  expectError([&] { VideoWriter(d / "x.webm", 64, 48); }, {"x.webm", "container"});
  VideoWriterOptions m4;
  m4.codec = VideoCodec::kMpeg4;
  expectError([&] { VideoWriter(d / "odd.mp4", 63, 48, m4); }, {"odd.mp4", "even"});
  VideoWriterOptions ffv1;
  ffv1.codec = VideoCodec::kFfv1;
  expectError([&] { VideoWriter(d / "f.mp4", 64, 48, ffv1); }, {"f.mp4", "FFV1"});
  VideoWriterOptions gray4;
  gray4.codec = VideoCodec::kMpeg4;
  gray4.gray = true;
  expectError([&] { VideoWriter(d / "g.mkv", 64, 48, gray4); }, {"gray"});
  VideoWriterOptions badFps;
  badFps.fps = 0;
  expectError([&] { VideoWriter(d / "z.mkv", 64, 48, badFps); }, {"fps"});
  expectError([&] { VideoWriter(d / "nofolder" / "a.mkv", 64, 48); }, {"does not exist"});
  expectError([&] { VideoWriter(d / "s.mkv", 0, 48); }, {"size"});
  {
    VideoWriter w(d / "sz.mkv", 64, 48);
    expectError([&] { w.write(RgbImage(32, 48)); }, {"32x48", "64x48"});
    expectError([&] { w.finish(); }, {"no frames"});
  }
  {
    VideoWriter w(d / "partial.mkv", 64, 48);
    w.write(patternFrame(64, 48, 0));
    EXPECT_FALSE(fs::exists(d / "partial.mkv"));  // only a temporary until finish()
  }  // destroyed without finish(): the temporary goes too
  EXPECT_TRUE(fs::is_empty(d)) << "left: " << fs::directory_iterator(d)->path();
}

TEST(VideoWithoutFfmpeg, IsAClearError) {
  if (videoSupported()) GTEST_SKIP() << "this build has FFmpeg";
  auto d = freshDir("noff");
  testing::writeBytes(d / "a.mp4", std::vector<unsigned char>(100, 7));
  expectError([&] { openFrameSource(d / "a.mp4"); }, {"a.mp4", "no video support"});
  expectError([&] { VideoWriter(d / "b.mkv", 64, 48); }, {"b.mkv", "no video support"});
  EXPECT_FALSE(videoCodecAvailable(VideoCodec::kFfv1));
}

}  // namespace
}  // namespace vidmap::io
