// The second pass of a video with an unknown camera (ReconstructOptions::rerunFocalChange) on
// real frames: TUM fr1-desk at 4 fps from its second frame, where the first pass ends at a good
// model and the second, from the first's camera, builds a wrong one (docs/benchmarks.md, "The
// second pass kept only when it explains more"). Skips when ../shared/data (or $VIDMAP_DATA) is
// absent, and under the address sanitizer (two passes of 80 keyframes: half a minute in a release
// build).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "vidmap/core/data_dir.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/pipeline/accuracy_test_util.h"
#include "vidmap/pipeline/reconstruct.h"

namespace vidmap::pipeline {
namespace {

namespace fs = std::filesystem;

// TUM's calibration of the fr1 camera (its fx; fy is 516.5), for 640 x 480 frames.
constexpr double kDeskFocal = 517.3;

// fr1-desk's rgb.txt without its first `skip` frames, paths made absolute (the 4 fps samples
// move by that many frames), in `root`; empty when the data is absent.
fs::path deskList(const fs::path& root, int skip) {
  const auto data = dataDir();
  if (!data || !fs::exists(*data / "tum-fr1-desk" / "rgb.txt")) return {};
  const fs::path desk = *data / "tum-fr1-desk";
  const fs::path list = root / ("desk_from_frame_" + std::to_string(skip) + ".txt");
  std::ifstream in(desk / "rgb.txt");
  std::ofstream out(list);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || n++ < skip) continue;
    const size_t space = line.find(' ');
    out << line.substr(0, space) << ' ' << (desk / line.substr(space + 1)).string() << '\n';
  }
  return list;
}

TEST(SecondPass, ExplainingFewerObservationsThanTheFirstItIsDiscarded) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "two passes over 80 real keyframes: too slow under the address sanitizer";
#endif
  const fs::path root = testFolder("second_pass");
  const fs::path list = deskList(root, 1);
  if (list.empty()) GTEST_SKIP() << "../shared/data/tum-fr1-desk is absent";
  const fs::path desk = *dataDir() / "tum-fr1-desk";
  ReconstructOptions o;  // the defaults: 4 fps, camera unknown, a second pass when due
  o.progress = false;
  o.device = Device::kCpu;
  io::RunRecord record;
  const fs::path out = root / "out";
  const ReconstructSummary s = reconstruct(list, out, o, record);
  std::printf("  first pass %lld observations, second %lld; focal %.1f px; %d keyframes of %d\n",
              static_cast<long long>(s.firstPassObservations),
              static_cast<long long>(s.secondPassObservations),
              s.models.empty() ? 0.0 : s.models[0].cameraParams[0], s.registered, s.keyframes);
  ASSERT_GT(s.rerunFocalPx, 0) << "no second pass ran: the input no longer tests it";
  EXPECT_TRUE(s.rerunDiscarded);
  EXPECT_LT(s.secondPassObservations, s.firstPassObservations);
  // The record is the first pass's, with the second's time and outcome, in memory and on disk.
  EXPECT_EQ(record.counts().at("rerun_discarded"), 1);
  EXPECT_EQ(record.counts().at("keyframes"), s.keyframes);
  EXPECT_EQ(record.counts().at("rerun_second_pass_observations"), s.secondPassObservations);
  EXPECT_GT(record.metrics().at("rerun_second_pass_seconds"), 0.0);
  std::ifstream in(out / "run.json");
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"rerun_discarded\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"rerun_second_pass_seconds\""), std::string::npos);
  // What is written is the first pass's model, whole, and it is right.
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_GE(s.registered, s.keyframes - 2);
  EXPECT_EQ(s.models[0].observations, s.firstPassObservations);
  EXPECT_EQ(io::readColmapModel(out / "sparse" / "0").points3d.size(),
            static_cast<size_t>(s.models[0].points));
  EXPECT_NEAR(s.models[0].cameraParams[0], kDeskFocal, 0.15 * kDeskFocal);
  // The kept first pass carries its own focal check: a model of views that turn determines it.
  ASSERT_TRUE(s.models[0].focal.ran);
  EXPECT_FALSE(s.focalUndetermined);
  const Accuracy a = trajectoryAccuracy(out / "sparse" / "0", list, desk / "groundtruth.txt", 0.02);
  std::printf("  ATE %.4f of the truth's spread\n", a.ateRel);
  EXPECT_GE(a.evaluated, s.keyframes - 2);
  EXPECT_LT(a.ateRel, 0.1);
}

// From its 4th frame, fr1-desk's first pass lets the focal length and k1 run away together
// (733 -> 32346 px, k1 1300 before the mapper's bound on a camera, MapperOptions::
// maxDistortion): held there, and the second pass from the held camera's focal length is right.
TEST(SecondPass, AfterARunawayCameraHeldTheModelIsRight) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "two passes over 80 real keyframes: too slow under the address sanitizer";
#endif
  const fs::path root = testFolder("second_pass_runaway");
  const fs::path list = deskList(root, 3);
  if (list.empty()) GTEST_SKIP() << "../shared/data/tum-fr1-desk is absent";
  ReconstructOptions o;
  o.progress = false;
  o.device = Device::kCpu;
  io::RunRecord record;
  const fs::path out = root / "out";
  const ReconstructSummary s = reconstruct(list, out, o, record);
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_GE(s.registered, s.keyframes - 2);
  std::printf("  focal %.1f px, k %.4f; first pass %lld observations, second %lld\n",
              s.models[0].cameraParams[0], s.models[0].cameraParams[3],
              static_cast<long long>(s.firstPassObservations),
              static_cast<long long>(s.secondPassObservations));
  EXPECT_NEAR(s.models[0].cameraParams[0], kDeskFocal, 0.15 * kDeskFocal);
  EXPECT_LT(std::abs(s.models[0].cameraParams[3]), 0.3);
  const Accuracy a = trajectoryAccuracy(out / "sparse" / "0", list,
                                        *dataDir() / "tum-fr1-desk" / "groundtruth.txt", 0.02);
  std::printf("  ATE %.4f of the truth's spread\n", a.ateRel);
  EXPECT_GE(a.evaluated, s.keyframes - 2);
  EXPECT_LT(a.ateRel, 0.1);
}

}  // namespace
}  // namespace vidmap::pipeline
