// The pinhole camera and pose conventions (camera.h), checked with hand arithmetic.
#include <gtest/gtest.h>

#include <cmath>

#include "vidmap/core/error.h"
#include "vidmap/synth/camera.h"
#include "vidmap/synth/render3d.h"
#include "vidmap/synth/render_kernels.h"

namespace vidmap::synth {
namespace {

using V3 = Eigen::Vector3d;

TEST(PinholeCamera, FromHfovPutsThePrincipalPointAtTheImageCentre) {
  PinholeCamera c = PinholeCamera::fromHfov(640, 480, 60);
  EXPECT_DOUBLE_EQ(c.fx, 320.0 / std::tan(M_PI / 6));
  EXPECT_DOUBLE_EQ(c.fy, c.fx);
  // Pixel centres at integers: the image spans [-0.5, 639.5], its centre is 319.5.
  EXPECT_DOUBLE_EQ(c.cx, 319.5);
  EXPECT_DOUBLE_EQ(c.cy, 239.5);
  // The left and right image borders are at +-30 degrees.
  EXPECT_NEAR(std::atan((c.width - 0.5 - c.cx) / c.fx) * 180 / M_PI, 30.0, 1e-12);
  EXPECT_NEAR(std::atan((-0.5 - c.cx) / c.fx) * 180 / M_PI, -30.0, 1e-12);
}

TEST(PinholeCamera, RejectsBadSizes) {
  EXPECT_THROW(PinholeCamera::fromHfov(0, 480, 60), Error);
  EXPECT_THROW(PinholeCamera::fromHfov(640, -1, 60), Error);
  EXPECT_THROW(PinholeCamera::fromHfov(640, 480, 0), Error);
  EXPECT_THROW(PinholeCamera::fromHfov(640, 480, 180), Error);
  try {
    PinholeCamera::fromHfov(0, 480, 60);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("width"), std::string::npos) << e.what();
  }
  PinholeCamera c;
  c.fx = 0;
  EXPECT_THROW(c.check(), Error);
}

TEST(Pose, PointsOnTheOpticalAxisProjectToThePrincipalPoint) {
  PinholeCamera c = PinholeCamera::fromHfov(320, 200, 75);
  c.cx = 150.25;  // off-centre on purpose
  c.cy = 97.75;
  for (int k = 0; k < 5; ++k) {
    Pose p = Pose::lookAt(V3(k, -2.0 + k, 1.0 + 0.3 * k), V3(0.5 * k, 3, 0.2 * k));
    V3 axis = p.rotation().col(2);  // the camera z axis in the world
    for (double dist : {0.5, 3.0, 40.0}) {
      Eigen::Vector2d uv = c.project(p.toCamera(p.t + dist * axis));
      EXPECT_NEAR(uv.x(), c.cx, 1e-9);
      EXPECT_NEAR(uv.y(), c.cy, 1e-9);
    }
    // The renderer's ray through (cx, cy) is the optical axis too.
    CameraView cv = makeCameraView(c, p);
    Vec3 d = pixelRay(cv, c.cx, c.cy);
    EXPECT_NEAR(d.x, axis.x(), 1e-12);
    EXPECT_NEAR(d.y, axis.y(), 1e-12);
    EXPECT_NEAR(d.z, axis.z(), 1e-12);
  }
}

TEST(Pose, LookAtFollowsTheOpenCvAxes) {
  V3 eye(1, -4, 1.5), target(1, 2, 1.5);  // looking along +y, world z up
  Pose p = Pose::lookAt(eye, target);
  Eigen::Matrix3d r = p.rotation();
  EXPECT_NEAR((r.transpose() * r - Eigen::Matrix3d::Identity()).norm(), 0, 1e-12);
  EXPECT_NEAR(r.determinant(), 1, 1e-12);
  EXPECT_GE(p.q.w(), 0);
  EXPECT_NEAR((r.col(0) - V3(1, 0, 0)).norm(), 0, 1e-12);   // x right = +x world
  EXPECT_NEAR((r.col(1) - V3(0, 0, -1)).norm(), 0, 1e-12);  // y down = -z world
  EXPECT_NEAR((r.col(2) - V3(0, 1, 0)).norm(), 0, 1e-12);   // z forward
  PinholeCamera c = PinholeCamera::fromHfov(640, 480, 60);
  Eigen::Vector2d up = c.project(p.toCamera(target + V3(0, 0, 1)));
  Eigen::Vector2d right = c.project(p.toCamera(target + V3(1, 0, 0)));
  EXPECT_LT(up.y(), c.cy);     // above the target: higher in the image (smaller v)
  EXPECT_GT(right.x(), c.cx);  // to the right: larger u
  // toWorld inverts toCamera, and t is the camera centre.
  V3 x(0.3, -0.7, 2.0);
  EXPECT_NEAR((p.toWorld(p.toCamera(x)) - x).norm(), 0, 1e-12);
  EXPECT_NEAR(p.toCamera(eye).norm(), 0, 1e-12);
  EXPECT_THROW(Pose::lookAt(eye, eye), Error);
  EXPECT_THROW(Pose::lookAt(eye, eye + V3(0, 0, 1)), Error);
}

}  // namespace
}  // namespace vidmap::synth
