// The keyframe gate against known motions: a camera panning at a known speed fires the gate at
// the stated displacement (scaled by the image width) and not before; the gap in time fires it
// without motion; too few displacements leave the motion unknown (a keyframe); bad options
// name their field. The tracks' parallax gate on points projected from known 3D scenes: a
// pure rotation makes no keyframe until the view has moved on (tracks lost), a translation
// makes one within the frames that its known parallax needs, forward motion too.
#include "vidmap/sfm/keyframe_gate.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <cstdint>

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

// A pinhole camera (f 500 px, 640 x 480) looking down +z, and points on fronto-parallel layers
// at known depths, spread over the view of the first frame. The tracks of a frame are the
// projections of the points that both the first frame and this one see (a margin of 8 px).
struct Scene3 {
  std::vector<Eigen::Vector3d> points;
  static constexpr double f = 500, cx = 320, cy = 240;

  explicit Scene3(const std::vector<double>& depths, int perLayer = 150) {
    std::uint64_t s = 12345;  // a small LCG: the same points with every standard library
    auto uniform = [&s] {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(s >> 11) / 9007199254740992.0;
    };
    for (double z : depths)
      for (int i = 0; i < perLayer; ++i) {
        const double u = 20 + 600 * uniform(), v = 20 + 440 * uniform();
        points.emplace_back((u - cx) / f * z, (v - cy) / f * z, z);
      }
  }
  // Projection into a camera with world-to-camera rotation R and centre c.
  static bool project(const Eigen::Matrix3d& R, const Eigen::Vector3d& c, const Eigen::Vector3d& X,
                      Vec2* px) {
    const Eigen::Vector3d p = R * (X - c);
    if (p.z() <= 0.1) return false;
    *px = Vec2(f * p.x() / p.z() + cx, f * p.y() / p.z() + cy);
    return px->x() >= 8 && px->y() >= 8 && px->x() <= 631 && px->y() <= 471;
  }
  GateTracks tracks(const Eigen::Matrix3d& R, const Eigen::Vector3d& c) const {
    GateTracks t;
    for (const Eigen::Vector3d& X : points) {
      Vec2 a, b;
      if (!project(Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero(), X, &a)) continue;
      ++t.keyframeTracks;
      if (!project(R, c, X, &b)) continue;
      t.atKeyframe.push_back(a);
      t.now.push_back(b);
    }
    return t;
  }
};

TEST(KeyframeGate, PureRotationMakesNoKeyframeUntilTheViewMovesOn) {
  // Three layers at 1.5, 4 and 12 m; the eye turns 0.5 degrees a frame about a tilted axis and
  // does not move. The displacement gate fires at 8 px (frame 2); the parallax gate never
  // fires by parallax, only when fewer than 80% of the first view's points are still seen.
  const Scene3 scene({1.5, 4, 12});
  KeyframeGateOptions o;
  o.maxGapSeconds = 1e5;
  o.maxTurnPx = 0;  // the tracked fraction alone (the turn bound: the next test)
  const KeyframeGate gate(o);
  KeyframeGateOptions od = o;
  od.trackGate = TrackGate::kDisplacement;
  const KeyframeGate byDisplacement(od);
  const Eigen::Vector3d axis = Eigen::Vector3d(0.3, 1, 0.2).normalized();
  int firstDisplacement = -1, firstParallax = -1, lost = -1;
  for (int k = 1; k <= 80; ++k) {
    const Eigen::Matrix3d R(Eigen::AngleAxisd(k * 0.5 * M_PI / 180, axis));
    const GateTracks t = scene.tracks(R, Eigen::Vector3d::Zero());
    if (firstDisplacement < 0 && byDisplacement.decideTracks(t, k / 30.0, 640, 480).keyframe)
      firstDisplacement = k;
    const KeyframeDecision d = gate.decideTracks(t, k / 30.0, 640, 480);
    ASSERT_TRUE(d.motionKnown);
    EXPECT_LT(d.parallaxPx, 0.3) << "frame " << k;
    if (firstParallax < 0 && d.reason == GateReason::kParallax) firstParallax = k;
    if (lost < 0 && d.keyframe) {
      lost = k;
      EXPECT_EQ(d.reason, GateReason::kTracksLost);
      EXPECT_LT(d.trackedFraction, 0.8);
    }
    if (lost < 0) {
      EXPECT_GE(d.trackedFraction, 0.8) << "frame " << k;
    }
  }
  EXPECT_LE(firstDisplacement, 3);  // about 4.4 px a frame at the centre
  EXPECT_EQ(firstParallax, -1);
  EXPECT_GT(lost, 8);  // 4 degrees and more: the view has moved on
}

