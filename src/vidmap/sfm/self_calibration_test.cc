// The mapper's self-calibration of an unknown focal length on a hand-held camera that mostly
// turns (TUM fr1-rpy's motion): a few degrees of roll, pitch and yaw between frames, a centimetre
// of translation, about 80 matches a pair. The truth is projected here with Eigen (not the
// mapper's camera code), with Gaussian keypoint noise and 10% wrong matches mixed in.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "vidmap/sfm/mapper.h"

namespace vidmap::sfm {
namespace {

constexpr double kFocal = 517, kCx = 320, kCy = 240;
constexpr double kNoise = 1.0;
constexpr int kPoints = 150;
constexpr int kW = 640, kH = 480;

struct Video {
  std::vector<Keyframe> keyframes;
  std::vector<std::vector<PairMatches>> pairs;  // per keyframe, against the 6 before it
};

Video makeVideo(int frames, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> ux(-4, 4), uy(-3, 3), uz(1.5, 4), phase(0, 6.28);
  std::normal_distribution<double> noise(0, kNoise);
  std::vector<Eigen::Vector3d> points(kPoints);
  for (auto& p : points) p = {ux(rng), uy(rng), uz(rng)};
  const double a = phase(rng), b = phase(rng), c = phase(rng);
  Video v;
  std::vector<std::vector<int>> kpOfPoint(frames);
  for (int i = 0; i < frames; ++i) {
    const double deg = M_PI / 180;
    const Eigen::Matrix3d Rwc =
        (Eigen::AngleAxisd(6 * deg * std::sin(0.45 * i + a), Eigen::Vector3d::UnitZ()) *
         Eigen::AngleAxisd(5 * deg * std::sin(0.35 * i + b), Eigen::Vector3d::UnitX()) *
         Eigen::AngleAxisd(5 * deg * std::sin(0.3 * i + c), Eigen::Vector3d::UnitY()))
            .toRotationMatrix();
    const Eigen::Vector3d centre(0.01 * std::sin(0.4 * i), 0.008 * std::cos(0.3 * i), 0.005 * i);
    Keyframe kf;
    kf.id = kf.frameIndex = i;
    kf.timestamp = i / 30.0;
    kf.name = "frame_" + std::to_string(i);
    kpOfPoint[i].assign(points.size(), -1);
    for (size_t p = 0; p < points.size(); ++p) {
      const Eigen::Vector3d x = Rwc.transpose() * (points[p] - centre);
      if (x.z() < 0.5) continue;
      const Vec2 q(kFocal * x.x() / x.z() + kCx, kFocal * x.y() / x.z() + kCy);
      if (q.x() < 0 || q.y() < 0 || q.x() > kW - 1 || q.y() > kH - 1) continue;
      kpOfPoint[i][p] = static_cast<int>(kf.keypoints.size());
      kf.keypoints.push_back(q + Vec2(noise(rng), noise(rng)));
      kf.colors.push_back({100, 100, 100});
    }
    std::vector<PairMatches> pm;
    for (int j = std::max(0, i - 6); j < i; ++j) {
      PairMatches m;
      m.image1 = j;
      m.image2 = i;
      for (size_t p = 0; p < points.size(); ++p)
        if (kpOfPoint[j][p] >= 0 && kpOfPoint[i][p] >= 0)
          m.matches.emplace_back(kpOfPoint[j][p], kpOfPoint[i][p]);
      std::uniform_int_distribution<int> ka(0,
                                            static_cast<int>(v.keyframes[j].keypoints.size()) - 1),
          kb(0, static_cast<int>(kf.keypoints.size()) - 1);
      for (int o = static_cast<int>(0.1 * m.matches.size()); o > 0; --o)
        m.matches.emplace_back(ka(rng), kb(rng));
      pm.push_back(std::move(m));
    }
    v.keyframes.push_back(std::move(kf));
    v.pairs.push_back(std::move(pm));
  }
  return v;
}

double selfCalibrated(const Video& v, const MapperOptions& mo) {
  const Camera cam = Camera::fromSpec(CameraSpec::parse("SIMPLE_RADIAL"), kW, kH, kW, kH);
  Mapper mapper(cam, mo);
  for (size_t i = 0; i < v.keyframes.size(); ++i) mapper.addKeyframe(v.keyframes[i], v.pairs[i]);
  return mapper.stats().selfCalibratedFocal;
}

// About 80 matches a pair (2-5 degrees of turn, a little translation), keypoints with 1 px of
// noise: the first three pairs alone (the former rule, selfCalibrationMinPairs 3) give 454-580 px
// over these seeds for 517 (TUM fr1-rpy: 658 px from its PNG frames, 474 from the same frames as
// JPEG); the pairs of the first frames (12 pairs) give 499-519, within 4% on every seed. With the
// minimum at 3 for both, the first assertion fails on five of the eight seeds. (12 is not the
// default: it costs the synthetic orbit a second pass and fails four pipeline tests, see
// docs/benchmarks.md, "The unknown camera's start from the pairs of the first frames".)
TEST(SelfCalibration, ThePairsOfTheFirstFramesHoldTheFocalLengthOnATurningHandHeldCamera) {
  int offByFivePercent = 0;
  for (std::uint32_t seed = 1; seed <= 8; ++seed) {
    const Video v = makeVideo(12, seed);
    MapperOptions twelve;
    twelve.selfCalibrationMinPairs = 12;
    const double now = selfCalibrated(v, twelve);
    EXPECT_NEAR(now, kFocal, 0.04 * kFocal) << "seed " << seed;
    MapperOptions three;
    three.selfCalibrationMinPairs = 3;
    const double first = selfCalibrated(v, three);
    ASSERT_GT(first, 0) << "seed " << seed;
    if (std::abs(first - kFocal) > 0.05 * kFocal) ++offByFivePercent;
  }
  // The scene is hard enough that the first three pairs alone miss (the test can fail).
  EXPECT_GE(offByFivePercent, 2);
}

}  // namespace
}  // namespace vidmap::sfm
