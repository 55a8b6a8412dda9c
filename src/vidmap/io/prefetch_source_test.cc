#include "vidmap/io/prefetch_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "vidmap/io/image_file.h"
#include "vidmap/io/io_test_util.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;
using testing::expectError;
using testing::freshDir;
using testing::levelFrame;
using testing::levelId;

// Frames 0..n-1 (level id = index), each decode taking `decodeMs`; frame `throwAt` throws.
// Counts the frames it has decoded, so a test can see how far ahead the thread went.
class CountingSource : public FrameSource {
 public:
  CountingSource(int n, int throwAt = -1, int decodeMs = 0)
      : n_(n), throwAt_(throwAt), decodeMs_(decodeMs) {
    info_.width = info_.nativeWidth = 16;
    info_.height = info_.nativeHeight = 8;
    info_.frameCount = n;
  }
  const FrameSourceInfo& info() const override { return info_; }
  bool next(Frame& f) override {
    if (decodeMs_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(decodeMs_));
    if (i_ == n_) {
      end_ = true;
      return false;
    }
    if (i_ == throwAt_) throw Error("frame " + std::to_string(i_) + " is damaged");
    f.index = i_;
    f.gray = levelFrame(16, 8, i_);
    f.name = "f" + std::to_string(i_);
    ++i_;
    decoded.store(i_);
    return true;
  }
  SourceReport report() const override {
    SourceReport r;
    r.reachedEnd = end_;
    r.framesDecoded = i_;
    return r;
  }
  std::atomic<int> decoded{0};

 private:
  FrameSourceInfo info_;
  int n_, throwAt_, decodeMs_, i_ = 0;
  bool end_ = false;
};

TEST(PrefetchSource, YieldsTheSourcesFramesInOrderAndItsReport) {
  auto inner = std::make_unique<CountingSource>(25);
  PrefetchSource s(std::move(inner), 3);
  EXPECT_EQ(s.info().frameCount, 25);
  EXPECT_EQ(s.info().width, 16);
  Frame f;
  for (int i = 0; i < 25; ++i) {
    ASSERT_TRUE(s.next(f)) << i;
    EXPECT_EQ(f.index, i);
    EXPECT_EQ(f.name, "f" + std::to_string(i));
    EXPECT_EQ(levelId(f.gray), i);
    EXPECT_EQ(s.report().framesDecoded, i + 1);  // the report as of the frame handed out
  }
  EXPECT_FALSE(s.next(f));
  EXPECT_FALSE(s.next(f));  // and stays at its end
  EXPECT_TRUE(s.report().reachedEnd);
  EXPECT_EQ(s.report().framesDecoded, 25);
}

TEST(PrefetchSource, DecodesAtMostDepthFramesAhead) {
  auto inner = std::make_unique<CountingSource>(40);
  const CountingSource* counter = inner.get();
  PrefetchSource s(std::move(inner), 4);
  // The thread fills its 4 slots and waits; the frame it holds back is not decoded.
  for (int tries = 0; tries < 2000 && counter->decoded.load() < 4; ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(counter->decoded.load(), 4);
  Frame f;
  ASSERT_TRUE(s.next(f));
  for (int tries = 0; tries < 2000 && counter->decoded.load() < 5; ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(counter->decoded.load(), 5);
}

TEST(PrefetchSource, ADamagedFrameFailsAfterTheFramesBeforeIt) {
  PrefetchSource s(std::make_unique<CountingSource>(10, 6), 8);
  Frame f;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(s.next(f)) << i;
    EXPECT_EQ(f.index, i);
  }
  expectError([&] { s.next(f); }, {"frame 6 is damaged"});
  EXPECT_FALSE(s.next(f));  // thrown once; the source is at its end
}

TEST(PrefetchSource, EndsWhileTheThreadDecodesOrWaits) {
  // Destroyed with a full queue (the thread waiting) and in the middle of a slow decode: the
  // destructor returns (a hang fails the test by its timeout) and nothing is left running.
  { PrefetchSource s(std::make_unique<CountingSource>(100), 2); }
  {
    PrefetchSource s(std::make_unique<CountingSource>(100, -1, 20), 2);
    Frame f;
    ASSERT_TRUE(s.next(f));
  }
  expectError([] { PrefetchSource s(nullptr, 2); }, {"no frame source"});
  expectError([] { PrefetchSource s(std::make_unique<CountingSource>(3), 0); }, {"depth"});
}

TEST(PrefetchSource, AFolderGivesTheSameFramesAsWithoutIt) {
  const fs::path d = freshDir("folder");
  for (int i = 0; i < 12; ++i)
    writePng(d / ("frame" + std::to_string(i) + ".png"), levelFrame(40, 30, i));
  auto direct = openFrameSource(d);
  PrefetchSource ahead(openFrameSource(d), 3);
  Frame a, b;
  int n = 0;
  for (;;) {
    const bool more = direct->next(a);
    ASSERT_EQ(ahead.next(b), more) << n;
    if (!more) break;
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.timestamp, b.timestamp);
    EXPECT_EQ(a.name, b.name);
    ASSERT_EQ(a.gray.width(), b.gray.width());
    ASSERT_EQ(a.gray.height(), b.gray.height());
    for (int y = 0; y < a.gray.height(); ++y)
      for (int x = 0; x < a.gray.width(); ++x) ASSERT_EQ(a.gray(x, y), b.gray(x, y));
    ++n;
  }
  EXPECT_EQ(n, 12);
  EXPECT_EQ(ahead.report().reachedEnd, direct->report().reachedEnd);
}

}  // namespace
}  // namespace vidmap::io
