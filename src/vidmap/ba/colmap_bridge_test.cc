#include "vidmap/ba/colmap_bridge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "vidmap/ba/solver.h"
#include "vidmap/ba/synthetic.h"
#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

namespace vidmap::ba {
namespace {

// A COLMAP model holding a synthetic problem (quaternion poses, one shared camera).
io::ColmapModel toColmap(const Problem& p) {
  io::ColmapModel m;
  for (size_t c = 0; c < p.cameras.size(); ++c) {
    io::ColmapCamera cam;
    cam.id = static_cast<std::uint32_t>(c + 1);
    cam.model = io::CameraModelId::kSimpleRadial;
    cam.width = 640, cam.height = 480;
    cam.params.assign(p.cameras[c].params.begin(), p.cameras[c].params.begin() + 4);
    m.cameras[cam.id] = cam;
  }
  for (size_t i = 0; i < p.images.size(); ++i) {
    io::ColmapImage im;
    im.id = static_cast<std::uint32_t>(10 + i);
    im.qvec = p.images[i].rotation;
    im.tvec = p.images[i].translation;
    im.camera_id = static_cast<std::uint32_t>(p.images[i].camera + 1);
    im.name = "frame" + std::to_string(i) + ".png";
    m.images[im.id] = im;
  }
  for (size_t j = 0; j < p.points.size(); ++j) {
    io::ColmapPoint3D pt;
    pt.id = 100 + j;
    pt.xyz = p.points[j].xyz;
    m.points3d[pt.id] = pt;
  }
  for (const auto& o : p.observations) {
    auto& im = m.images[static_cast<std::uint32_t>(10 + o.image)];
    io::ColmapPoint2D xy;
    xy.x = o.x, xy.y = o.y, xy.point3d_id = 100 + o.point;
    m.points3d[xy.point3d_id].track.push_back(
        {im.id, static_cast<std::uint32_t>(im.points2d.size())});
    im.points2d.push_back(xy);
  }
  return m;
}

TEST(ColmapBridge, SolvesAColmapModelAndWritesItBack) {
  SyntheticOptions so;
  so.rotation = RotationType::kQuaternion;
  so.numImages = 6;
  so.numPoints = 150;
  const SyntheticScene scene = makeSyntheticScene(so);
  io::ColmapModel model = toColmap(scene.initial);
  const auto dir = testFolder("ba_colmap") / "model";
  std::filesystem::remove_all(dir);
  io::writeColmapModel(model, dir, io::ColmapFormat::kBinary);
  io::ColmapModel read = io::readColmapModel(dir);
  std::filesystem::remove_all(dir);
  ColmapProblem cp = problemFromColmap(read);
  EXPECT_EQ(cp.problem.model, CameraModel::kSimpleRadial);
  EXPECT_EQ(cp.problem.observations.size(), scene.initial.observations.size());
  const double before = rmsReprojectionError(cp.problem);
  const Summary s = solve(cp.problem, Options{});
  ASSERT_TRUE(s.isSolutionUsable());
  updateColmap(cp, read);
  const ColmapProblem again = problemFromColmap(read);
  const double after = rmsReprojectionError(again.problem);
  EXPECT_GT(before, 5.0 * after);
  // The noise floor, less the share of the 2m residual degrees of freedom that the
  // 6 * 6 + 4 + 3 * 150 - 7 free parameters absorb.
  const double m2 = 2.0 * static_cast<double>(cp.problem.observations.size());
  const double floor = std::sqrt(2.0) * so.noiseSigma * std::sqrt((m2 - 483.0) / m2);
  EXPECT_NEAR(after, floor, 0.05 * floor);
}

TEST(ColmapBridge, UnsupportedOrMixedModelsAreErrors) {
  SyntheticOptions so;
  so.rotation = RotationType::kQuaternion;
  so.sharedIntrinsics = false;
  so.numImages = 3;
  so.numPoints = 20;
  io::ColmapModel m = toColmap(makeSyntheticScene(so).initial);
  m.cameras.begin()->second.model = io::CameraModelId::kOpenCV;
  m.cameras.begin()->second.params.resize(8, 0.0);
  EXPECT_THROW(problemFromColmap(m), Error);
  m = toColmap(makeSyntheticScene(so).initial);
  m.cameras.rbegin()->second.model = io::CameraModelId::kSimplePinhole;
  m.cameras.rbegin()->second.params.resize(3);
  EXPECT_THROW(problemFromColmap(m), Error);
}

}  // namespace
}  // namespace vidmap::ba
