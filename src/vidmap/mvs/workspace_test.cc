// The dense input: undistortion, source selection and depth ranges from the sparse model, and
// the bad inputs (one image, missing images, a view with no source, nothing to do).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/io/image_file.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/mvs/testing/synthetic.h"
#include "vidmap/mvs/workspace.h"

namespace vidmap::mvs {
namespace {

namespace fs = std::filesystem;

TEST(Workspace, SourcesAndDepthRangeFromTheSparseModel) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(96, 72, 5, 1.2);
  Workspace ws = testing::workspaceOf(s);
  ASSERT_EQ(ws.views.size(), 5u);
  EXPECT_TRUE(ws.skipped.empty());
  for (size_t i = 0; i < ws.views.size(); ++i) {
    const View& v = ws.views[i];
    EXPECT_EQ(v.sources.size(), 4u);
    // A near view on the row shares the most points at 1 degree or more: it comes first.
    int first = v.sources.front();
    EXPECT_LE(std::abs(first - static_cast<int>(i)), 2) << "view " << i;
    // The range holds the true depths of the view's pixels (all but a few percent).
    std::vector<float> d;
    for (float z : s.depth[i].vec())
      if (z > 0) d.push_back(z);
    std::sort(d.begin(), d.end());
    EXPECT_LE(v.depthMin, d[d.size() / 50]);
    EXPECT_GE(v.depthMax, d[d.size() * 49 / 50]);
    EXPECT_GT(v.depthMin, 0);
  }
}

TEST(Workspace, ScalesDownWithTheIntrinsics) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(96, 72, 2, 1.0);
  WorkspaceOptions o;
  o.maxImageSize = 48;
  Workspace ws = testing::workspaceOf(s, o);
  EXPECT_EQ(ws.views[0].width, 48);
  EXPECT_EQ(ws.views[0].height, 36);
  EXPECT_NEAR(ws.views[0].fx, s.cameras[0].fx / 2, 1e-9);
  EXPECT_NEAR(ws.views[0].cx, (s.cameras[0].cx + 0.5) / 2 - 0.5, 1e-9);
}

// A dot drawn where a RADIAL camera images a ray lands, after undistortion, where the
// pinhole camera images it.
TEST(Workspace, UndistortionMovesPointsToThePinholeImage) {
  io::ColmapCamera cam;
  cam.model = io::CameraModelId::kRadial;
  cam.width = 120, cam.height = 90;
  cam.params = {100, 60, 45, -0.2, 0.05};
  const double u = 0.45, v = -0.3;  // normalised ray
  const double r2 = u * u + v * v, s = 1 - 0.2 * r2 + 0.05 * r2 * r2;
  const double dx = 100 * u * s + 60 - 0.5, dy = 100 * v * s + 45 - 0.5;  // integer-centre px
  RgbImage im(120, 90);
  for (int y = 0; y < 90; ++y)
    for (int x = 0; x < 120; ++x) {
      double d2 = (x - dx) * (x - dx) + (y - dy) * (y - dy);
      std::uint8_t g = static_cast<std::uint8_t>(255 * std::exp(-d2 / 2.0));
      im(x, y) = {g, g, g};
    }
  double fx, fy, cx, cy;
  RgbImage out = undistortImage(im, cam, &fx, &fy, &cx, &cy);
  double sw = 0, sx = 0, sy = 0;
  for (int y = 0; y < 90; ++y)
    for (int x = 0; x < 120; ++x) sw += out(x, y).r, sx += out(x, y).r * x, sy += out(x, y).r * y;
  EXPECT_NEAR(sx / sw, fx * u + cx, 0.3);
  EXPECT_NEAR(sy / sw, fy * v + cy, 0.3);
}

TEST(Workspace, OneImageIsAnError) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(32, 24, 2, 1.0);
  s.model.images.erase(2);
  s.model.points3d.clear();
  for (auto& [id, im] : s.model.images) im.points2d.clear();
  try {
    testing::workspaceOf(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at least 2"), std::string::npos) << e.what();
  }
}

TEST(Workspace, MissingImagesAreNamedBeforeAnyDecoding) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(32, 24, 3, 1.0);
  const fs::path d = testFolder("workspace_missing");
  io::writePng(d / "view_0.png", s.images.at(1));
  try {
    loadWorkspace(s.model, d, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 of 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("view_1.png"), std::string::npos) << e.what();
  }
}

// A view that shares no sparse point with the others is skipped with its reason; the rest
// run; a model where every view is skipped is an error.
TEST(Workspace, ViewWithoutSourceIsSkipped) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(48, 36, 3, 1.0);
  for (auto& [pid, p] : s.model.points3d)
    p.track.erase(std::remove_if(p.track.begin(), p.track.end(),
                                 [](const io::ColmapTrackElement& e) { return e.image_id == 3; }),
                  p.track.end());
  for (auto& p2 : s.model.images[3].points2d) p2.point3d_id = io::ColmapPoint2D::kInvalidPoint3D;
  Workspace ws = testing::workspaceOf(s);
  ASSERT_EQ(ws.skipped.size(), 1u);
  EXPECT_NE(ws.skipped[0].find("view_2.png"), std::string::npos) << ws.skipped[0];
  EXPECT_FALSE(ws.isReference[2]);
  PatchMatchOptions o;
  o.backend = Backend::kCpu;
  o.photometricIterations = 1;
  o.geometricIterations = 1;
  PatchMatchResult r = runPatchMatch(ws, o);
  EXPECT_FALSE(r.final()[0].empty());
  EXPECT_TRUE(r.final()[2].empty());
  ws.isReference.assign(3, false);
  EXPECT_THROW(runPatchMatch(ws, o), Error);
}

TEST(PatchMatchOptions, CheckNamesTheField) {
  PatchMatchOptions o;
  o.topK = 9;
  try {
    o.check();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mvs.top_k"), std::string::npos);
  }
}

}  // namespace
}  // namespace vidmap::mvs
