// The mapper's camera: parsing of --camera, undistortion inverting distortion for every model,
// the pixel-convention and resize conversions to COLMAP, and OpenCV's projection as the peer
// of the distortion formulas.
#include "vidmap/sfm/camera.h"

#include <gtest/gtest.h>

#include <functional>

#include "vidmap/ba/camera_models.h"
#include "vidmap/core/error.h"

#if defined(VIDMAP_HAVE_OPENCV)
#include <opencv2/calib3d.hpp>
#endif

namespace vidmap::sfm {
namespace {

const char* kTum = "FULL_OPENCV 517.3,516.5,318.6,255.3,0.2624,-0.9531,-0.0054,0.0026,1.1633,0,0,0";

TEST(Camera, ParsesModelsAndRejectsBadSpecs) {
  const CameraSpec a = CameraSpec::parse("PINHOLE 517.3,516.5,318.6,255.3");
  EXPECT_EQ(a.model, io::CameraModelId::kPinhole);
  ASSERT_EQ(a.params.size(), 4u);
  EXPECT_DOUBLE_EQ(a.params[2], 318.6);
  EXPECT_FALSE(CameraSpec::parse("SIMPLE_RADIAL").known());
  EXPECT_EQ(CameraSpec::parse("OPENCV 1 2 3 4 0 0 0 0").params.size(), 8u);
  EXPECT_THROW(CameraSpec::parse(""), Error);
  EXPECT_THROW(CameraSpec::parse("FISHEYE 1,2,3"), Error);
  EXPECT_THROW(CameraSpec::parse("PINHOLE 1,2,3"), Error);
  EXPECT_THROW(CameraSpec::parse("PINHOLE 1,2,x,4"), Error);
  EXPECT_THROW(CameraSpec::parse("PINHOLE -1,2,3,4"), Error);
  EXPECT_THROW(CameraSpec::parse("PINHOLE 1,2,3,nan"), Error);
  EXPECT_THROW(CameraSpec::parse("OPENCV"), Error);  // unknown distortion cannot be refined
}

TEST(Camera, UnknownCameraStartsAsColmap) {
  const Camera c = Camera::fromSpec(CameraSpec::parse("SIMPLE_RADIAL"), 1280, 720, 640, 360);
  EXPECT_DOUBLE_EQ(c.params()[0], 1.2 * 640);
  EXPECT_DOUBLE_EQ(c.params()[1], 319.5);
  EXPECT_DOUBLE_EQ(c.params()[2], 179.5);
  EXPECT_FALSE(c.fixed());
  // COLMAP's convention at the native size: the centre is (640, 360), f doubles.
  const io::ColmapCamera cc = c.toColmap(1);
  EXPECT_EQ(cc.width, 1280u);
  EXPECT_DOUBLE_EQ(cc.params[0], 1.2 * 1280);
  EXPECT_DOUBLE_EQ(cc.params[1], 640);
  EXPECT_DOUBLE_EQ(cc.params[2], 360);
  const Vec2 p = c.toColmapPixel({0, 0});  // centre of the top-left working pixel
  EXPECT_DOUBLE_EQ(p.x(), 1.0);
  EXPECT_DOUBLE_EQ(p.y(), 1.0);
}

TEST(Camera, KnownCameraRoundTripsThroughTheWorkingSize) {
  const CameraSpec spec = CameraSpec::parse(kTum);
  const Camera c = Camera::fromSpec(spec, 640, 480, 320, 240);
  EXPECT_TRUE(c.fixed());
  EXPECT_DOUBLE_EQ(c.pinhole().fx, 517.3 / 2);
  EXPECT_DOUBLE_EQ(c.pinhole().cx, 318.6 / 2 - 0.5);
  const io::ColmapCamera cc = c.toColmap(1);
  for (size_t i = 0; i < spec.params.size(); ++i) EXPECT_NEAR(cc.params[i], spec.params[i], 1e-12);
}

TEST(Camera, NormalizeInvertsProjectionForEveryModel) {
  const char* specs[] = {"SIMPLE_PINHOLE 500,320,240",
                         "PINHOLE 500,510,320,240",
                         "SIMPLE_RADIAL 500,320,240,-0.12",
                         "RADIAL 500,320,240,-0.1,0.03",
                         "OPENCV 500,510,320,240,-0.1,0.02,0.001,-0.002",
                         kTum};
  for (const char* s : specs) {
    const Camera c = Camera::fromSpec(CameraSpec::parse(s), 640, 480, 640, 480);
    for (double x = 0; x <= 639; x += 71)
      for (double y = 0; y <= 479; y += 59) {
        const Vec2 n = c.normalize({x, y});
        const Vec2 back = c.distortAndProject(n);
        EXPECT_NEAR(back.x(), x, 1e-6) << s;
        EXPECT_NEAR(back.y(), y, 1e-6) << s;
      }
  }
}

// The mapper's projection is the adjuster's (ba/camera_models.h) for the models it refines:
// the reprojection errors of the mapper's checks are the ones bundle adjustment minimises.
template <CameraModel M>
void expectProjectsAsTheAdjuster(const char* spec) {
  const Camera c = Camera::fromSpec(CameraSpec::parse(spec), 640, 480, 640, 480);
  ASSERT_EQ(c.model(), M);
  for (const Vec3& X : {Vec3(0.3, -0.2, 2.0), Vec3(-0.5, 0.4, 1.5), Vec3(0.01, 0.02, 3.0)}) {
    double pix[2];
    ba::Projection<M>::project(c.params().data(), X.data(), pix, nullptr, nullptr);
    const Vec2 q = c.project(X);
    EXPECT_NEAR(q.x(), pix[0], 1e-9) << spec;
    EXPECT_NEAR(q.y(), pix[1], 1e-9) << spec;
  }
}

TEST(Camera, ProjectsAsTheBundleAdjusterDoes) {
  expectProjectsAsTheAdjuster<CameraModel::kSimplePinhole>("SIMPLE_PINHOLE 500,320,240");
  expectProjectsAsTheAdjuster<CameraModel::kPinhole>("PINHOLE 500,510,320,240");
  expectProjectsAsTheAdjuster<CameraModel::kSimpleRadial>("SIMPLE_RADIAL 500,320,240,-0.12");
  expectProjectsAsTheAdjuster<CameraModel::kRadial>("RADIAL 500,320,240,-0.1,0.03");
}

#if defined(VIDMAP_HAVE_OPENCV)
// OpenCV's projectPoints uses the same formulas in its own code: the peer of distortAndProject.
TEST(Camera, DistortionAgreesWithOpenCV) {
  const Camera c = Camera::fromSpec(CameraSpec::parse(kTum), 640, 480, 640, 480);
  const auto& p = c.params();
  cv::Mat K = (cv::Mat_<double>(3, 3) << p[0], 0, p[2], 0, p[1], p[3], 0, 0, 1);
  cv::Mat dist = (cv::Mat_<double>(1, 5) << p[4], p[5], p[6], p[7], p[8]);
  std::vector<cv::Point3d> X;
  for (double u = -0.5; u <= 0.5; u += 0.25)
    for (double v = -0.4; v <= 0.4; v += 0.2) X.emplace_back(u, v, 1.0);
  std::vector<cv::Point2d> px;
  cv::projectPoints(X, cv::Vec3d(0, 0, 0), cv::Vec3d(0, 0, 0), K, dist, px);
  for (size_t i = 0; i < X.size(); ++i) {
    const Vec2 q = c.distortAndProject({X[i].x, X[i].y});
    EXPECT_NEAR(q.x(), px[i].x, 1e-9);
    EXPECT_NEAR(q.y(), px[i].y, 1e-9);
  }
}
#endif

}  // namespace
}  // namespace vidmap::sfm

