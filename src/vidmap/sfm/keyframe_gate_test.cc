// The keyframe gate against known motions: a camera panning at a known speed fires the gate at
// the stated displacement (scaled by the image width) and not before; the gap in time fires it
// without motion; too few displacements leave the motion unknown (a keyframe); bad options
// name their field.
#include "vidmap/sfm/keyframe_gate.h"

#include <gtest/gtest.h>

#include "vidmap/core/error.h"

namespace vidmap::sfm {
namespace {

// n features that moved by `shift` px, with a few wild ones (the median ignores them).
std::vector<double> moved(double shift, int n = 100) {
  std::vector<double> d;
  for (int i = 0; i < n; ++i) d.push_back(i % 10 == 0 ? 500.0 : shift + 0.01 * (i % 7));
  return d;
}

TEST(KeyframeGate, APanFiresAtTheStatedDisplacementNotBefore) {
  const KeyframeGate gate({});  // 8 px at 640, 1 s
  // A pan of 1.5 px per frame at 30 fps, 640 px wide: frame k moved 1.5 k px since the keyframe.
  int fired = -1;
  for (int k = 1; k <= 20 && fired < 0; ++k)
    if (gate.decide(moved(1.5 * k), k / 30.0, 640).keyframe) fired = k;
  EXPECT_EQ(fired, 6);  // 9 px >= 8 px; 7.5 px (k = 5) is below
  // At 1280 px the threshold doubles: 16 px, frame 11 (16.5 px).
  fired = -1;
  for (int k = 1; k <= 20 && fired < 0; ++k)
    if (gate.decide(moved(1.5 * k), k / 30.0, 1280).keyframe) fired = k;
  EXPECT_EQ(fired, 11);
  const KeyframeDecision d = gate.decide(moved(7.9), 0.1, 640);
  EXPECT_TRUE(d.motionKnown);
  EXPECT_FALSE(d.keyframe);
  EXPECT_NEAR(d.medianMotionPx, 7.9, 0.07);
}

TEST(KeyframeGate, TracksUseTheirOwnThreshold) {
  KeyframeGateOptions o;
  EXPECT_EQ(o.trackMinMotionPx, o.minMotionPx);  // by default the same
  o.trackMinMotionPx = 24;
  const KeyframeGate gate(o);
  // The same pan of 1.5 px per frame: descriptor matches fire at 9 px (frame 6), tracks at
  // 24 px (frame 16; 22.5 px at frame 15 is below).
  int byMatches = -1, byTracks = -1;
  for (int k = 1; k <= 29; ++k) {
    if (byMatches < 0 && gate.decide(moved(1.5 * k), k / 30.0, 640).keyframe) byMatches = k;
    if (byTracks < 0 && gate.decide(moved(1.5 * k), k / 30.0, 640, GateMotion::kTracks).keyframe)
      byTracks = k;
  }
  EXPECT_EQ(byMatches, 6);
  EXPECT_EQ(byTracks, 16);
  // Scaled by width as the other: 48 px at 1280 px.
  EXPECT_FALSE(gate.decide(moved(47.5), 0.1, 1280, GateMotion::kTracks).keyframe);
  EXPECT_TRUE(gate.decide(moved(48.5), 0.1, 1280, GateMotion::kTracks).keyframe);
  // The gap still fires a keyframe without the motion.
  EXPECT_TRUE(gate.decide(moved(1), 1.0, 640, GateMotion::kTracks).keyframe);
  o.trackMinMotionPx = -0.5;
  try {
    KeyframeGate g(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gate.trackMinMotionPx"), std::string::npos);
  }
}

TEST(KeyframeGate, AStillCameraFiresOnlyAfterTheGap) {
  KeyframeGateOptions o;
  o.maxGapSeconds = 0.5;
  const KeyframeGate gate(o);
  EXPECT_FALSE(gate.decide(moved(0.2), 0.45, 640).keyframe);
  EXPECT_TRUE(gate.decide(moved(0.2), 0.5, 640).keyframe);
}

TEST(KeyframeGate, TooFewDisplacementsLeaveTheMotionUnknown) {
  const KeyframeGate gate({});  // 20 needed
  const KeyframeDecision d = gate.decide(moved(0.1, 19), 0.01, 640);
  EXPECT_FALSE(d.motionKnown);
  EXPECT_TRUE(d.keyframe);
  EXPECT_FALSE(gate.decide(moved(0.1, 20), 0.01, 640).keyframe);
  EXPECT_TRUE(gate.decide({}, 0.01, 640).keyframe);
}

TEST(KeyframeGate, BadOptionsNameTheirField) {
  KeyframeGateOptions o;
  o.minMatches = 0;
  try {
    KeyframeGate g(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gate.minMatches"), std::string::npos);
  }
  o = {};
  o.minMotionPx = -1;
  EXPECT_THROW(KeyframeGate{o}, Error);
}

}  // namespace
}  // namespace vidmap::sfm
