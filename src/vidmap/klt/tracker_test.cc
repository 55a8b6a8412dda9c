// klt::Tracker: the host table (ids, seeds, ages), the step report, chunk invariance through
// the tracker, RGB frames, and bad input.
#include "vidmap/klt/tracker.h"

#include "vidmap/klt/cpu_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "vidmap/core/cpu_features.h"
#include "vidmap/core/error.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace vidmap::klt {
namespace {

const GrayImage& scene() {
  static const GrayImage img = [] {
    synth::TexturedSceneOptions o;
    o.width = 320;
    o.height = 200;
    o.seed = 11;
    return synth::makeTexturedScene(o);
  }();
  return img;
}

Options smallOptions() {
  Options o = optionsFor(640);
  o.levels = 4;
  o.capacity = 96;
  return o;
}

// Frame k of a sequence translating by (1.5, -0.75) px per frame.
GrayImage frame(int k) { return synth::warpImage(scene(), synth::translation(1.5 * k, -0.75 * k)); }

TEST(Tracker, FirstPushSelectsAndLaterPushesTrack) {
  Tracker t(320, 200, smallOptions());
  const StepReport r0 = t.push(frame(0));
  EXPECT_TRUE(r0.selection);
  EXPECT_EQ(r0.tracksIn, 0);
  EXPECT_EQ(r0.appended, 96);
  EXPECT_GE(r0.selected, 96);
  EXPECT_EQ(r0.alive, 96);
  const TrackTable& tab = t.tracks();
  ASSERT_EQ(tab.size(), 96);
  for (int i = 0; i < tab.size(); ++i) {
    EXPECT_EQ(tab.id[i], i);
    EXPECT_EQ(tab.seedFrame[i], 0);
    EXPECT_EQ(tab.seedKeypoint[i], -1);
    EXPECT_EQ(tab.age[i], 0);
    EXPECT_EQ(tab.x[i], tab.seedX[i]);
  }
  const StepReport r1 = t.push(frame(1));
  EXPECT_FALSE(r1.selection);
  EXPECT_EQ(r1.tracksIn, 96);
  EXPECT_EQ(r1.alive + r1.ended(), 96);
  EXPECT_GE(r1.alive, 90);
  EXPECT_EQ(static_cast<int>(t.ended().size()), r1.ended());
  EXPECT_EQ(static_cast<int>(t.lastChecked().size()), 96);
  for (int i = 0; i < t.tracks().size(); ++i) {
    EXPECT_EQ(t.tracks().age[i], 1);
    EXPECT_NEAR(t.tracks().x[i], t.tracks().seedX[i] + 1.5, 0.1);  // resampling bias at corners
    EXPECT_NEAR(t.tracks().y[i], t.tracks().seedY[i] - 0.75, 0.1);
  }
  EXPECT_GE(r1.msTotal, r1.msTrack);
  EXPECT_EQ(r1.chunks, 1);
}

TEST(Tracker, KeyframeRefillsWithNewIds) {
  Options o = smallOptions();
  o.capacity = 200;
  Tracker t(320, 200, o);
  t.push(frame(0));
  const int first = t.tracks().size();
  // Half of the frame changes texture: tracks there end, the keyframe refills with new ids.
  GrayImage f1 = frame(1);
  const GrayImage other = synth::makeTexturedScene({320, 200, 0, 5, 0.15, 99});
  for (int y = 0; y < 200; ++y)
    for (int x = 160; x < 320; ++x) f1(x, y) = other(x, y);
  const StepReport r = t.push(f1, true);
  EXPECT_GT(r.ended(), 0);
  EXPECT_GT(r.appended, 0);
  const TrackTable& tab = t.tracks();
  std::int64_t maxOld = -1;
  for (int i = 0; i < tab.size(); ++i) {
    if (tab.seedFrame[i] == 0) {
      EXPECT_LT(tab.id[i], first);
      maxOld = std::max(maxOld, tab.id[i]);
    } else {
      EXPECT_EQ(tab.seedFrame[i], 1);
      EXPECT_GE(tab.id[i], first);
      EXPECT_EQ(tab.age[i], 0);
    }
  }
  EXPECT_EQ(r.alive, tab.size());
}

TEST(Tracker, TracksEndByAge) {
  Options o = smallOptions();
  o.maxAgeFrames = 2;
  Tracker t(320, 200, o);
  t.push(frame(0));
  const int n = t.tracks().size();
  const StepReport r1 = t.push(frame(1));
  EXPECT_EQ(r1.ends[7], 0);
  const StepReport r2 = t.push(frame(2));
  EXPECT_EQ(r2.ends[7], 0);
  const StepReport r3 = t.push(frame(3));
  EXPECT_EQ(r3.ends[7], r3.tracksIn);  // age 3 > 2: every survivor ends by age
  EXPECT_EQ(t.tracks().size(), 0);
  EXPECT_LE(r3.tracksIn, n);
  for (const auto& e : t.ended()) {
    EXPECT_EQ(e.reason, 7);
    EXPECT_EQ(e.age, 3);
  }
}

TEST(Tracker, ChunkInvarianceBitForBit) {
  Options a = smallOptions();
  Options b = a;
  b.chunkTracks = 3;
  Tracker ta(320, 200, a), tb(320, 200, b);
  for (int k = 0; k < 4; ++k) {
    const StepReport ra = ta.push(frame(k), k == 2);
    const StepReport rb = tb.push(frame(k), k == 2);
    ASSERT_EQ(ra.alive, rb.alive);
    ASSERT_EQ(ra.ends, rb.ends);
    if (k > 0) {
      EXPECT_EQ(rb.chunks, (ra.tracksIn + 2) / 3);
    }
    const auto& x = ta.lastChecked();
    const auto& y = tb.lastChecked();
    ASSERT_EQ(x.size(), y.size());
    if (!x.empty()) {  // (memcmp of two empty vectors' null data is undefined)
      EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(TrackRecord)), 0);
    }
    ASSERT_EQ(ta.tracks().x, tb.tracks().x);
    ASSERT_EQ(ta.tracks().y, tb.tracks().y);
    ASSERT_EQ(ta.tracks().id, tb.tracks().id);
  }
}

