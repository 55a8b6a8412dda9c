#include "vidmap/io/colmap_model.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;

fs::path freshDir(const std::string& name) { return testFolder("colmap_" + name); }

ColmapModel tinyModel() {
  ColmapModel m;
  m.cameras[1] = {1, CameraModelId::kPinhole, 640, 480, {500.5, 501.25, 320, 240}};
  m.cameras[2] = {2,
                  CameraModelId::kOpenCV,
                  640,
                  480,
                  {517.3, 516.5, 318.6, 255.3, 0.2624, -0.9531, -0.0054, 0.0026}};
  ColmapImage a;
  a.id = 1;
  a.qvec = {0.9, 0.1, -0.3, 0.3};
  a.tvec = {0.5, -1.25, 3};
  a.camera_id = 1;
  a.name = "frame_000000.png";
  a.points2d = {{10.5, 20.25, 7}, {30, 40, ColmapPoint2D::kInvalidPoint3D}};
  ColmapImage b = a;
  b.id = 2;
  b.camera_id = 2;
  b.name = "frame_000001.png";
  b.points2d = {{11.5, 21.25, 7}};
  m.images[1] = a;
  m.images[2] = b;
  m.points3d[7] = {7, {1.5, -2, 10.125}, {255, 128, 3}, 0.42, {{1, 0}, {2, 0}}};
  return m;
}

std::string readBytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

template <class T>
void append(std::string& s, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  s.append(b, sizeof(T));
}

void expectEqual(const ColmapModel& a, const ColmapModel& b) {
  ASSERT_EQ(a.cameras.size(), b.cameras.size());
  for (const auto& [id, c] : a.cameras) {
    const auto& d = b.cameras.at(id);
    EXPECT_EQ(c.model, d.model);
    EXPECT_EQ(c.width, d.width);
    EXPECT_EQ(c.params, d.params);
  }
  ASSERT_EQ(a.images.size(), b.images.size());
  for (const auto& [id, im] : a.images) {
    const auto& jm = b.images.at(id);
    EXPECT_EQ(im.qvec, jm.qvec);
    EXPECT_EQ(im.tvec, jm.tvec);
    EXPECT_EQ(im.name, jm.name);
    EXPECT_EQ(im.camera_id, jm.camera_id);
    ASSERT_EQ(im.points2d.size(), jm.points2d.size());
    for (size_t i = 0; i < im.points2d.size(); ++i) {
      EXPECT_EQ(im.points2d[i].x, jm.points2d[i].x);
      EXPECT_EQ(im.points2d[i].y, jm.points2d[i].y);
      EXPECT_EQ(im.points2d[i].point3d_id, jm.points2d[i].point3d_id);
    }
  }
  ASSERT_EQ(a.points3d.size(), b.points3d.size());
  for (const auto& [id, p] : a.points3d) {
    const auto& q = b.points3d.at(id);
    EXPECT_EQ(p.xyz, q.xyz);
    EXPECT_EQ(p.rgb, q.rgb);
    EXPECT_EQ(p.error, q.error);
    ASSERT_EQ(p.track.size(), q.track.size());
    for (size_t i = 0; i < p.track.size(); ++i) {
      EXPECT_EQ(p.track[i].image_id, q.track[i].image_id);
      EXPECT_EQ(p.track[i].point2d_idx, q.track[i].point2d_idx);
    }
  }
}

// The byte layout of cameras.bin, built by hand from COLMAP's documented format
// (uint64 count; per camera uint32 id, int32 model, uint64 width, uint64 height, doubles).
TEST(ColmapModel, CamerasBinaryLayoutMatchesColmap) {
  auto d = freshDir("layout");
  writeColmapModel(tinyModel(), d, ColmapFormat::kBinary);
  std::string want;
  append<std::uint64_t>(want, 2);
  append<std::uint32_t>(want, 1);
  append<std::int32_t>(want, 1);
  append<std::uint64_t>(want, 640);
  append<std::uint64_t>(want, 480);
  for (double p : {500.5, 501.25, 320.0, 240.0}) append<double>(want, p);
  append<std::uint32_t>(want, 2);
  append<std::int32_t>(want, 4);
  append<std::uint64_t>(want, 640);
  append<std::uint64_t>(want, 480);
  for (double p : {517.3, 516.5, 318.6, 255.3, 0.2624, -0.9531, -0.0054, 0.0026})
    append<double>(want, p);
  EXPECT_EQ(readBytes(d / "cameras.bin"), want);

  // points3D.bin: uint64 count; uint64 id, 3 doubles, 3 bytes, double error, uint64 length,
  // then (uint32 image, uint32 point2D index) pairs.
  std::string pts;
  append<std::uint64_t>(pts, 1);
  append<std::uint64_t>(pts, 7);
  for (double x : {1.5, -2.0, 10.125}) append<double>(pts, x);
  pts += std::string("\xff\x80\x03", 3);
  append<double>(pts, 0.42);
  append<std::uint64_t>(pts, 2);
  for (std::uint32_t v : {1u, 0u, 2u, 0u}) append<std::uint32_t>(pts, v);
  EXPECT_EQ(readBytes(d / "points3D.bin"), pts);
}

