// Ground-truth correspondences (correspondence.h) against the depth images and the poses.
#include <gtest/gtest.h>

#include <cmath>

#include "vidmap/synth/camera_path.h"
#include "vidmap/synth/correspondence.h"
#include "vidmap/synth/render3d.h"

namespace vidmap::synth {
namespace {

TEST(Correspondence, AgreesWithDepthAndFindsOcclusions) {
  Scene scene = makeScene("facade", 1);
  PathOptions po;
  po.kind = PathKind::Sideways;
  po.frames = 7;
  auto f = makeCameraPath(scene, po);
  PinholeCamera cam = PinholeCamera::fromHfov(160, 120, 60);
  const Pose &a = f[0].pose, &b = f[2].pose;
  Image<float> depthA = renderDepth(scene, cam, a), depthB = renderDepth(scene, cam, b);
  int visible = 0, hidden = 0;
  for (int y = 2; y < cam.height; y += 3) {
    for (int x = 2; x < cam.width; x += 3) {
      auto c = trueCorrespondence(scene, cam, a, b, x, y);
      // The same point from view a's depth image, by the test's own back-projection.
      double z = depthA(x, y);
      ASSERT_GT(z, 0);
      Eigen::Vector3d X =
          a.q * Eigen::Vector3d((x - cam.cx) / cam.fx * z, (y - cam.cy) / cam.fy * z, z) + a.t;
      Eigen::Vector3d xb = b.q.conjugate() * (X - b.t);
      double ub = cam.fx * xb.x() / xb.z() + cam.cx, vb = cam.fy * xb.y() / xb.z() + cam.cy;
      if (c) {
        ++visible;
        EXPECT_NEAR(c->depthA, z, 1e-5 * z);
        EXPECT_NEAR(c->uv.x(), ub, 1e-3);
        EXPECT_NEAR(c->uv.y(), vb, 1e-3);
        EXPECT_NEAR(c->depthB, xb.z(), 1e-5 * xb.z());
        // Where it lands inside view b (away from silhouettes), b's depth image agrees.
        int bx = static_cast<int>(std::lround(c->uv.x())),
            by = static_cast<int>(std::lround(c->uv.y()));
        if (bx >= 0 && by >= 0 && bx < cam.width && by < cam.height &&
            std::abs(c->uv.x() - bx) < 0.05 && std::abs(c->uv.y() - by) < 0.05) {
          EXPECT_NEAR(depthB(bx, by), c->depthB, 1e-3 * c->depthB);
        }
      } else {
        // Hidden in b: something nearer lies on b's ray to the point.
        int bx = static_cast<int>(std::lround(ub)), by = static_cast<int>(std::lround(vb));
        if (bx < 1 || by < 1 || bx >= cam.width - 1 || by >= cam.height - 1) continue;
        ++hidden;
        float nearest = std::min({depthB(bx, by), depthB(bx - 1, by), depthB(bx + 1, by),
                                  depthB(bx, by - 1), depthB(bx, by + 1)});
        EXPECT_LT(nearest, xb.z() * (1 - 1e-4)) << x << " " << y;
      }
    }
  }
  EXPECT_GT(visible, 1500);
  EXPECT_GT(hidden, 10);  // boxes hide parts of the wall and ground from the moved camera
}

}  // namespace
}  // namespace vidmap::synth
