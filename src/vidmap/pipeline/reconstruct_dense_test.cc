// `reconstruct` with the dense stage (options.dense) on a synthetic video with known geometry:
// the fused cloud, mapped into the truth's frame by the similarity that aligns the sparse
// model's cameras to the true ones, lies on the true surfaces (synth::Scene's exact distance
// to its faces); the dense files and the run record's stage times and counts are written;
// a dense stage that cannot run fails the whole run with nothing written. The field list
// gives the dense options their CLI and Python names.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <cstdio>

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/ply.h"
#include "vidmap/mvs/depth_map_io.h"
#include "vidmap/pipeline/reconstruct.h"
#include "vidmap/pipeline/reconstruct_options_fields.h"
#include "vidmap/sfm/model_trajectory.h"
#include "vidmap/sfm/trajectory_eval.h"
#include "vidmap/synth/scene3d.h"
#include "vidmap/synth/sequence.h"

namespace vidmap::pipeline {
namespace {

namespace fs = std::filesystem;

fs::path root() { return testCacheFolder("reconstruct_dense"); }

synth::SequenceOptions sequenceOptions() {
  synth::SequenceOptions o;
  o.scene = "room";
  o.path = "orbit";
  o.frames = 12;
  o.fps = 4;
  o.width = 320;
  o.height = 240;
  return o;
}

fs::path sequence() {
  const fs::path dir = root() / "seq";
  if (!fs::exists(dir / "rgb.txt")) synth::writeSequence(dir, sequenceOptions());
  return dir;
}

// Small and quick on 2 cores (the CPU twin, about 14 s of CPU): 128 x 96 depth maps, 4
// sources, 4 + 1 iterations.
ReconstructOptions denseOptions() {
  ReconstructOptions o;
  o.progress = false;
  o.width = 0;
  o.device = Device::kCpu;
  o.autoFirstOctave = false;
  o.frontend.sift.firstOctave = 0;
  o.frontend.sift.maxFeatures = 1000;
  // The true camera: a self-calibrated focal length 1 percent off bends the sparse model, and
  // the far wall's points with it (4 percent of their distance; measured: docs/benchmarks.md).
  const synth::SequenceOptions so = sequenceOptions();
  const synth::PinholeCamera c = synth::PinholeCamera::fromHfov(so.width, so.height, so.hfovDeg);
  char camera[160];
  std::snprintf(camera, sizeof camera, "PINHOLE %.12g,%.12g,%.12g,%.12g", c.fx, c.fy, c.cx + 0.5,
                c.cy + 0.5);
  o.camera = sfm::CameraSpec::parse(camera);
  o.dense = true;
  o.mvs.workspace.maxImageSize = 128;
  o.mvs.workspace.maxSources = 4;
  o.mvs.patchMatch.photometricIterations = 4;
  o.mvs.patchMatch.geometricIterations = 1;
  return o;
}

std::string fileText(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST(ReconstructDense, FusedCloudLiesOnTheTrueSurfaces) {
  const fs::path seq = sequence();
  const fs::path out = root() / "out";
  io::RunRecord record;
  const ReconstructSummary s = reconstruct(seq / "rgb.txt", out, denseOptions(), record);
  ASSERT_EQ(s.models.size(), 1u);
  ASSERT_TRUE(s.dense);
  EXPECT_EQ(s.denseModel, 0);
  EXPECT_EQ(s.denseSummary.views, s.models[0].images);
  EXPECT_GE(s.denseSummary.references, s.denseSummary.views - 1);
  EXPECT_EQ(s.denseSummary.backend, "cpu");

  // The files: the cloud, the maps of every reference (COLMAP's layout, at 128 x 96), the
  // record's stages and counts.
  const std::vector<io::PlyPoint> cloud = io::readPly(out / "dense" / "fused.ply");
  EXPECT_EQ(static_cast<std::int64_t>(cloud.size()), s.denseSummary.points);
  const io::ColmapModel model = io::readColmapModel(out / "sparse" / "0");
  int maps = 0;
  for (const auto& [id, im] : model.images) {
    const fs::path d = out / "dense" / "stereo" / "depth_maps" / (im.name + ".geometric.bin");
    if (!fs::exists(d)) continue;
    ++maps;
    const mvs::DenseArray a = mvs::readDenseArray(d);
    EXPECT_EQ(a.width, 128);
    EXPECT_EQ(a.height, 96);
    EXPECT_TRUE(
        fs::exists(out / "dense" / "stereo" / "normal_maps" / (im.name + ".geometric.bin")));
  }
  EXPECT_EQ(maps, s.denseSummary.references);
  EXPECT_EQ(record.counts().at("mvs_fused_points"), s.denseSummary.points);
  EXPECT_EQ(record.counts().at("mvs_references"), s.denseSummary.references);
  const std::string json = fileText(out / "run.json");
  for (const char* stage : {"\"mvs_photometric\"", "\"mvs_geometric\"", "\"mvs_fusion\""})
    EXPECT_NE(json.find(stage), std::string::npos) << stage;

  // Into the truth's frame: the similarity of the keyframes' poses (sfm::alignByOrientations).
  const auto est = sfm::modelTrajectory(model, sfm::readImageListTimes(seq / "rgb.txt"));
  const auto gt = sfm::readTumTrajectory(seq / "groundtruth.txt");
  const auto pairs = sfm::associate(est, gt, 1e-3);
  ASSERT_GE(pairs.size(), 8u);
  const sfm::Sim3 sim = sfm::alignByOrientations(pairs);
  double meanDepth = 0;  // of the cloud from the nearest true camera: the scene's scale
  const synth::Scene scene = synth::makeScene("room", sequenceOptions().seed);
  std::vector<double> dist;
  for (const io::PlyPoint& p : cloud) {
    const Eigen::Vector3d X = sim.apply(Eigen::Vector3d(p.xyz[0], p.xyz[1], p.xyz[2]));
    dist.push_back(scene.distanceToSurface(X));
    double nearest = 1e30;
    for (const auto& g : gt) nearest = std::min(nearest, (g.c - X).norm());
    meanDepth += nearest;
  }
  ASSERT_GT(cloud.size(), 3000u);  // 128 x 96 maps of 12 views: 5289 points
  meanDepth /= static_cast<double>(cloud.size());
  std::sort(dist.begin(), dist.end());
  auto within = [&](double tau) {
    return double(std::upper_bound(dist.begin(), dist.end(), tau) - dist.begin()) / dist.size();
  };
  const double median = dist[dist.size() / 2];
  std::printf(
      "  %zu points, mean distance %.3f m; median distance to the truth %.4f m (%.3f%%), "
      "within 1%% / 2%% / 5%% of the distance: %.3f / %.3f / %.3f\n",
      cloud.size(), meanDepth, median, 100 * median / meanDepth, within(0.01 * meanDepth),
      within(0.02 * meanDepth), within(0.05 * meanDepth));
  EXPECT_LT(median, 0.005 * meanDepth);  // measured 0.27%, 0.957 and 1.000
  EXPECT_GT(within(0.02 * meanDepth), 0.92);
  EXPECT_GT(within(0.05 * meanDepth), 0.99);
}

TEST(ReconstructDense, AFailedDenseStageWritesNothing) {
  const fs::path seq = sequence();
  const fs::path out = root() / "out_fail";
  ReconstructOptions o = denseOptions();
  // A minimum of shared points no pair of views reaches: every view is skipped.
  o.mvs.workspace.minSharedPoints = 1 << 20;
  io::RunRecord record;
  try {
    reconstruct(seq / "rgb.txt", out, o, record);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("dense stage on sparse/0"), std::string::npos) << m;
    EXPECT_NE(m.find("every view was skipped"), std::string::npos) << m;
    EXPECT_NE(m.find("nothing was written"), std::string::npos) << m;
  }
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(root()))
    EXPECT_EQ(e.path().filename().string().find(".out_fail"), std::string::npos) << e.path();
}

TEST(ReconstructDense, OptionsHaveNamesAndRanges) {
  ReconstructOptions o;
  std::vector<std::string> paths;
  forEachReconstructField(o, [&](const FieldInfo& f, auto&& value) {
    paths.push_back(f.path());
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, TextField>) {
      if (f.path() == "mvs.max_gpu_memory") {
        EXPECT_EQ(value.get(), "0");
        value.set("1.5G");
        EXPECT_EQ(o.mvs.patchMatch.maxGpuMemory, std::int64_t(3) << 29);
        EXPECT_EQ(value.get(), "1536M");
        EXPECT_THROW(value.set("4X"), Error);
        EXPECT_THROW(value.set("-1G"), Error);
        EXPECT_THROW(value.set("lots"), Error);
      }
    }
  });
  for (const char* p : {"dense", "mvs.max_image_size", "mvs.sources", "mvs.photometric_iterations",
                        "mvs.geometric_iterations", "mvs.max_gpu_memory", "mvs.fusion_min_pixels"})
    EXPECT_NE(std::find(paths.begin(), paths.end(), p), paths.end()) << p;
  // The dense options are checked with the others, whether or not the stage runs.
  ReconstructOptions bad;
  bad.mvs.patchMatch.topK = 0;
  EXPECT_THROW(bad.check(), Error);
}

}  // namespace
}  // namespace vidmap::pipeline
