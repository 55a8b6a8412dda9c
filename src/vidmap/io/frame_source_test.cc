#include "vidmap/io/frame_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include "vidmap/core/data_dir.h"
#include "vidmap/io/color.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/io_test_util.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;
using testing::expectError;
using testing::freshDir;
using testing::levelFrame;
using testing::levelId;
using testing::writeText;

std::vector<Frame> readAll(FrameSource& s) {
  std::vector<Frame> out;
  Frame f;
  while (s.next(f)) out.push_back(f);
  return out;
}

TEST(NaturalOrder, DigitRunsCompareAsNumbers) {
  EXPECT_TRUE(naturalLess("frame2.png", "frame10.png"));
  EXPECT_FALSE(naturalLess("frame10.png", "frame2.png"));
  EXPECT_TRUE(naturalLess("img_009.png", "img_10.png"));
  EXPECT_TRUE(naturalLess("a", "a1"));
  EXPECT_TRUE(naturalLess("a1b2", "a1b10"));
  EXPECT_TRUE(naturalLess("A.png", "a.png"));                 // bytes elsewhere
  EXPECT_NE(naturalLess("01", "1"), naturalLess("1", "01"));  // a strict, fixed order
  std::vector<std::string> names = {"f10", "f1", "f002", "f2b", "f20", "g", "f3"};
  std::sort(names.begin(), names.end(), naturalLess);
  EXPECT_EQ(names, (std::vector<std::string>{"f1", "f002", "f2b", "f3", "f10", "f20", "g"}));
}

TEST(FrameSource, FolderInNaturalOrderWithTimestamps) {
  auto d = freshDir("folder");
  std::vector<int> numbers = {10, 2, 1, 23, 3};
  for (int n : numbers) writePng(d / ("frame" + std::to_string(n) + ".png"), levelFrame(40, 30, n));
  writeText(d / "notes.txt", "not a frame");
  writePng(d / ".hidden.png", levelFrame(40, 30, 0));
  fs::create_directories(d / "sub.png");
  FrameSourceOptions o;
  o.fps = 5;
  auto s = openFrameSource(d, o);
  const auto& info = s->info();
  EXPECT_EQ(info.kind, SourceKind::kImageFolder);
  EXPECT_EQ(info.frameCount, 5);
  EXPECT_EQ(info.nativeWidth, 40);
  EXPECT_EQ(info.nativeHeight, 30);
  EXPECT_EQ(info.width, 40);
  EXPECT_EQ(info.fps, 5);
  auto frames = readAll(*s);
  std::vector<int> want = {1, 2, 3, 10, 23};
  ASSERT_EQ(frames.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(frames[i].index, static_cast<int>(i));
    EXPECT_EQ(frames[i].sourceIndex, static_cast<int>(i));
    EXPECT_EQ(frames[i].name, "frame" + std::to_string(want[i]) + ".png");
    EXPECT_DOUBLE_EQ(frames[i].timestamp, i / 5.0);
    EXPECT_EQ(levelId(frames[i].gray), want[i]);
    EXPECT_EQ(frames[i].rgb(3, 3).r, 20 + 10 * want[i]);
  }
  Frame f;
  EXPECT_FALSE(s->next(f));  // stays at the end
}

