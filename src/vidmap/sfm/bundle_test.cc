#include "vidmap/sfm/bundle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "vidmap/core/error.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::sfm {
namespace {

// A window laid out by hand (640 x 480, 8 x 8 cells of 80 x 60 px): image 0 is the new
// keyframe, 1 and 2 its neighbours, 3 outside the window.
// - cluster: 300 points in the top-left cell of images 1 and 2, also seen by 3: the longest
//   tracks, and the first ids;
// - spread: 2 points at the centre of every cell of images 1 and 2 (128), tracks of 2;
// - fresh: 50 points of the new keyframe, seen by it and image 3 only.
// With room for 250 points, the longest tracks first would keep 250 cluster points: one
// cell of the 64, and none of the new keyframe's points.
struct Layout {
  KeyframeStore keyframes;
  std::vector<PointId> cluster, spread, fresh;
};

void addKeypoint(Keyframe& kf, double x, double y) {
  kf.keypoints.push_back({x, y});
  kf.colors.push_back({});
  kf.normalized.push_back({0, 0});
}

TEST(Bundle, BoundedWindowKeepsPointsSpreadAndTheNewKeyframe) {
  Layout l;
  for (int i = 0; i < 4; ++i) {
    l.keyframes.emplace_back();
    l.keyframes.back().id = i;
  }
  // Keypoints first (the model sizes an image's point list at registration).
  struct Obs {
    int image;
    double x, y;
  };
  std::vector<std::vector<Obs>> tracks;
  for (int k = 0; k < 300; ++k) {
    const double x = 5 + (k % 20) * 3.5, y = 5 + (k / 20) * 3.5;  // inside 80 x 60
    tracks.push_back({{1, x, y}, {2, x, y}, {3, x, y}});
  }
  for (int cy = 0; cy < 8; ++cy)
    for (int cx = 0; cx < 8; ++cx)
      for (int j = 0; j < 2; ++j) {
        const double x = cx * 80 + 40 + j, y = cy * 60 + 30;
        tracks.push_back({{1, x, y}, {2, x + 0.5, y}});
      }
  for (int k = 0; k < 50; ++k) {
    const double x = 20 + (k % 10) * 60, y = 40 + (k / 10) * 90;
    tracks.push_back({{0, x, y}, {3, x, y}});
  }
  std::vector<std::vector<FeatureRef>> refs;
  for (const auto& t : tracks) {
    refs.emplace_back();
    for (const Obs& o : t) {
      Keyframe& kf = l.keyframes[o.image];
      refs.back().push_back({o.image, static_cast<int>(kf.keypoints.size())});
      addKeypoint(kf, o.x, o.y);
    }
  }
  const Camera cam =
      Camera::fromSpec(CameraSpec::parse("PINHOLE 500,500,320,240"), 640, 480, 640, 480);
  Reconstruction rec(&l.keyframes, cam);
  for (int i = 0; i < 4; ++i) rec.registerImage(i, geometry::Pose{});
  for (size_t t = 0; t < refs.size(); ++t) {
    const PointId p = rec.addPoint({0, 0, 5}, refs[t]);
    (t < 300 ? l.cluster : t < 428 ? l.spread : l.fresh).push_back(p);
  }

  BundleOptions o;
  o.maxPoints = 250;
  const std::vector<int> window{0, 1, 2};
  const std::vector<PointId> kept = selectWindowPoints(rec, window, o);
  ASSERT_EQ(kept.size(), 250u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  const std::set<PointId> keptSet(kept.begin(), kept.end());
  EXPECT_EQ(keptSet.size(), kept.size());
  // Every point of the new keyframe.
  for (PointId p : l.fresh) EXPECT_TRUE(keptSet.count(p)) << "point " << p;
  // Every cell of image 1 holds a kept point.
  std::set<int> cells;
  const RegisteredImage& im1 = rec.image(1);
  for (size_t f = 0; f < im1.point3d.size(); ++f)
    if (keptSet.count(im1.point3d[f])) {
      const Vec2& kp = l.keyframes[1].keypoints[f];
      cells.insert(static_cast<int>(kp.y() / 60) * 8 + static_cast<int>(kp.x() / 80));
    }
  EXPECT_EQ(cells.size(), 64u);
  // One round over the 64 cells of images 1 and 2 takes a cluster point from the top-left
  // cell of each and 126 spread points (the other cells' two; cell 0's rank below the
  // cluster's longer tracks); later rounds find points only in the top-left cells.
  int clusterKept = 0, spreadKept = 0;
  for (PointId p : l.cluster) clusterKept += keptSet.count(p) ? 1 : 0;
  for (PointId p : l.spread) spreadKept += keptSet.count(p) ? 1 : 0;
  EXPECT_EQ(spreadKept, 126);
  EXPECT_EQ(clusterKept, 250 - 50 - 126);

  // No cap, or a cap above the window's points: all of them.
  o.maxPoints = 0;
  EXPECT_EQ(selectWindowPoints(rec, window, o).size(), 300u + 128 + 50);
  o.maxPoints = 1000;
  EXPECT_EQ(selectWindowPoints(rec, window, o).size(), 300u + 128 + 50);
  o.pointGrid = 0;
  EXPECT_THROW(selectWindowPoints(rec, window, o), Error);
}

// Points that the problem sees from one centre have no depth there: with minParallaxDeg they
// are held (as in rotation-heavy video, where the keyframes registered as rotations share the
// centre of the one before). Keyframes 0 and 1 half a metre apart, 2 and 3 turned about 0's
// centre; 100 points seen by all four, 100 by 2 and 3 only; keypoints with 0.5 px of noise.
TEST(Bundle, PointsWithoutParallaxAreHeld) {
  const Camera cam =
      Camera::fromSpec(CameraSpec::parse("PINHOLE 500,500,320,240"), 640, 480, 640, 480);
  std::vector<geometry::Pose> poses(4);
  poses[1].t = {-0.5, 0, 0};
  poses[2].R = Eigen::AngleAxisd(0.03, Vec3::UnitY()).toRotationMatrix();
  poses[3].R = Eigen::AngleAxisd(0.06, Vec3::UnitY()).toRotationMatrix();
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> ux(-1.5, 1.5), uy(-1, 1), uz(5, 8);
  std::normal_distribution<double> noise(0, 0.5);
  KeyframeStore keyframes(4);
  std::vector<Vec3> X;
  std::vector<std::vector<FeatureRef>> tracks;
  for (int i = 0; i < 200; ++i) {
    X.emplace_back(ux(rng), uy(rng), uz(rng));
    tracks.emplace_back();
    for (int id = i < 100 ? 0 : 2; id < 4; ++id) {
      Keyframe& kf = keyframes[id];
      tracks.back().push_back({id, static_cast<int>(kf.keypoints.size())});
      addKeypoint(kf, 0, 0);
      kf.keypoints.back() = cam.project(poses[id].apply(X.back())) + Vec2(noise(rng), noise(rng));
    }
  }
  for (int id = 0; id < 4; ++id) keyframes[id].id = id;
  auto adjust = [&](double minParallaxDeg, std::vector<Vec3>* after) {
    Reconstruction rec(&keyframes, cam);
    for (int id = 0; id < 4; ++id) rec.registerImage(id, poses[id]);
    std::vector<PointId> ids;
    for (size_t i = 0; i < X.size(); ++i) ids.push_back(rec.addPoint(X[i], tracks[i]));
    BundleOptions o;
    o.minParallaxDeg = minParallaxDeg;
    const BundleReport rep = adjustBundle(rec, {2, 3}, o);
    EXPECT_TRUE(rep.usable);
    EXPECT_EQ(rep.points, 200);
    EXPECT_EQ(rep.constantImages, 2);
    after->clear();
    for (PointId p : ids) after->push_back(rec.point(p).X);
    return rep;
  };
  std::vector<Vec3> free, held;
  EXPECT_EQ(adjust(0, &free).pointsHeld, 0);
  EXPECT_EQ(adjust(0.01, &held).pointsHeld, 100);
  int movedFree = 0;
  for (int i = 100; i < 200; ++i) {
    EXPECT_EQ(held[i], X[i]) << i;  // held exactly
    movedFree += free[i] != X[i];
  }
  EXPECT_GT(movedFree, 50);  // free, they move (along their rays, where nothing holds them)
  int movedSeenByAll = 0;
  for (int i = 0; i < 100; ++i) movedSeenByAll += held[i] != X[i];
  EXPECT_GT(movedSeenByAll, 50);  // the others are refined
  BundleOptions bad;
  bad.minParallaxDeg = -1;
  EXPECT_THROW(bad.check(), Error);
}

// The window's assembly: six keyframes along a line, the window {2, 3} given with a repeat and
// out of order. Outside images share the window's points unequally (image 4: 60 points, 1: 40,
// 0: 20, 5: 10); with maxConstantImages 2, images 4 and 1 hold the window and the observations
// of 0 and 5 are left out. Only the window's poses move, the same whatever the list's order.
TEST(Bundle, WindowHoldsTheOutsideImagesSharingTheMostPoints) {
  const Camera cam =
      Camera::fromSpec(CameraSpec::parse("PINHOLE 500,500,320,240"), 640, 480, 640, 480);
  std::vector<geometry::Pose> poses(6);
  for (int i = 0; i < 6; ++i) poses[i].t = {-0.2 * i, 0.01 * i, 0};
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> ux(-1, 2), uy(-1, 1), uz(5, 8);
  std::normal_distribution<double> noise(0, 0.5);
  KeyframeStore keyframes(6);
  for (int id = 0; id < 6; ++id) keyframes[id].id = id;
  std::vector<Vec3> X;
  std::vector<std::vector<FeatureRef>> tracks;
  const auto addTrack = [&](std::vector<int> images) {
    X.emplace_back(ux(rng), uy(rng), uz(rng));
    tracks.emplace_back();
    for (int id : images) {
      Keyframe& kf = keyframes[id];
      tracks.back().push_back({id, static_cast<int>(kf.keypoints.size())});
      addKeypoint(kf, 0, 0);
      kf.keypoints.back() = cam.project(poses[id].apply(X.back())) + Vec2(noise(rng), noise(rng));
    }
  };
  for (int k = 0; k < 60; ++k) addTrack({2, 3, 4});
  for (int k = 0; k < 40; ++k) addTrack({1, 2, 3});
  for (int k = 0; k < 20; ++k) addTrack({0, 2});
  for (int k = 0; k < 10; ++k) addTrack({3, 5});
  for (int k = 0; k < 30; ++k) addTrack({0, 1, 4, 5});  // outside the window: not refined
  const auto adjust = [&](const std::vector<int>& window, Reconstruction& rec) {
    for (int id = 0; id < 6; ++id) rec.registerImage(id, poses[id]);
    for (size_t i = 0; i < X.size(); ++i) rec.addPoint(X[i], tracks[i]);
    BundleOptions o;
    o.maxConstantImages = 2;
    return adjustBundle(rec, window, o);
  };
  Reconstruction a(&keyframes, cam), b(&keyframes, cam);
  const BundleReport ra = adjust({3, 2, 3}, a);
  const BundleReport rb = adjust({2, 3}, b);
  ASSERT_TRUE(ra.usable);
  EXPECT_EQ(ra.images, 4);
  EXPECT_EQ(ra.constantImages, 2);
  EXPECT_EQ(ra.points, 130);
  EXPECT_EQ(ra.observationsLeftOut, 20 + 10);
  // Observations of the refined points in images 1 to 4: 60 x 3 + 40 x 3 + 20 + 10.
  EXPECT_EQ(ra.observations, 180 + 120 + 20 + 10);
  EXPECT_LT(ra.finalRmsPx, ra.initialRmsPx);
  for (int id : {0, 1, 4, 5}) {
    EXPECT_EQ(a.image(id).pose.t, poses[id].t) << id;
    EXPECT_EQ(a.image(id).pose.R, poses[id].R) << id;
  }
  for (int id : {2, 3}) {
    EXPECT_NE(a.image(id).pose.t, poses[id].t) << id;
    EXPECT_EQ(a.image(id).pose.t, b.image(id).pose.t) << id;
    EXPECT_EQ(a.image(id).pose.R, b.image(id).pose.R) << id;
  }
  EXPECT_EQ(ra.finalRmsPx, rb.finalRmsPx);
  for (const auto& [id, p] : a.points()) EXPECT_EQ(p.X, b.point(id).X) << id;
  // The points outside the window keep their positions.
  for (size_t i = 130; i < X.size(); ++i) EXPECT_EQ(a.point(static_cast<PointId>(i)).X, X[i]) << i;
}

}  // namespace
}  // namespace vidmap::sfm
