// The report's data against models built here with known content: the point bound, the
// warnings, the ground truth aligned back onto the model, and a data block that survives
// hostile names. The page in a real browser: scripts/report_browser_check.py (ctest
// report_browser_test).
#include "vidmap/report/report_html.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/io/colmap_model.h"

namespace vidmap::report {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

fs::path tempDir(const std::string& name) { return testFolder("report_" + name); }

// A model of `points` points seen by `images` cameras on a circle looking at the origin;
// trajectory.txt beside it with timestamps 0.1 i.
io::ColmapModel writeModel(const fs::path& dir, int images, int points, const std::string& name0) {
  io::ColmapModel m;
  io::ColmapCamera cam;
  cam.id = 1;
  cam.model = io::CameraModelId::kSimpleRadial;
  cam.width = 640;
  cam.height = 480;
  cam.params = {500, 320, 240, 0};
  m.cameras[1] = cam;
  std::ofstream traj;
  fs::create_directories(dir);
  traj.open(dir / "trajectory.txt");
  for (int i = 0; i < images; ++i) {
    const double a = 0.2 * i;
    const Eigen::Vector3d c(4 * std::cos(a), 0.3 * i, 4 * std::sin(a));
    const Eigen::Vector3d z = -c.normalized();
    const Eigen::Vector3d x = Eigen::Vector3d::UnitY().cross(z).normalized();
    Eigen::Matrix3d Rwc;
    Rwc << x, z.cross(x), z;
    const Eigen::Quaterniond q(Eigen::Matrix3d(Rwc.transpose()));
    io::ColmapImage im;
    im.id = i + 1;
    im.camera_id = 1;
    im.qvec = {q.w(), q.x(), q.y(), q.z()};
    const Eigen::Vector3d t = -(Rwc.transpose() * c);
    im.tvec = {t.x(), t.y(), t.z()};
    im.name = i == 0 ? name0 : "frame_" + std::to_string(i) + ".png";
    im.points2d.push_back({100, 100, io::ColmapPoint2D::kInvalidPoint3D});
    m.images[im.id] = im;
    const Eigen::Quaterniond qwc(Rwc);
    traj << 0.1 * i << ' ' << c.x() << ' ' << c.y() << ' ' << c.z() << ' ' << qwc.x() << ' '
         << qwc.y() << ' ' << qwc.z() << ' ' << qwc.w() << '\n';
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int k = 0; k < points; ++k) {
    io::ColmapPoint3D p;
    p.id = k + 1;
    p.xyz = {u(rng), u(rng), u(rng)};
    p.error = 0.05 * (k % 10);
    p.track = {{1, 0}, {2, 0}};
    if (k % 3 == 0) p.track.push_back({3, 0});
    m.points3d[p.id] = p;
  }
  // Tracks name point2D 0 of each image; keep the model valid by pointing it at a point.
  io::writeColmapModel(m, dir, io::ColmapFormat::kBinary);
  return m;
}

// `undetermined`: the pipeline's flag that the focal length is not determined (the first pairs'
// self-calibration, `self_calibrated_focal_px`, failed in either case).
void writeRun(const fs::path& dir, const std::string& camera, bool undetermined, double regFrac) {
  Json j = {{"schema", "vidmap.run_record"},
            {"command", "vidmap reconstruct x -o y"},
            {"wall_ms", 1234.5},
            {"options", {{"camera", camera}}},
            {"stages",
             {{"sift", {{"wall_ms", 500.0}, {"gpu_ms", 0.0}, {"calls", 10}}},
              {"mapper.local_ba", {{"wall_ms", 200.0}, {"gpu_ms", 0.0}, {"calls", 4}}}}},
            {"counts",
             {{"frames", 40},
              {"keyframes", 10},
              {"registered_keyframes", 9},
              {"focal_undetermined", undetermined ? 1 : 0}}},
            {"metrics",
             {{"self_calibrated_focal_px", 0.0},
              {"focal_rel_uncertainty", undetermined ? 0.25 : 0.001},
              {"registered_fraction", regFrac},
              {"mean_reprojection_error_px", 0.4}}}};
  std::ofstream(dir / "run.json") << j.dump(1);
}

Json dataBlock(const std::string& page) {
  const std::string open = "<script id=\"vidmap-data\" type=\"application/json\">";
  const size_t a = page.find(open);
  EXPECT_NE(a, std::string::npos);
  const size_t b = page.find("</script>", a);
  return Json::parse(page.substr(a + open.size(), b - a - open.size()));
}

TEST(Report, PointsAreSubsampledToTheBoundAndThePageStaysSmall) {
  const fs::path d = tempDir("big");
  writeModel(d / "sparse" / "0", 12, 250000, "frame_0.png");
  writeRun(d, "SIMPLE_RADIAL", false, 1.0);
  ReportOptions o;
  const ReportData data = collectReportData(d, o);
  EXPECT_EQ(data.pointsTotal, 250000);
  EXPECT_LE(data.pointsShown, o.maxPoints);
  EXPECT_GE(data.pointsShown, o.maxPoints / 2);
  const std::string page = renderReport(data);
  // 200k points at 15 bytes in base64, three.js (~1 MB) and the rest.
  EXPECT_LT(page.size(), 7u << 20);
  const Json j = dataBlock(page);
  EXPECT_EQ(j["points_shown"].get<std::int64_t>(), data.pointsShown);
  // Track lengths: one in three points has 3 observations.
  const auto counts = j["models"][0]["track_length_hist"]["counts"];
  EXPECT_EQ(counts[0].get<int>() + counts[1].get<int>(), 250000);
  EXPECT_EQ(counts[1].get<int>(), 83334);
  ASSERT_FALSE(data.warnings.empty());
  EXPECT_NE(data.warnings.back().find("of 250000 points"), std::string::npos);
  o.maxPoints = 300000;
  EXPECT_EQ(collectReportData(d, o).pointsShown, 250000);
}

TEST(Report, WarningsNameWhatWentWrong) {
  const fs::path d = tempDir("warn");
  writeModel(d / "sparse" / "0", 6, 100, "frame_0.png");
  writeModel(d / "sparse" / "1", 4, 100, "frame_x.png");
  writeRun(d, "SIMPLE_RADIAL", true, 0.5);
  const ReportData data = collectReportData(d, {});
  std::string all;
  for (const std::string& w : data.warnings) all += w + "\n";
  EXPECT_NE(all.find("does not determine the focal length (+-25 %"), std::string::npos) << all;
  EXPECT_NE(all.find("broke into 2 models"), std::string::npos) << all;
  EXPECT_NE(all.find("only 50 % of the keyframes"), std::string::npos) << all;
  // The flag decides, not the first pairs' self-calibration (0 in both records).
  writeRun(d, "SIMPLE_RADIAL", false, 1.0);
  const ReportData known = collectReportData(d, {});
  for (const std::string& w : known.warnings) EXPECT_EQ(w.find("focal"), std::string::npos) << w;
}

TEST(Report, GroundTruthIsAlignedOntoTheModel) {
  const fs::path d = tempDir("gt");
  writeModel(d / "sparse" / "0", 15, 50, "frame_0.png");
  writeRun(d, "SIMPLE_RADIAL", false, 1.0);
  // The truth: the model's centres under a known similarity (scale 2.5, a turn, a shift).
  const Eigen::Matrix3d R = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).matrix();
  const Eigen::Vector3d t(1, -2, 0.5);
  std::ifstream in(d / "sparse" / "0" / "trajectory.txt");
  std::ofstream gt(d / "gt.txt");
  gt.precision(17);
  double ts, x, y, z, qx, qy, qz, qw;
  std::vector<Eigen::Vector3d> centres;
  while (in >> ts >> x >> y >> z >> qx >> qy >> qz >> qw) {
    const Eigen::Vector3d c = 2.5 * R * Eigen::Vector3d(x, y, z) + t;
    const Eigen::Quaterniond q(R * Eigen::Quaterniond(qw, qx, qy, qz));
    gt << ts << ' ' << c.x() << ' ' << c.y() << ' ' << c.z() << ' ' << q.x() << ' ' << q.y() << ' '
       << q.z() << ' ' << q.w() << '\n';
    centres.emplace_back(x, y, z);
  }
  gt.close();
  ReportOptions o;
  o.groundTruth = d / "gt.txt";
  const ReportData data = collectReportData(d, o);
  EXPECT_LT(data.groundTruthAteRmse, 1e-6);
  const Json j = dataBlock(renderReport(data));
  const Json& g = j["models"][0]["groundtruth"];
  EXPECT_NEAR(g["scale"].get<double>(), 2.5, 1e-6);
  ASSERT_EQ(g["trajectory"].size(), centres.size());
  for (size_t i = 0; i < centres.size(); ++i)
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(g["trajectory"][i][k + 1].get<double>(), centres[i][k], 1e-6);
}