TEST(KeyframeGate, TranslationMakesAKeyframeWithinTheFramesItsParallaxNeeds) {
  // Layers at 2, 4 and 8 m, a third of the points each. The eye holds still for 10 frames, then
  // moves sideways 1 cm a frame (and turns 0.2 degrees a frame, which the fit takes out). A
  // lateral move of s metres shifts a layer at depth Z by f s / Z px (250 s, 125 s and
  // 62.5 s px); a turn shifts all alike, so the best one leaves the median point at least
  // half the gap between two layers, 31.25 s px. The gate at 3 px must fire once
  // s >= 3 / 31.25 = 9.6 cm (frame 20), and not while the eye is still.
  const Scene3 scene({2, 4, 8});
  KeyframeGateOptions o;
  o.maxGapSeconds = 1e5;
  ASSERT_EQ(o.minParallaxPx, 3);
  const KeyframeGate gate(o);
  int fired = -1;
  for (int k = 1; k <= 30 && fired < 0; ++k) {
    const double s = std::max(0, k - 10) * 0.01;
    const Eigen::Matrix3d R(Eigen::AngleAxisd(k * 0.2 * M_PI / 180, Eigen::Vector3d::UnitY()));
    const KeyframeDecision d =
        gate.decideTracks(scene.tracks(R, Eigen::Vector3d(s, 0, 0)), k / 30.0, 640, 480);
    if (d.keyframe) {
      fired = k;
      EXPECT_EQ(d.reason, GateReason::kParallax);
    }
  }
  EXPECT_GT(fired, 10);
  EXPECT_LE(fired, 20);
  // At 1280 px the threshold doubles with the image (the same scene, pixels doubled): later.
  int fired1280 = -1;
  for (int k = 1; k <= 30 && fired1280 < 0; ++k) {
    const double s = std::max(0, k - 10) * 0.01;
    const Eigen::Matrix3d R(Eigen::AngleAxisd(k * 0.2 * M_PI / 180, Eigen::Vector3d::UnitY()));
    GateTracks t = scene.tracks(R, Eigen::Vector3d(s, 0, 0));
    for (Vec2& p : t.atKeyframe) p *= 2;
    for (Vec2& p : t.now) p *= 2;
    if (gate.decideTracks(t, k / 30.0, 1280, 960).keyframe) fired1280 = k;
  }
  EXPECT_EQ(fired1280, fired);
}

TEST(KeyframeGate, ForwardMotionMakesKeyframesByParallax) {
  // Layers at 2, 4 and 8 m; the eye moves 2 cm a frame along its axis. The displacement gate at
  // 24 px keeps none within the second that the parallax gate needs for its first keyframe.
  const Scene3 scene({2, 4, 8});
  KeyframeGateOptions o;
  o.maxGapSeconds = 1e5;
  const KeyframeGate gate(o);
  KeyframeGateOptions od = o;
  od.trackGate = TrackGate::kDisplacement;
  od.trackMinMotionPx = 24;
  const KeyframeGate byDisplacement(od);
  int parallax = -1, displacement = -1;
  for (int k = 1; k <= 30; ++k) {
    const GateTracks t = scene.tracks(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0, 0.02 * k));
    const KeyframeDecision d = gate.decideTracks(t, k / 30.0, 640, 480);
    if (parallax < 0 && d.keyframe) {
      parallax = k;
      EXPECT_EQ(d.reason, GateReason::kParallax);
      EXPECT_GT(d.parallaxPx, 3);
      EXPECT_GT(d.parallaxPx, 0.8 * d.medianMotionPx);  // no turn explains an expansion
    }
    if (displacement < 0 && byDisplacement.decideTracks(t, k / 30.0, 640, 480).keyframe)
      displacement = k;
  }
  EXPECT_GT(parallax, 1);
  EXPECT_LT(parallax, displacement < 0 ? 31 : displacement);
}

