// Damaged inputs: valid files with random bytes flipped or cut at random points must either
// read or fail with a vidmap::Error: never crash, hang or throw anything else. (Run under
// AddressSanitizer this also checks the C libraries' error paths for leaks and overruns.)
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "vidmap/io/frame_source.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/io_test_util.h"
#include "vidmap/io/video_writer.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;

// Reads `path` as an image or, for video, every frame; returns "ok", "error" or "other".
std::string tryRead(const fs::path& path, bool video) {
  try {
    if (video) {
      FrameSourceOptions o;
      o.allFrames = true;
      auto s = openFrameSource(path, o);
      Frame f;
      int n = 0;
      while (s->next(f)) EXPECT_LT(++n, 1000);
    } else {
      readImage(path);
    }
    return "ok";
  } catch (const vidmap::Error&) {
    return "error";
  } catch (...) {
    return "other";
  }
}

void damage(const fs::path& good, const fs::path& dir, const std::string& ext, bool video,
            int trials) {
  auto bytes = testing::readBytes(good);
  std::mt19937 rng(7);
  int errors = 0;
  for (int t = 0; t < trials; ++t) {
    auto b = bytes;
    if (t % 3 == 0) {
      b.resize(std::uniform_int_distribution<size_t>(0, b.size() - 1)(rng));
    } else {
      int flips = 1 + t % 8;
      for (int i = 0; i < flips; ++i) {
        b[std::uniform_int_distribution<size_t>(0, b.size() - 1)(rng)] ^=
            static_cast<unsigned char>(1 + rng() % 255);
      }
    }
    std::string name = std::to_string(t);  // (g++ 12 warns falsely on "d" + std::string)
    name += ext;
    fs::path p = dir / name;
    testing::writeBytes(p, b);
    std::string r = tryRead(p, video);
    EXPECT_NE(r, "other") << p;
    errors += r == "error";
  }
  EXPECT_GT(errors, 0) << ext;  // the damage is noticed at least sometimes
}

TEST(DamagedInput, ImagesFailCleanly) {
  auto d = testing::freshDir("img");
  RgbImage c(40, 30);
  for (long i = 0; i < c.pixels(); ++i) {
    c.data()[i] = {static_cast<uint8_t>(i * 7), static_cast<uint8_t>(i),
                   static_cast<uint8_t>(i / 3)};
  }
  writePng(d / "ok.png", c);
  damage(d / "ok.png", d, ".png", false, 60);
  std::string hdr = "P6 40 30 255\n";
  std::vector<unsigned char> ppm(hdr.begin(), hdr.end());
  for (long i = 0; i < c.pixels(); ++i)
    ppm.insert(ppm.end(), {c.data()[i].r, c.data()[i].g, c.data()[i].b});
  testing::writeBytes(d / "ok.ppm", ppm);
  damage(d / "ok.ppm", d, ".ppm", false, 30);
  std::vector<unsigned char> px(static_cast<size_t>(c.pixels()) * 3);
  std::memcpy(px.data(), c.data(), px.size());
  testing::writeJpeg(d / "ok.jpg", 40, 30, 3, px);
  damage(d / "ok.jpg", d, ".jpg", false, 60);
}

TEST(DamagedInput, VideosFailCleanly) {
  if (!videoSupported()) GTEST_SKIP() << "built without FFmpeg";
  auto d = testing::freshDir("vid");
  std::vector<std::pair<std::string, VideoCodec>> cases = {{".mkv", VideoCodec::kFfv1},
                                                           {".mp4", VideoCodec::kMpeg4}};
  if (videoCodecAvailable(VideoCodec::kH264)) cases.push_back({".mov", VideoCodec::kH264});
  for (auto& [ext, codec] : cases) {
    VideoWriterOptions o;
    o.codec = codec;
    o.fps = 10;
    {
      VideoWriter w(d / ("ok" + ext), 48, 32, o);
      for (int k = 0; k < 12; ++k) {
        RgbImage f(48, 32);
        for (long i = 0; i < f.pixels(); ++i) {
          f.data()[i] = {static_cast<uint8_t>(i + 9 * k), static_cast<uint8_t>(3 * i), 90};
        }
        w.write(f);
      }
      w.finish();
    }
    damage(d / ("ok" + ext), d, ext, true, 30);
  }
}

}  // namespace
}  // namespace vidmap::io