namespace vidmap::sfm {
namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Intrinsics that cannot belong to the image are refused before any work, the message naming
// the parameter (issue 20: cx = -5000 was written into the model; k1 = 1e30 failed later,
// blaming the camera's motion).
TEST(Camera, IntrinsicsAreCheckedAgainstTheImageSize) {
  auto check = [](const std::string& spec, int w, int h) {
    return errorOf([&] { Camera::fromSpec(CameraSpec::parse(spec), w, h, w, h); });
  };
  EXPECT_EQ(check("PINHOLE 277,277,160,120", 320, 240), "");
  EXPECT_EQ(check("PINHOLE 277,277,-40,290", 320, 240), "");  // within a quarter outside
  std::string m = check("PINHOLE 277,277,-5000,120", 320, 240);
  EXPECT_NE(m.find("cx = -5000"), std::string::npos) << m;
  m = check("PINHOLE 277,277,160,400", 320, 240);
  EXPECT_NE(m.find("cy = 400"), std::string::npos) << m;
  m = check("SIMPLE_PINHOLE 2,160,120", 320, 240);
  EXPECT_NE(m.find("f = 2 "), std::string::npos) << m;
  m = check("PINHOLE 277,1e9,160,120", 320, 240);
  EXPECT_NE(m.find("fy = 1e+09"), std::string::npos) << m;
  EXPECT_EQ(check("SIMPLE_RADIAL", 320, 240), "");  // unknown: nothing to check
}

TEST(Camera, DistortionOutsideASaneRangeIsRefused) {
  std::string m = errorOf([] { CameraSpec::parse("OPENCV 277,277,160,120,1e30,0,0,0"); });
  EXPECT_NE(m.find("k1 = 1e+30"), std::string::npos) << m;
  m = errorOf([] { CameraSpec::parse("OPENCV 277,277,160,120,0.1,0,2,0"); });
  EXPECT_NE(m.find("p1 = 2"), std::string::npos) << m;
  m = errorOf([] { CameraSpec::parse("SIMPLE_RADIAL 277,160,120,-500"); });
  EXPECT_NE(m.find("k = -500"), std::string::npos) << m;
  EXPECT_EQ(errorOf([] { CameraSpec::parse(kTum); }), "");
  EXPECT_EQ(cameraParamNames(io::CameraModelId::kFullOpenCV).size(), 12u);
}

}  // namespace
}  // namespace vidmap::sfm