// The CPU backend's AVX2 tracking (Options::cpuAvx2) against the baseline code: the same
// records bit for bit over frames whose motion takes tracks through the window's border path
// (windows partly outside the frame) and out of it.
TEST(Tracker, Avx2TrackingEqualsTheBaselineBitForBit) {
  if (!cpuHasAvx2()) GTEST_SKIP() << "the CPU has no AVX2";
  Options a = smallOptions();
  a.capacity = 400;
  Options b = a;
  b.cpuAvx2 = false;
  Tracker ta(320, 200, a), tb(320, 200, b);
  int checked = 0;
  for (int k = 0; k < 8; ++k) {
    const GrayImage f = synth::warpImage(scene(), synth::translation(4.0 * k, -2.5 * k));
    const StepReport ra = ta.push(f, k % 3 == 2);
    const StepReport rb = tb.push(f, k % 3 == 2);
    ASSERT_EQ(ra.alive, rb.alive);
    ASSERT_EQ(ra.ends, rb.ends);
    const auto& x = ta.lastChecked();
    const auto& y = tb.lastChecked();
    ASSERT_EQ(x.size(), y.size());
    if (!x.empty()) {
      EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(TrackRecord)), 0) << k;
      checked += static_cast<int>(x.size());
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(Tracker, RgbFrameEqualsItsGrayConversion) {
  const GrayImage g = frame(0);
  RgbImage rgb(320, 200);
  GrayImage conv(320, 200);
  for (int y = 0; y < 200; ++y)
    for (int x = 0; x < 320; ++x) {
      const auto v = static_cast<std::uint8_t>(std::lround(g(x, y) * 255));
      const auto r = static_cast<std::uint8_t>(std::min(255, v + 10));
      rgb(x, y) = {r, v, static_cast<std::uint8_t>(v / 2)};
      conv(x, y) = grayFromRgb(r, v, static_cast<std::uint8_t>(v / 2));
    }
  Tracker a(320, 200, smallOptions()), b(320, 200, smallOptions());
  a.push(std::as_const(rgb).view());
  b.push(conv);
  EXPECT_EQ(a.tracks().x, b.tracks().x);
  EXPECT_EQ(a.tracks().y, b.tracks().y);
  EXPECT_EQ(a.tracks().measure, b.tracks().measure);
}

TEST(Tracker, BadInputGetsOneClearError) {
  Options bad = smallOptions();
  bad.capacity = 0;
  EXPECT_THROW(Tracker(320, 200, bad), Error);
  EXPECT_THROW(Tracker(10, 200, smallOptions()), Error);  // narrower than the window
  Tracker t(320, 200, smallOptions());
  GrayImage wrong(321, 200, 0.5f);
  try {
    t.push(wrong);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("321 x 200"), std::string::npos) << e.what();
  }
  // A backend made for another size is refused.
  EXPECT_THROW(Tracker(320, 200, smallOptions(), makeCpuBackend(640, 360, smallOptions())), Error);
  CpuBackend b(320, 200, smallOptions());
  EXPECT_THROW(b.track(Direction::kForward, 0, 2, 0, 1), Error);
  EXPECT_THROW(b.track(Direction::kForward, 0, 1, 0, 97), Error);
  EXPECT_THROW(b.readLevel(0, 4, nullptr, nullptr), Error);
}

TEST(Tracker, NonFiniteFrameIsRefused) {
  Tracker t(320, 200, smallOptions());
  t.push(frame(0));
  GrayImage bad = frame(1);
  bad(17, 5) = NAN;
  try {
    t.push(bad);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(17, 5)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(t.frames(), 1);  // nothing changed
  EXPECT_EQ(t.push(frame(1)).tracksIn, 96);
}

// The backend itself survives a NaN target (the tracks end out of frame, nothing crashes).
TEST(Tracker, BackendSurvivesNonFiniteTarget) {
  CpuBackend b(320, 200, smallOptions());
  const GrayImage nan(320, 200, NAN);
  const GrayImage f0 = frame(0);
  b.uploadGray(0, f0.view());
  b.uploadGray(1, nan.view());
  b.buildPyramid(0);
  b.buildPyramid(1);
  const TrackRecord s = seedRecord(100, 100, 0);
  b.uploadSeeds(&s, 1);
  b.track(Direction::kForward, 0, 1, 0, 1);
  b.track(Direction::kBackward, 0, 1, 0, 1);
  b.check(0, 1);
  TrackRecord c;
  b.readRecords(RecordBuffer::kChecked, 0, 1, &c);
  EXPECT_FALSE(statusAlive(c.status));
  EXPECT_EQ(statusReason(c.status), 1);
}

TEST(Tracker, ResidentBytesFollowTheLayout) {
  const Options o = smallOptions();
  Tracker t(320, 200, o);
  const Layout l = makeLayout(320, 200, o.levels);
  const std::size_t pyramids = 2 * 3 * l.total * sizeof(float);
  const std::size_t records = 4 * o.capacity * sizeof(TrackRecord);
  EXPECT_GE(t.residentBytes(), pyramids + records + 320 * 200 * sizeof(float));
  EXPECT_LT(t.residentBytes(), pyramids + records + 2 * 320 * 200 * sizeof(float));
}

}  // namespace
}  // namespace vidmap::klt