TEST(ColmapModel, BinaryRoundTrip) {
  auto d = freshDir("bin");
  auto m = tinyModel();
  writeColmapModel(m, d, ColmapFormat::kBinary);
  expectEqual(m, readColmapModel(d));
}

TEST(ColmapModel, TextRoundTripIsExact) {
  auto d = freshDir("txt");
  auto m = tinyModel();
  writeColmapModel(m, d, ColmapFormat::kText);
  EXPECT_FALSE(fs::exists(d / "cameras.bin"));
  expectEqual(m, readColmapModel(d));
}

// The text's numbers are a stream's at precision 17 (printf's %.17g): a point line of values
// with long, short, tiny, huge and negative decimal forms equals the stream's text of them.
TEST(ColmapModel, TextNumbersAreTheStreamsAtPrecision17) {
  auto d = freshDir("txt17");
  ColmapModel m = tinyModel();
  const std::array<double, 3> xyz = {0.1 + 0.2, -1e-300, 123456789.123456789};
  const double error = 2.0 / 3.0;
  m.points3d[7].xyz = xyz;
  m.points3d[7].error = error;
  writeColmapModel(m, d, ColmapFormat::kText);
  std::ostringstream want;
  want << std::setprecision(17) << 7 << " " << xyz[0] << " " << xyz[1] << " " << xyz[2]
       << " 255 128 3 " << error << " 1 0 2 0\n";
  const std::string text = readBytes(d / "points3D.txt");
  EXPECT_NE(text.find("\n" + want.str()), std::string::npos) << text;
  expectEqual(m, readColmapModel(d));
}

TEST(ColmapModel, InvalidModelWritesNothing) {
  auto d = freshDir("invalid");
  auto m = tinyModel();
  m.images[2].camera_id = 9;
  EXPECT_THROW(writeColmapModel(m, d, ColmapFormat::kBinary), Error);
  m = tinyModel();
  m.points3d[7].track.push_back({1, 5});
  EXPECT_THROW(writeColmapModel(m, d, ColmapFormat::kText), Error);
  m = tinyModel();
  m.cameras[1].params.pop_back();
  EXPECT_THROW(writeColmapModel(m, d, ColmapFormat::kBinary), Error);
  m = tinyModel();
  m.points3d[7].xyz[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(writeColmapModel(m, d, ColmapFormat::kBinary), Error);
  EXPECT_TRUE(fs::is_empty(d));
}

TEST(ColmapModel, TruncatedAndCorruptFilesAreClearErrors) {
  auto d = freshDir("trunc");
  writeColmapModel(tinyModel(), d, ColmapFormat::kBinary);
  auto bytes = readBytes(d / "images.bin");
  std::ofstream(d / "images.bin", std::ios::binary).write(bytes.data(), 50);
  EXPECT_THROW(readColmapModel(d), Error);
  // A count of 2^60 must not allocate: it exceeds the file size.
  std::string huge;
  append<std::uint64_t>(huge, std::uint64_t(1) << 60);
  std::ofstream(d / "cameras.bin", std::ios::binary) << huge;
  try {
    readColmapModel(d);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cameras.bin"), std::string::npos);
  }
  EXPECT_THROW(readColmapModel(freshDir("empty")), Error);
  EXPECT_THROW(cameraModelFromName("FISHEYE_X"), Error);
}

// COLMAP itself reads the binary model back and converts it to text (when installed).
TEST(ColmapModel, ColmapModelConverterReadsOurBinaryModel) {
  if (std::system("command -v colmap >/dev/null 2>&1") != 0) GTEST_SKIP() << "colmap not installed";
  auto d = freshDir("colmap_in");
  auto out = freshDir("colmap_out");
  auto m = tinyModel();
  writeColmapModel(m, d, ColmapFormat::kBinary);
  std::string cmd = "QT_QPA_PLATFORM=offscreen colmap model_converter --input_path " + d.string() +
                    " --output_path " + out.string() + " --output_type TXT >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto back = readColmapModel(out);
  ASSERT_EQ(back.images.size(), 2u);
  ASSERT_EQ(back.points3d.size(), 1u);
  EXPECT_EQ(back.images.at(2).name, "frame_000001.png");
  EXPECT_NEAR(back.cameras.at(2).params[4], 0.2624, 1e-12);
  EXPECT_NEAR(back.points3d.at(7).xyz[2], 10.125, 1e-12);
  EXPECT_EQ(back.points3d.at(7).track.size(), 2u);
}

}  // namespace
}  // namespace vidmap::io