// A folder of numbered frames of one size is a video: timed at folderFrameRate and sampled at
// fps; forced to photos it yields every image at the nominal rate, as folders always did.
TEST(FrameSource, FolderOfVideoFramesIsSampledAsAVideo) {
  auto d = freshDir("video_frames");
  char name[32];
  for (int i = 0; i < 30; ++i) {
    std::snprintf(name, sizeof name, "%05d.png", i + 1);
    writePng(d / name, levelFrame(40, 30, i % 20));  // levels up to id 23 fit in 8 bits
  }
  FrameSourceOptions o;
  o.fps = 10;
  o.folderFrameRate = 30;
  auto s = openFrameSource(d, o);
  EXPECT_TRUE(s->info().sequential);
  EXPECT_NE(s->info().reason.find("numbered names 00001.png .. 00030.png of one size (40x30)"),
            std::string::npos)
      << s->info().reason;
  EXPECT_EQ(s->info().fps, 10);
  EXPECT_EQ(s->info().sourceFps, 30);
  auto frames = readAll(*s);
  ASSERT_EQ(frames.size(), 10u);  // 0, 3, 6, ... of 30 Hz at 10 Hz
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(levelId(frames[k].gray), 3 * k % 20);
    EXPECT_EQ(frames[k].sourceIndex, 3 * k);
    EXPECT_DOUBLE_EQ(frames[k].timestamp, 3 * k / 30.0);
  }
  o.allFrames = true;
  s = openFrameSource(d, o);
  EXPECT_EQ(s->info().fps, 30);
  EXPECT_EQ(readAll(*s).size(), 30u);
  o.allFrames = false;
  o.folder = FolderKind::kPhotos;
  s = openFrameSource(d, o);
  EXPECT_FALSE(s->info().sequential);
  EXPECT_EQ(s->info().reason, "--photos");
  frames = readAll(*s);
  ASSERT_EQ(frames.size(), 30u);
  EXPECT_DOUBLE_EQ(frames[5].timestamp, 5 / 10.0);
  // 29 numbered frames are too few to tell from a numbered photo set.
  fs::remove(d / "00030.png");
  o.folder = FolderKind::kAuto;
  s = openFrameSource(d, o);
  EXPECT_FALSE(s->info().sequential);
  EXPECT_NE(s->info().reason.find("29 images"), std::string::npos) << s->info().reason;
}

TEST(FrameSource, WhatMakesAFolderLookLikeVideoFrames) {
  auto d = freshDir("video_like");
  auto png = [&](const std::string& n, int w = 40) {
    writePng(d / n, levelFrame(w, 30, 1));
    return d / n;
  };
  std::string why;
  const auto a = png("f_0001.png"), b = png("f_0002.png"), c = png("f_0003.png");
  EXPECT_TRUE(looksLikeVideoFrames({a, b, c}, &why, 3)) << why;
  EXPECT_FALSE(looksLikeVideoFrames({a, b}, &why, 3));  // too few to tell
  EXPECT_NE(why.find("3 or more"), std::string::npos) << why;
  EXPECT_FALSE(looksLikeVideoFrames({a, b, c}, &why));  // the default asks for 30
  const auto e = png("f_0005.png");
  EXPECT_TRUE(looksLikeVideoFrames({a, c, e}, &why, 3)) << why;  // every 2nd frame
  EXPECT_FALSE(looksLikeVideoFrames({a, b, e}, &why, 3));        // a gap
  EXPECT_NE(why.find("evenly spaced"), std::string::npos) << why;
  const auto g = png("g_0004.png");
  EXPECT_FALSE(looksLikeVideoFrames({a, b, c, g}, &why, 3));
  EXPECT_NE(why.find("more than one pattern"), std::string::npos) << why;
  const auto wide = png("f_0004.png", 48);
  EXPECT_FALSE(looksLikeVideoFrames({a, b, c, wide}, &why, 3));
  EXPECT_NE(why.find("different sizes"), std::string::npos) << why;
  const auto photo = png("IMG_beach.png");
  EXPECT_FALSE(looksLikeVideoFrames({photo, a, b}, &why, 3));
  EXPECT_NE(why.find("no frame number"), std::string::npos) << why;
}

TEST(FrameSource, FolderResizesToWidth) {
  auto d = freshDir("resize");
  GrayImage g(64, 48, 0.f);
  for (int y = 0; y < 48; ++y)
    for (int x = 32; x < 64; ++x) g(x, y) = 1.f;  // right half white
  writePng(d / "a.png", g);
  FrameSourceOptions o;
  o.width = 32;
  auto s = openFrameSource(d, o);
  EXPECT_EQ(s->info().width, 32);
  EXPECT_EQ(s->info().height, 24);
  EXPECT_EQ(s->info().nativeWidth, 64);
  Frame f;
  ASSERT_TRUE(s->next(f));
  ASSERT_EQ(f.gray.width(), 32);
  ASSERT_EQ(f.gray.height(), 24);
  ASSERT_EQ(f.rgb.width(), 32);
  EXPECT_EQ(f.gray(5, 10), 0.f);
  EXPECT_EQ(f.gray(20, 10), 1.f);
  EXPECT_EQ(f.rgb(20, 10).g, 255);
}

