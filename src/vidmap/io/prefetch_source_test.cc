// The prefetching source against the source it wraps: the same frames, pixel for pixel, the
// same errors at the same call, and the next frame read before it is asked for.
#include "vidmap/io/prefetch_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "vidmap/io/image_file.h"
#include "vidmap/io/io_test_util.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;
using testing::freshDir;

// What one call of next() gave: a frame, the end, or an error's message.
struct Call {
  bool more = false;
  std::string error;
  Frame frame;
};

std::vector<Call> readCalls(FrameSource& s, int calls) {
  std::vector<Call> out;
  Frame f;
  for (int i = 0; i < calls; ++i) {
    Call c;
    try {
      c.more = s.next(f);
      if (c.more) c.frame = f;
    } catch (const Error& e) {
      c.error = e.what();
    }
    out.push_back(std::move(c));
  }
  return out;
}

void expectSameCalls(const std::vector<Call>& a, const std::vector<Call>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("call " + std::to_string(i));
    EXPECT_EQ(a[i].more, b[i].more);
    EXPECT_EQ(a[i].error, b[i].error);
    if (!a[i].more || !b[i].more) continue;
    const Frame &x = a[i].frame, &y = b[i].frame;
    EXPECT_EQ(x.index, y.index);
    EXPECT_EQ(x.sourceIndex, y.sourceIndex);
    EXPECT_EQ(x.timestamp, y.timestamp);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.grayIsLumaOfRgb, y.grayIsLumaOfRgb);
    EXPECT_EQ(x.gray.vec(), y.gray.vec());
    ASSERT_EQ(x.rgb.pixels(), y.rgb.pixels());
    for (std::int64_t p = 0; p < x.rgb.pixels(); ++p) {
      const Rgb8 c = x.rgb.data()[p], d = y.rgb.data()[p];
      ASSERT_TRUE(c.r == d.r && c.g == d.g && c.b == d.b) << "pixel " << p;
    }
  }
}

// Twelve frames of random pixels (sizes decide nothing here: all 24 x 16), frame 5 cut short
// so that its header reads and its pixels do not (it fails when decoded, not at open).
fs::path makeFolder() {
  const fs::path d = freshDir("frames");
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 12; ++i) {
    RgbImage rgb(24, 16);
    for (std::int64_t p = 0; p < rgb.pixels(); ++p)
      rgb.data()[p] =
          Rgb8{static_cast<std::uint8_t>(byte(rng)), static_cast<std::uint8_t>(byte(rng)),
               static_cast<std::uint8_t>(byte(rng))};
    writePng(d / ("f" + std::to_string(i) + ".png"), rgb);
  }
  const fs::path f5 = d / "f5.png";
  testing::truncateCopy(f5, d / "cut.bin", fs::file_size(f5) - 40);
  fs::rename(d / "cut.bin", f5);
  return d;
}

TEST(PrefetchSource, SameFramesAndErrorsAsTheSourceItWraps) {
  const fs::path d = makeFolder();
  FrameSourceOptions o;
  o.folder = FolderKind::kPhotos;
  // 15 calls: frames 0-4, frame 5's error, whatever the source does after it, then its end.
  const std::vector<Call> plain = readCalls(*openFrameSource(d, o), 15);
  ASSERT_NE(plain[5].error.find("f5.png"), std::string::npos) << plain[5].error;
  EXPECT_FALSE(plain.back().more);
  const std::vector<Call> ahead = readCalls(*prefetchFrames(openFrameSource(d, o)), 15);
  expectSameCalls(plain, ahead);
  // Skipping the bad frame: the same frames and the same report at the end.
  o.skipBadFrames = true;
  auto s0 = openFrameSource(d, o);
  auto s1 = prefetchFrames(openFrameSource(d, o));
  expectSameCalls(readCalls(*s0, 13), readCalls(*s1, 13));
  EXPECT_EQ(s0->report().skipped, s1->report().skipped);
  EXPECT_EQ(s1->report().skipped.size(), 1u);
  EXPECT_EQ(s0->info().frameCount, s1->info().frameCount);
}

// Counts the calls of next() of an endless source of numbered frames.
class CountingSource final : public FrameSource {
 public:
  const FrameSourceInfo& info() const override { return info_; }
  bool next(Frame& f) override {
    f.index = calls++;
    return true;
  }
  std::atomic<int> calls{0};

 private:
  FrameSourceInfo info_;
};

bool waitFor(const std::atomic<int>& v, int value) {
  for (int i = 0; i < 2000 && v.load() < value; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return v.load() == value;
}

TEST(PrefetchSource, ReadsOneFrameAheadAndStopsWhenDestroyed) {
  auto inner = std::make_unique<CountingSource>();
  CountingSource* counter = inner.get();
  auto s = prefetchFrames(std::move(inner));
  EXPECT_TRUE(waitFor(counter->calls, 1));  // the first frame, before any call
  Frame f;
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(s->next(f));
    EXPECT_EQ(f.index, k);
    EXPECT_TRUE(waitFor(counter->calls, k + 2)) << "frame " << k + 1 << " was not read ahead";
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(counter->calls.load(), 4) << "read more than one frame ahead";
  s.reset();  // joins the decoding thread, which holds a frame decoded ahead
}

TEST(PrefetchSource, NoSourceIsAClearError) {
  testing::expectError([] { prefetchFrames(nullptr); }, {"prefetchFrames", "no source"});
}

}  // namespace
}  // namespace vidmap::io