TEST(KeyframeGate, ATurnKeepsTheActiveKeyframesOverlapping) {
  // Points all around the eye (azimuth 0-360 deg, depths 2-8 m, heights within the view); the
  // eye turns 1 degree a frame about the vertical for 100 frames (1.5 fields of view: 65
  // degrees at f 500 px, 640 px) and does not move, so no frame has parallax. Each
  // keyframe is matched against the 5 before it (the active window); a point links them when
  // both see it. The turn bound (32 px at 640 px: a turn of about f atan(32 / f) = 3.7 degrees
  // a keyframe) keeps the newest keyframe seeing at least 60% of what the oldest of its window
  // sees (5 turns of 3.7 degrees: 18 of 65 degrees); the tracked-fraction rule alone
  // (maxTurnPx 0) lets each keyframe lose 20% of the last one's points, and 5 keyframes apart
  // less than half is shared.
  constexpr double f = 500, cx = 320, cy = 240;
  std::vector<Eigen::Vector3d> points;
  std::uint64_t s = 777;
  auto uniform = [&s] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) / 9007199254740992.0;
  };
  for (int i = 0; i < 3000; ++i) {
    const double az = 2 * M_PI * uniform(), depth = 2 + 6 * uniform();
    const double v = (uniform() - 0.5) * 0.9;  // within +-0.45 of the axis: the view's height
    points.emplace_back(depth * std::sin(az), depth * v, depth * std::cos(az));
  }
  auto rotation = [](int frame) {
    return Eigen::Matrix3d(Eigen::AngleAxisd(frame * M_PI / 180, Eigen::Vector3d::UnitY()));
  };
  auto project = [&](const Eigen::Matrix3d& R, const Eigen::Vector3d& X, Vec2* px) {
    const Eigen::Vector3d p = R * X;
    if (p.z() <= 0.1) return false;
    *px = Vec2(f * p.x() / p.z() + cx, f * p.y() / p.z() + cy);
    return px->x() >= 8 && px->y() >= 8 && px->x() <= 631 && px->y() <= 471;
  };
  // The keyframes the gate makes over the turn (the first frame is one).
  auto keyframes = [&](double maxTurnPx, std::vector<GateReason>* reasons) {
    KeyframeGateOptions o;
    o.maxGapSeconds = 1e5;
    o.maxTurnPx = maxTurnPx;
    const KeyframeGate gate(o);
    std::vector<int> kf = {0};
    for (int k = 1; k <= 100; ++k) {
      GateTracks t;
      for (const Eigen::Vector3d& X : points) {
        Vec2 a, b;
        if (!project(rotation(kf.back()), X, &a)) continue;
        ++t.keyframeTracks;
        if (!project(rotation(k), X, &b)) continue;
        t.atKeyframe.push_back(a);
        t.now.push_back(b);
      }
      const KeyframeDecision d = gate.decideTracks(t, k / 30.0, 640, 480);
      if (!d.keyframe) continue;
      EXPECT_LT(d.parallaxPx, 0.3) << "frame " << k;
      kf.push_back(k);
      reasons->push_back(d.reason);
    }
    return kf;
  };
  // The share of the points keyframe a sees that keyframe b also sees.
  auto shared = [&](int a, int b) {
    int seen = 0, both = 0;
    for (const Eigen::Vector3d& X : points) {
      Vec2 pa, pb;
      if (!project(rotation(a), X, &pa)) continue;
      ++seen;
      both += project(rotation(b), X, &pb);
    }
    return static_cast<double>(both) / seen;
  };
  std::vector<GateReason> reasons, reasonsLost;
  const std::vector<int> kf = keyframes(32, &reasons);
  const std::vector<int> kfLost = keyframes(0, &reasonsLost);
  ASSERT_GE(kf.size(), 7u);
  ASSERT_GE(kfLost.size(), 7u);
  for (GateReason r : reasons) EXPECT_EQ(r, GateReason::kTurn);
  for (GateReason r : reasonsLost) EXPECT_EQ(r, GateReason::kTracksLost);
  // 32 px at the centre is a turn of atan(32 / 500) = 3.66 degrees; the median point moves a
  // little more than the centre: every 3 or 4 frames.
  for (size_t i = 1; i < kf.size(); ++i) {
    EXPECT_GE(kf[i] - kf[i - 1], 3) << "keyframe " << i;
    EXPECT_LE(kf[i] - kf[i - 1], 4) << "keyframe " << i;
  }
  double worst = 1, worstLost = 1;
  for (size_t i = 5; i < kf.size(); ++i) worst = std::min(worst, shared(kf[i - 5], kf[i]));
  for (size_t i = 5; i < kfLost.size(); ++i)
    worstLost = std::min(worstLost, shared(kfLost[i - 5], kfLost[i]));
  EXPECT_GE(worst, 0.6);
  EXPECT_LT(worstLost, 0.5);
  // Scaled by width: the same scene at 1280 px makes the same keyframes.
  KeyframeGateOptions o;
  o.maxGapSeconds = 1e5;
  o.maxTurnPx = 32;
  const KeyframeGate gate(o);
  GateTracks t;
  for (const Eigen::Vector3d& X : points) {
    Vec2 a, b;
    if (!project(rotation(0), X, &a)) continue;
    ++t.keyframeTracks;
    if (!project(rotation(kf[1]), X, &b)) continue;
    t.atKeyframe.push_back(2 * a);
    t.now.push_back(2 * b);
  }
  EXPECT_EQ(gate.decideTracks(t, 1, 1280, 960).reason, GateReason::kTurn);
}

TEST(KeyframeGate, ParallaxOptionsNameTheirField) {
  KeyframeGateOptions o;
  o.minTrackedFraction = 1.5;
  try {
    KeyframeGate g(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gate.minTrackedFraction"), std::string::npos);
  }
  o = {};
  o.minParallaxPx = -1;
  EXPECT_THROW(KeyframeGate{o}, Error);
  o = {};
  o.maxTurnPx = -1;
  try {
    KeyframeGate g(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gate.maxTurnPx"), std::string::npos);
  }
}

}  // namespace
}  // namespace vidmap::sfm