// Large JPEG frames resized down are decoded at a reduced DCT scale: the frames equal the
// full decode resized (to JPEG's rounding), the native size is the file's, and a frame of
// another size is still caught.
TEST(FrameSource, LargeJpegFramesDecodeScaled) {
  auto d = freshDir("jpeg_scaled_source");
  const int w = 1280, h = 960;
  std::vector<unsigned char> px(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px[(static_cast<size_t>(y) * w + x) * 3 + c] =
            static_cast<unsigned char>(std::lround(127.5 + 90 * std::sin(0.05 * x + 0.03 * y + c)));
  testing::writeJpeg(d / "f0.jpg", w, h, 3, px);
  testing::writeJpeg(d / "f1.jpg", w, h, 3, px);
  FrameSourceOptions o;
  o.width = 300;
  auto s = openFrameSource(d, o);
  EXPECT_EQ(s->info().nativeWidth, w);
  EXPECT_EQ(s->info().width, 300);
  EXPECT_EQ(s->info().height, 225);
  const ImageData full = readImage(d / "f0.jpg");
  // The reference: the full decode averaged over each output pixel's footprint (4.2667 px).
  auto reference = [&](int x, int y) {
    const double sx = static_cast<double>(w) / 300, sy = static_cast<double>(h) / 225;
    double sum = 0, area = 0;
    for (int j = static_cast<int>(y * sy); j < std::min(h, static_cast<int>((y + 1) * sy) + 1); ++j)
      for (int i = static_cast<int>(x * sx); i < std::min(w, static_cast<int>((x + 1) * sx) + 1);
           ++i) {
        const double ox =
            std::max(0.0, std::min(i + 1.0, (x + 1) * sx) - std::max<double>(i, x * sx));
        const double oy =
            std::max(0.0, std::min(j + 1.0, (y + 1) * sy) - std::max<double>(j, y * sy));
        sum += ox * oy * full.gray(i, j);
        area += ox * oy;
      }
    return sum / area;
  };
  Frame f;
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(s->next(f));
    ASSERT_EQ(f.gray.width(), 300);
    ASSERT_EQ(f.rgb.height(), 225);
    double worst = 0;
    for (int y = 0; y < 225; y += 7)
      for (int x = 0; x < 300; x += 7)
        worst = std::max(worst, std::abs(f.gray(x, y) - reference(x, y)));
    EXPECT_LT(worst * 255, 4.0) << "frame " << k;
  }
  // A frame of another size: named, with both sizes.
  testing::writeJpeg(d / "f2.jpg", w, 720, 3,
                     std::vector<unsigned char>(px.begin(), px.begin() + w * 720 * 3));
  EXPECT_FALSE(s->next(f));
  // From the JPEG headers, when the source opens.
  expectError([&] { openFrameSource(d, o); }, {"f2.jpg", "1280x720", "1280x960"});
}

