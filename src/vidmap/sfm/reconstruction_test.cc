// The reconstruction's bookkeeping (observations, deletion, merging) and its export: the COLMAP
// model validates, round-trips through io, and COLMAP itself reads it when installed; the
// exported reprojection errors are COLMAP's (native pixels).
#include "vidmap/sfm/reconstruction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

namespace vidmap::sfm {
namespace {

namespace fs = std::filesystem;

// Two keyframes of a 640 x 480 working frame from 1280 x 960 frames, points projected exactly.
struct Fixture {
  KeyframeStore kfs;
  Reconstruction rec;
  std::vector<Vec3> X{{0, 0, 5}, {1, -0.5, 6}, {-1, 0.5, 4}};
  Fixture()
      : rec(&kfs,
            Camera::fromSpec(CameraSpec::parse("PINHOLE 1000,1000,640,480"), 1280, 960, 640, 480)) {
    geometry::Pose p0, p1;
    p1.t = {-0.5, 0, 0};
    for (int i = 0; i < 2; ++i) {
      Keyframe kf;
      kf.id = i;
      kf.name = "f" + std::to_string(i) + ".png";
      for (const Vec3& x : X) {
        const Vec3 c = (i ? p1 : p0).apply(x);
        kf.keypoints.push_back(rec.camera().project(c));
        kf.colors.push_back({10, 20, 30});
      }
      kf.keypoints.push_back({5, 5});  // a keypoint without a point
      kf.colors.push_back({0, 0, 0});
      kfs.push_back(kf);
    }
    rec.registerImage(0, p0);
    rec.registerImage(1, p1);
    for (int k = 0; k < 3; ++k) rec.addPoint(X[k], {{0, k}, {1, k}});
  }
};

TEST(Reconstruction, KeepsObservationsConsistent) {
  Fixture f;
  Reconstruction& r = f.rec;
  EXPECT_EQ(r.numPoints(), 3);
  EXPECT_EQ(r.numObservations(), 6);
  EXPECT_DOUBLE_EQ(r.meanTrackLength(), 2.0);
  EXPECT_LT(r.meanReprojectionError(), 1e-9);
  EXPECT_EQ(r.image(0).numPoints, 3);
  // A keypoint holds one point; an image observes a point once.
  EXPECT_THROW(r.addObservation(0, {0, 1}), Error);
  EXPECT_THROW(r.addObservation(0, {1, 3}), Error);
  EXPECT_THROW(r.registerImage(1, {}), Error);
  // Removing one of two observations deletes the point and frees both keypoints.
  EXPECT_TRUE(r.deleteObservation(0, {0, 0}));
  EXPECT_FALSE(r.hasPoint(0));
  EXPECT_EQ(r.pointOf(1, 0), kNoPoint);
  EXPECT_EQ(r.image(1).numPoints, 2);
  // Merging: b's observation of image 0 is dropped (a sees image 0 already).
  const PointId a = r.addPoint(f.X[0], {{0, 0}, {1, 3}});
  const PointId m = r.mergePoints(1, a);
  EXPECT_EQ(m, 1);
  EXPECT_FALSE(r.hasPoint(a));
  EXPECT_EQ(r.point(1).track.size(), 2u);
  EXPECT_EQ(r.pointOf(0, 0), kNoPoint);
  EXPECT_GT(r.triangulationAngleDeg(1), 1.0);
}

// Six views on a line 0.1 apart, a point 5 ahead of the first: the widest pair of rays is the
// first and last view, atan(0.5 / 5). The early-stopping test agrees with the full maximum at
// every threshold, including the maximum itself and the next double above it.
TEST(Reconstruction, TriangulationAngleAtLeastDecidesAsTheMaximum) {
  KeyframeStore kfs;
  Reconstruction rec(
      &kfs, Camera::fromSpec(CameraSpec::parse("PINHOLE 500,500,320,240"), 640, 480, 640, 480));
  const Vec3 X{0, 0, 5};
  std::vector<FeatureRef> track;
  for (int i = 0; i < 6; ++i) {
    geometry::Pose pose;
    pose.t = {-0.1 * i, 0, 0};
    Keyframe kf;
    kf.id = i;
    kf.name = "v" + std::to_string(i) + ".png";
    kf.keypoints.push_back(rec.camera().project(pose.apply(X)));
    kf.colors.push_back({0, 0, 0});
    kfs.push_back(kf);
    rec.registerImage(i, pose);
    track.push_back({i, 0});
  }
  const PointId id = rec.addPoint(X, track);
  const double truth = std::atan2(0.5, 5.0) * 180.0 / M_PI;
  const double widest = rec.triangulationAngleDeg(id);
  EXPECT_NEAR(widest, truth, 1e-9);
  for (double m :
       {0.0, 1.0, truth - 1e-6, widest, std::nextafter(widest, 90.0), truth + 1e-6, 90.0})
    EXPECT_EQ(rec.triangulationAngleAtLeast(id, m), widest >= m) << m;
  EXPECT_TRUE(rec.triangulationAngleAtLeast(id, widest));
  EXPECT_FALSE(rec.triangulationAngleAtLeast(id, std::nextafter(widest, 90.0)));
}

TEST(Reconstruction, ExportsAValidColmapModelAndPly) {
  Fixture f;
  const io::ColmapModel m = f.rec.toColmap();
  EXPECT_NO_THROW(m.validate());
  ASSERT_EQ(m.images.size(), 2u);
  const io::ColmapImage& im = m.images.at(2);
  EXPECT_EQ(im.name, "f1.png");
  EXPECT_EQ(im.points2d.size(), 4u);
  EXPECT_EQ(im.points2d[3].point3d_id, io::ColmapPoint2D::kInvalidPoint3D);
  // The camera and keypoints at the native size in COLMAP's convention project consistently:
  // COLMAP's projection of the exported point equals the exported keypoint.
  const io::ColmapCamera& c = m.cameras.at(1);
  EXPECT_DOUBLE_EQ(c.params[0], 1000);
  EXPECT_DOUBLE_EQ(c.params[2], 640);
  const io::ColmapPoint3D& p = m.points3d.at(2);
  const Eigen::Quaterniond q(im.qvec[0], im.qvec[1], im.qvec[2], im.qvec[3]);
  const Vec3 xc = q * Vec3(p.xyz[0], p.xyz[1], p.xyz[2]) + Vec3(im.tvec[0], im.tvec[1], im.tvec[2]);
  const double u = c.params[0] * xc.x() / xc.z() + c.params[2];
  const double v = c.params[1] * xc.y() / xc.z() + c.params[3];
  const io::ColmapPoint2D& kp = im.points2d[p.track[1].point2d_idx];
  EXPECT_NEAR(u, kp.x, 1e-9);
  EXPECT_NEAR(v, kp.y, 1e-9);
  EXPECT_EQ(f.rec.toPly().size(), 3u);
  EXPECT_EQ(f.rec.toPly()[0].rgb[1], 20);

  const fs::path dir = testFolder("rec") / "model";
  io::writeColmapModel(m, dir, io::ColmapFormat::kBinary);
  const io::ColmapModel back = io::readColmapModel(dir);
  EXPECT_EQ(back.points3d.size(), 3u);
  if (std::system("command -v colmap >/dev/null 2>&1") == 0) {
    const std::string cmd = "QT_QPA_PLATFORM=offscreen colmap model_converter --input_path " +
                            dir.string() + " --output_path " + dir.string() +
                            " --output_type TXT >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_TRUE(fs::exists(dir / "points3D.txt"));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vidmap::sfm
