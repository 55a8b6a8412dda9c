// The triangulator and the registration on a known scene: 200 points seen by four keyframes
// whose poses are the truth (the last one turned about the third's centre), with exact
// correspondences in the graph. Triangulated points land on the truth, the third keyframe
// registers at its true pose, tracks complete to every view, and the rotation-only model keeps
// the centre of the nearest keyframe. Bad options name their field.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/sfm/model_merge.h"
#include "vidmap/sfm/registration.h"
#include "vidmap/sfm/triangulator.h"

namespace vidmap::sfm {
namespace {

geometry::Pose truthPose(const Vec3& centre, double yaw) {
  geometry::Pose p;
  p.R = Eigen::AngleAxisd(yaw, Vec3::UnitY()).toRotationMatrix();
  p.t = -p.R * centre;
  return p;
}

struct World {
  Camera camera =
      Camera::fromSpec(CameraSpec::parse("PINHOLE 500,500,320,240"), 640, 480, 640, 480);
  std::vector<Vec3> points;
  std::vector<geometry::Pose> poses;
  KeyframeStore keyframes;
  CorrespondenceGraph graph;

  World() {
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> ux(-2, 2), uy(-1.5, 1.5), uz(5, 8);
    for (int i = 0; i < 200; ++i) points.emplace_back(ux(rng), uy(rng), uz(rng));
    poses = {truthPose({0, 0, 0}, 0), truthPose({0.5, 0, 0}, 0.02), truthPose({1.0, 0.1, 0}, 0.04),
             truthPose({1.0, 0.1, 0}, 0.12)};
    for (int id = 0; id < static_cast<int>(poses.size()); ++id) {
      Keyframe kf;
      kf.id = id;
      for (const Vec3& X : points) {
        const Vec2 px = camera.project(poses[id].apply(X));
        kf.keypoints.push_back(px);
        kf.normalized.push_back(camera.normalize(px));
      }
      kf.colors.resize(points.size());
      graph.addImage(id, static_cast<int>(points.size()));
      keyframes.push_back(std::move(kf));
    }
    std::vector<std::pair<int, int>> same;
    for (int k = 0; k < static_cast<int>(points.size()); ++k) same.emplace_back(k, k);
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) graph.addPair(a, b, same);
  }
};

TEST(TriangulatorAndRegistration, RecoverAKnownScene) {
  World w;
  Reconstruction rec(&w.keyframes, w.camera);
  rec.registerImage(0, w.poses[0]);
  rec.registerImage(1, w.poses[1]);
  const Triangulator tri(w.graph, {});
  tri.triangulateImage(rec, w.camera, 1);
  ASSERT_EQ(rec.numPoints(), 200);
  for (int k = 0; k < 200; ++k) {
    const PointId p = rec.pointOf(1, k);
    ASSERT_NE(p, kNoPoint);
    EXPECT_LT((rec.point(p).X - w.points[k]).norm(), 1e-6) << k;
  }

  const Registration reg(w.graph, {});
  EXPECT_EQ(reg.count2D3D(rec, 2), 200);
  ASSERT_TRUE(reg.registerImage(rec, w.camera, 2));
  const geometry::Pose& p2 = rec.image(2).pose;
  EXPECT_LT((p2.center() - w.poses[2].center()).norm(), 1e-6);
  EXPECT_LT(Eigen::AngleAxisd(p2.R * w.poses[2].R.transpose()).angle(), 1e-8);
  // Its inliers joined the tracks; completion has nothing left to add, and every point is
  // seen by the three views.
  tri.completeAndMerge(rec, 2);
  for (const auto& [id, point] : rec.points()) EXPECT_EQ(point.track.size(), 3u);

  // Keyframe 3 turned about keyframe 2's centre: the rotation explains it, and its centre is
  // that of the nearest keyframe exactly (not PnP's estimate of it).
  ASSERT_TRUE(reg.registerImage(rec, w.camera, 3));
  EXPECT_LT((rec.image(3).pose.center() - rec.image(2).pose.center()).norm(), 1e-12);
  EXPECT_LT(Eigen::AngleAxisd(rec.image(3).pose.R * w.poses[3].R.transpose()).angle(), 1e-8);
}

TEST(TriangulatorAndRegistration, TooSmallAnAngleMakesNoPoint) {
  World w;
  Reconstruction rec(&w.keyframes, w.camera);
  rec.registerImage(2, w.poses[2]);
  rec.registerImage(3, w.poses[3]);  // the same centre: no parallax
  Triangulator(w.graph, {}).triangulateImage(rec, w.camera, 3);
  EXPECT_EQ(rec.numPoints(), 0);
  // Nothing to register against.
  EXPECT_FALSE(Registration(w.graph, {}).registerImage(rec, w.camera, 0));
  EXPECT_FALSE(rec.isRegistered(0));
}

template <class Options, class Make>
void expectNamed(Options o, const std::string& field, Make make) {
  try {
    make(o);
    FAIL() << "no error for " << field;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(TriangulatorAndRegistration, BadOptionsNameTheirField) {
  World w;
  const Triangulator tri(w.graph, {});
  auto makeTri = [&](const TriangulatorOptions& o) { Triangulator t(w.graph, o); };
  auto makeReg = [&](const RegistrationOptions& o) { Registration r(w.graph, o); };
  auto makeMerger = [&](const ModelMergerOptions& o) { ModelMerger m(w.graph, tri, o); };
  TriangulatorOptions t;
  t.maxReprojErrorPx = 0;
  expectNamed(t, "triangulator.maxReprojErrorPx", makeTri);
  t = {};
  t.minAngleDeg = 91;
  expectNamed(t, "triangulator.minAngleDeg", makeTri);
  RegistrationOptions r;
  r.pnpMinInliers = 3;  // P3P needs more to be checked
  expectNamed(r, "registration.pnpMinInliers", makeReg);
  r = {};
  r.pnpMinInlierRatio = 1.5;
  expectNamed(r, "registration.pnpMinInlierRatio", makeReg);
  r = {};
  r.maxJumpOverDepth = -1;
  expectNamed(r, "registration.maxJumpOverDepth", makeReg);
  ModelMergerOptions m;
  m.minCommonPoints = 2;
  expectNamed(m, "merge.minCommonPoints", makeMerger);
  m = {};
  m.maxErrorGrowth = 0.5;
  expectNamed(m, "merge.maxErrorGrowth", makeMerger);
}

}  // namespace
}  // namespace vidmap::sfm