TEST(FrameSource, FolderProblemsAreClearErrors) {
  auto d = freshDir("problems");
  expectError([&] { openFrameSource(d); }, {"no frames", d.string()});
  writeText(d / "readme.md", "x");
  expectError([&] { openFrameSource(d); }, {"no frames"});
  expectError([&] { openFrameSource(d / "missing"); }, {"does not exist", "missing"});
  // A frame of another size, and a damaged frame, fail when the source opens (every frame's
  // header is read first), not after the work on the frames before them (issue 20).
  writePng(d / "f1.png", levelFrame(20, 10, 1));
  writePng(d / "f2.png", levelFrame(22, 10, 2));
  expectError([&] { openFrameSource(d); },
              {"frame 2 of 2", "f2.png", "22x10", "20x10", "--skip-bad-frames"});
  writeText(d / "f3.png", "garbage");
  writePng(d / "f4.png", levelFrame(20, 10, 4));
  // A frame whose header reads but whose pixels are cut short fails only when decoded.
  writePng(d / "f5.png", levelFrame(20, 10, 5));
  testing::truncateCopy(d / "f5.png", d / "f5cut.png", fs::file_size(d / "f5.png") - 20);
  fs::rename(d / "f5cut.png", d / "f5.png");
  writePng(d / "f6.png", levelFrame(20, 10, 6));
  // --skip-bad-frames: skipped, and every one reported.
  FrameSourceOptions skip;
  skip.skipBadFrames = true;
  auto s = openFrameSource(d, skip);
  EXPECT_EQ(s->info().frameCount, 4);  // f2 and f3 are known bad before any work
  auto frames = readAll(*s);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(levelId(frames[0].gray), 1);
  EXPECT_EQ(levelId(frames[1].gray), 4);
  EXPECT_EQ(levelId(frames[2].gray), 6);
  EXPECT_EQ(frames[2].index, 2);
  const SourceReport r = s->report();
  EXPECT_TRUE(r.reachedEnd);
  ASSERT_EQ(r.skipped.size(), 3u);
  EXPECT_NE(r.skipped[0].find("f2.png"), std::string::npos) << r.skipped[0];
  EXPECT_NE(r.skipped[1].find("f3.png"), std::string::npos) << r.skipped[1];
  EXPECT_NE(r.skipped[2].find("f5.png"), std::string::npos) << r.skipped[2];
  EXPECT_NE(r.describe().find("3 unreadable frames skipped"), std::string::npos) << r.describe();
  fs::remove(d / "f2.png");
  expectError([&] { openFrameSource(d); }, {"frame 2 of 5", "f3.png", "unknown image format"});
  fs::remove(d / "f3.png");
  Frame f;
  s = openFrameSource(d);
  EXPECT_TRUE(s->next(f));
  EXPECT_TRUE(s->next(f));
  expectError([&] { s->next(f); }, {"f5.png", "PNG"});
  // Every frame unreadable, even when skipping: no frames.
  const fs::path bad = d / "bad";
  fs::create_directories(bad);
  writeText(bad / "a.png", "x");
  writeText(bad / "b.jpg", "");
  expectError([&] { openFrameSource(bad, skip); }, {"no frames", "none of the 2"});
  expectError([&] { openFrameSource(bad); }, {"frame 1 of 2", "a.png"});
  // A 0-byte file says so.
  writeText(d / "clip.mp4", "");
  expectError([&] { openFrameSource(d / "clip.mp4"); }, {"clip.mp4", "empty file"});
  // A damaged first frame fails at open.
  writeText(d / "f0.png", "\x89PNG\r\n\x1a\n broken");
  expectError([&] { openFrameSource(d); }, {"f0.png", "PNG"});
  expectError([&] { openFrameSource(d / "f1.png"); }, {"single image"});
}

TEST(FrameSource, OptionsAreChecked) {
  auto d = freshDir("opts");
  writePng(d / "a.png", levelFrame(20, 20, 1));
  for (double fps : {0.0, -1.0, 121.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    FrameSourceOptions o;
    o.fps = fps;
    expectError([&] { openFrameSource(d, o); }, {"fps", "[0.001, 120]"});
  }
  for (int w : {-5, 8, 15, 20000}) {
    FrameSourceOptions o;
    o.width = w;
    expectError([&] { openFrameSource(d, o); }, {"width"});
  }
  FrameSourceOptions ok;
  ok.fps = 120;
  ok.width = 16;
  EXPECT_NO_THROW(openFrameSource(d, ok));
}

// The sampling rule written out by brute force: for each target t0 + k / fps, the first entry
// at or after it; each entry once.
std::vector<int> expectedPicks(const std::vector<double>& t, double fps) {
  std::vector<int> picks;
  for (int k = 0; t[0] + k / fps <= t.back() + 1e-9; ++k) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] >= t[0] + k / fps - 1e-9) {
        if (picks.empty() || picks.back() != static_cast<int>(i))
          picks.push_back(static_cast<int>(i));
        break;
      }
    }
  }
  return picks;
}

