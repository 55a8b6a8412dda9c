// Camera paths through the presets: exact timing, smooth steps, the motion each path
// promises, and cameras that stay clear of every surface.
#include <gtest/gtest.h>

#include <cmath>

#include "vidmap/core/error.h"
#include "vidmap/synth/camera_path.h"
#include "vidmap/synth/render3d.h"

namespace vidmap::synth {
namespace {

using V3 = Eigen::Vector3d;

double angleDeg(const Eigen::Quaterniond& a, const Eigen::Quaterniond& b) {
  return a.angularDistance(b) * 180 / M_PI;
}

TEST(CameraPath, TimingAndSmoothSteps) {
  for (const std::string& scene : scenePresets()) {
    Scene s = makeScene(scene, 1);
    for (const std::string& path : pathKindNames()) {
      PathOptions o;
      o.kind = parsePathKind(path);
      o.frames = 60;
      o.fps = 24;
      auto f = makeCameraPath(s, o);
      ASSERT_EQ(f.size(), 60u);
      for (int i = 0; i < 60; ++i) {
        EXPECT_EQ(f[i].index, i);
        EXPECT_DOUBLE_EQ(f[i].timestamp, i / 24.0);
        EXPECT_NEAR(f[i].pose.q.norm(), 1, 1e-12);
        EXPECT_GE(f[i].pose.q.w(), 0);
        if (i > 0) {
          EXPECT_LT((f[i].pose.t - f[i - 1].pose.t).norm(), 0.15) << scene << " " << path;
          EXPECT_LT(angleDeg(f[i].pose.q, f[i - 1].pose.q), 2.5) << scene << " " << path;
        }
      }
    }
  }
}

TEST(CameraPath, CamerasStayClearOfEverySurface) {
  for (const std::string& scene : scenePresets()) {
    Scene s = makeScene(scene, 1);
    for (const std::string& path : pathKindNames()) {
      PathOptions o;
      o.kind = parsePathKind(path);
      o.frames = 40;
      for (const CameraFrame& f : makeCameraPath(s, o)) {
        EXPECT_FALSE(s.insideBox(f.pose.t)) << scene << " " << path << " " << f.index;
        EXPECT_GT(s.distanceToSurface(f.pose.t), 0.5) << scene << " " << path << " " << f.index;
        if (scene == "room") {  // inside the room
          EXPECT_TRUE(std::abs(f.pose.t.x()) < 5 && std::abs(f.pose.t.y()) < 4 &&
                      f.pose.t.z() > 0 && f.pose.t.z() < 3);
        }
      }
    }
  }
}

TEST(CameraPath, EachPathMovesAsDocumented) {
  for (const std::string& scene : scenePresets()) {
    Scene s = makeScene(scene, 1);
    const PathAnchors& a = s.desc().anchors;
    PathOptions o;
    o.frames = 30;
    PinholeCamera cam = PinholeCamera::fromHfov(640, 480, 60);

    o.kind = PathKind::Orbit;  // the target stays at the image centre
    auto f = makeCameraPath(s, o);
    for (const CameraFrame& c : f) {
      Eigen::Vector2d uv = cam.project(c.pose.toCamera(a.orbitTarget));
      EXPECT_NEAR(uv.x(), cam.cx, 1e-9);
      EXPECT_NEAR(uv.y(), cam.cy, 1e-9);
      V3 r = c.pose.t - a.orbitCenter;
      EXPECT_NEAR(std::hypot(r.x(), r.y()), a.orbitRadius, 1e-9);
    }
    EXPECT_NEAR(angleDeg(f.front().pose.q, f.back().pose.q),
                std::abs(a.orbitEndDeg - a.orbitStartDeg), 10.0);

    o.kind = PathKind::Sideways;  // fixed rotation, moving along the camera x axis
    f = makeCameraPath(s, o);
    for (const CameraFrame& c : f) EXPECT_LT(angleDeg(c.pose.q, f[0].pose.q), 1e-9);
    V3 move = (f.back().pose.t - f.front().pose.t).normalized();
    EXPECT_GT(std::abs(move.dot(f[0].pose.rotation().col(0))), 0.999);

    o.kind = PathKind::Forward;  // moving along the viewing direction (pitched a little)
    f = makeCameraPath(s, o);
    move = (f.back().pose.t - f.front().pose.t).normalized();
    EXPECT_GT(move.dot(f[0].pose.rotation().col(2)), std::cos(12 * M_PI / 180));
    EXPECT_GT((f.back().pose.t - f.front().pose.t).norm(), 1.5);

    o.kind = PathKind::Pan;  // rotation-heavy: a large turn, a small baseline
    f = makeCameraPath(s, o);
    EXPECT_NEAR(angleDeg(f.front().pose.q, f.back().pose.q), 2 * a.panHalfDeg, 1e-6);
    EXPECT_NEAR((f.back().pose.t - f.front().pose.t).norm(), a.panBaseline, 1e-9);
  }
}

TEST(CameraPath, FramesSeeSurfacesNotSky) {
  for (const std::string& scene : scenePresets()) {
    Scene s = makeScene(scene, 1);
    for (const std::string& path : pathKindNames()) {
      PathOptions o;
      o.kind = parsePathKind(path);
      o.frames = 5;
      PinholeCamera cam = PinholeCamera::fromHfov(64, 48, 60);
      for (const CameraFrame& f : makeCameraPath(s, o)) {
        Image<float> d = renderDepth(s, cam, f.pose);
        long sky = 0;
        for (long i = 0; i < d.pixels(); ++i) sky += d.data()[i] == 0;
        EXPECT_LT(sky, d.pixels() / 50) << scene << " " << path << " " << f.index;
      }
    }
  }
}

TEST(CameraPath, BadOptionsGiveClearErrors) {
  Scene s = makeScene("room", 1);
  PathOptions o;
  o.frames = 0;
  EXPECT_THROW(makeCameraPath(s, o), Error);
  o.frames = 10;
  o.fps = 0;
  EXPECT_THROW(makeCameraPath(s, o), Error);
  o.fps = NAN;
  EXPECT_THROW(makeCameraPath(s, o), Error);
  try {
    parsePathKind("spiral");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("spiral"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("orbit"), std::string::npos);
  }
  for (const std::string& n : pathKindNames()) EXPECT_EQ(pathKindName(parsePathKind(n)), n);
  // One frame: the start of the path at time 0.
  o.fps = 30;
  o.frames = 1;
  auto f = makeCameraPath(s, o);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].timestamp, 0.0);
}

}  // namespace
}  // namespace vidmap::synth