TEST(Report, HostileNamesCannotEndTheDataBlock) {
  const fs::path d = tempDir("names");
  writeModel(d / "sparse" / "0", 5, 20, "a</script><b>.png");
  writeRun(d, "SIMPLE_RADIAL", false, 1.0);
  const std::string page = renderReport(collectReportData(d, {}));
  const Json j = dataBlock(page);
  EXPECT_EQ(j["models"][0]["cameras"][0]["name"].get<std::string>(), "a</script><b>.png");
  EXPECT_EQ(page.find("/*VIDMAP_DATA*/"), std::string::npos);
  EXPECT_EQ(page.find("<!--VIDMAP_SCRIPTS-->"), std::string::npos);
  // Offline: nothing is loaded from elsewhere.
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
}

TEST(Report, MissingInputsAreErrors) {
  const fs::path d = tempDir("missing");
  EXPECT_THROW(collectReportData(d, {}), Error);  // no run.json
  writeRun(d, "SIMPLE_RADIAL", false, 1.0);
  EXPECT_THROW(collectReportData(d, {}), Error);  // no model
  writeModel(d / "sparse" / "0", 5, 20, "f.png");
  ReportOptions o;
  o.maxPoints = 0;
  EXPECT_THROW(collectReportData(d, o), Error);
  o.maxPoints = 10;
  o.groundTruth = d / "nope.txt";
  EXPECT_THROW(collectReportData(d, o), Error);
  EXPECT_NO_THROW(writeReport(d, {}));
  EXPECT_TRUE(fs::exists(d / "report.html"));
}

}  // namespace
}  // namespace vidmap::report