TEST(FrameSource, TumListWithCommentsIsParsedAndSampled) {
  auto d = freshDir("tum");
  fs::create_directories(d / "rgb");
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> jitter(-0.004, 0.004);
  std::vector<double> stamps;
  std::string list = "# color images\n# file: 'x.bag'\n# timestamp filename\n\n";
  for (int i = 0; i < 45; ++i) {  // 30 Hz with jitter, 1.5 s
    double t = 1305031229.5 + i / 30.0 + jitter(rng);
    stamps.push_back(t);
    char name[64];
    std::snprintf(name, sizeof(name), "rgb/%.6f.png", t);
    writePng(d / name, levelFrame(16, 16, i % 23));
    char line[128];
    std::snprintf(line, sizeof(line), "%.6f %s%s\n", t, name, i == 7 ? "  extra columns 1 2" : "");
    list += line;
    if (i == 20) list += "   # an indented comment\n";
  }
  writeText(d / "rgb.txt", list);
  // Re-read the rounded stamps as the list holds them.
  for (auto& t : stamps) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6f", t);
    t = std::stod(buf);
  }
  FrameSourceOptions all;
  all.allFrames = true;
  auto s = openFrameSource(d / "rgb.txt", all);
  EXPECT_EQ(s->info().kind, SourceKind::kImageList);
  EXPECT_EQ(s->info().frameCount, 45);
  EXPECT_NEAR(s->info().fps, 30, 0.5);
  auto frames = readAll(*s);
  ASSERT_EQ(frames.size(), 45u);
  for (int i = 0; i < 45; ++i) {
    EXPECT_DOUBLE_EQ(frames[i].timestamp, stamps[i]);
    EXPECT_EQ(levelId(frames[i].gray), i % 23);
    EXPECT_EQ(frames[i].sourceIndex, i);
  }
  for (double fps : {4.0, 7.0, 30.0}) {
    FrameSourceOptions o;
    o.fps = fps;
    s = openFrameSource(d / "rgb.txt", o);
    frames = readAll(*s);
    auto want = expectedPicks(stamps, fps);
    ASSERT_EQ(frames.size(), want.size()) << fps;
    EXPECT_EQ(s->info().frameCount, static_cast<long>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(frames[i].sourceIndex, want[i]) << fps;
      EXPECT_DOUBLE_EQ(frames[i].timestamp, stamps[want[i]]);
      EXPECT_EQ(levelId(frames[i].gray), want[i] % 23);
    }
  }
  EXPECT_EQ(expectedPicks(stamps, 4.0).size(), 6u);  // 0, .25, ..., 1.25 s
}

TEST(FrameSource, ListProblemsAreClearErrors) {
  auto d = freshDir("listbad");
  writePng(d / "a.png", levelFrame(16, 16, 1));
  writeText(d / "empty.txt", "# only comments\n\n");
  expectError([&] { openFrameSource(d / "empty.txt"); }, {"no frames", "empty.txt"});
  writeText(d / "nopath.txt", "1.0 a.png\n2.0\n");
  expectError([&] { openFrameSource(d / "nopath.txt"); }, {"nopath.txt line 2", "timestamp path"});
  writeText(d / "nan.txt", "1.0 a.png\nabc a.png\n");
  expectError([&] { openFrameSource(d / "nan.txt"); }, {"nan.txt line 2", "'abc'"});
  writeText(d / "back.txt", "2.0 a.png\n1.0 a.png\n");
  expectError([&] { openFrameSource(d / "back.txt"); }, {"back.txt line 2", "before"});
  writeText(d / "same.txt", "1.0 a.png\n1.0 a.png\n1.0 a.png\n");
  expectError([&] { openFrameSource(d / "same.txt"); },
              {"same.txt", "all 3 timestamps are equal", "--all-frames"});
  writeText(d / "missing.txt", "# c\n1.0 a.png\n1.5 gone.png\n");
  expectError([&] { openFrameSource(d / "missing.txt"); }, {"missing.txt line 3", "gone.png"});
  // An absolute path is taken as is.
  writeText(d / "abs.txt", "5 " + (d / "a.png").string() + "\n");
  auto s = openFrameSource(d / "abs.txt");
  Frame f;
  ASSERT_TRUE(s->next(f));
  EXPECT_EQ(f.timestamp, 5.0);
}

TEST(FrameSource, MiddleburyFolderThroughFrameSource) {
  auto dir = dataPath("middlebury-flow/frames/Grove2");
  if (!dir) GTEST_SKIP() << "shared data absent";
  FrameSourceOptions o;
  o.width = 320;
  auto s = openFrameSource(*dir, o);
  EXPECT_EQ(s->info().nativeWidth, 640);
  EXPECT_EQ(s->info().nativeHeight, 480);
  EXPECT_EQ(s->info().height, 240);
  auto frames = readAll(*s);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].name, "frame10.png");
  EXPECT_EQ(frames[1].name, "frame11.png");
  // The resized frame's mean equals the native mean (area averaging).
  GrayImage native = readGray(*dir / "frame10.png");
  double a = 0, b = 0;
  for (float v : native.vec()) a += v;
  for (float v : frames[0].gray.vec()) b += v;
  EXPECT_NEAR(a / native.pixels(), b / frames[0].gray.pixels(), 1e-4);
}

// A frame says when its gray is io::lumaRec601 of its RGB8 pixels (8-bit files read at their
// own size: SIFT's CUDA backend then uploads the RGB8 frame in its place); a 16-bit file's gray
// (the luma of the full samples) and a resized frame's (gray and colour resized each on its own)
// are not, and say so.
TEST(FrameSource, GrayIsTheLumaOfRgbWhereTheFrameSaysSo) {
  auto d = freshDir("luma_of_rgb");
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  RgbImage colour(33, 17);
  for (Rgb8& p : colour.vec())
    p = {static_cast<std::uint8_t>(byte(rng)), static_cast<std::uint8_t>(byte(rng)),
         static_cast<std::uint8_t>(byte(rng))};
  GrayImage gray(33, 17);
  for (float& v : gray.vec()) v = static_cast<float>(byte(rng)) / 255;
  Image<std::uint16_t> deep(33, 17);
  for (std::uint16_t& v : deep.vec()) v = static_cast<std::uint16_t>(byte(rng) * 257 + 100);
  writePng(d / "a.png", colour);
  writePng(d / "b.png", gray);
  writePng(d / "c.png", deep);
  auto isLuma = [](const Frame& f) {
    for (int y = 0; y < f.gray.height(); ++y)
      for (int x = 0; x < f.gray.width(); ++x) {
        const Rgb8 p = f.rgb(x, y);
        if (f.gray(x, y) != lumaRec601(p.r, p.g, p.b)) return false;
      }
    return true;
  };
  FrameSourceOptions o;
  o.folder = FolderKind::kPhotos;
  auto frames = readAll(*openFrameSource(d, o));
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_TRUE(frames[0].grayIsLumaOfRgb);
  EXPECT_TRUE(isLuma(frames[0]));
  EXPECT_TRUE(frames[1].grayIsLumaOfRgb);  // a gray file: (v, v, v) has the luma v / 255
  EXPECT_TRUE(isLuma(frames[1]));
  EXPECT_FALSE(frames[2].grayIsLumaOfRgb);
  EXPECT_FALSE(isLuma(frames[2]));
  o.width = 16;
  for (const Frame& f : readAll(*openFrameSource(d, o))) EXPECT_FALSE(f.grayIsLumaOfRgb);
}

TEST(FrameSource, TumRgbListThroughFrameSource) {
  auto dir = dataPath("tum-fr1-rpy");
  if (!dir) GTEST_SKIP() << "shared data absent";
  FrameSourceOptions o;  // 4 fps from 30 Hz
  auto s = openFrameSource(*dir / "rgb_subset150.txt", o);
  auto frames = readAll(*s);
  // 150 frames at about 30 Hz span about 5 s: about 20 samples 0.25 s apart.
  ASSERT_GE(frames.size(), 18u);
  ASSERT_LE(frames.size(), 22u);
  EXPECT_DOUBLE_EQ(frames[0].timestamp, 1305031229.528748);
  EXPECT_EQ(frames[0].name, "1305031229.528748.png");
  for (size_t i = 1; i < frames.size(); ++i) {
    double dt = frames[i].timestamp - frames[i - 1].timestamp;
    EXPECT_GT(dt, 0.2);
    EXPECT_LT(dt, 0.3);
  }
  EXPECT_EQ(frames[0].gray.width(), 640);
  EXPECT_EQ(frames[0].gray.height(), 480);
  EXPECT_TRUE(frames[0].grayIsLumaOfRgb);  // 8-bit PNG: SIFT on CUDA takes the RGB8 frame
  FrameSourceOptions all;
  all.allFrames = true;
  all.width = 320;
  s = openFrameSource(*dir / "rgb_subset150.txt", all);
  EXPECT_EQ(s->info().frameCount, 150);
  EXPECT_EQ(s->info().height, 240);
  // The full list names frames this copy does not hold: the error names the first one.
  expectError([&] { openFrameSource(*dir / "rgb.txt"); }, {"rgb.txt line", "does not exist"});
}

}  // namespace
}  // namespace vidmap::io
