// Real frames with ground truth: the five Middlebury flow pairs (../shared/data/middlebury-
// flow). vidmap tracks its own selection of frame10 into frame11; the endpoint error of the
// kept tracks against the true flow (read with io::readFlo) must stay small. Skips when the
// data is absent. The OpenCV comparison on the same pairs is bench/klt_opencv_compare.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vidmap/core/data_dir.h"
#include "vidmap/io/flow_file.h"
#include "vidmap/io/image_file.h"
#include "vidmap/klt/cpu_backend.h"

namespace vidmap::klt {
namespace {

TEST(Middlebury, EndpointErrorAgainstTheTrueFlow) {
  const auto root = dataPath("middlebury-flow");
  if (!root) GTEST_SKIP() << "../shared/data/middlebury-flow is absent";
  for (const char* name : {"Dimetrodon", "Grove2", "Hydrangea", "RubberWhale", "Venus"}) {
    const GrayImage I = io::readGray(*root / "frames" / name / "frame10.png");
    const GrayImage J = io::readGray(*root / "frames" / name / "frame11.png");
    const io::FlowField flow = io::readFlo(*root / "gt" / name / "flow10.flo");
    ASSERT_EQ(flow.width(), I.width());
    CpuBackend b(I.width(), I.height(), optionsFor(I.width()));
    b.uploadGray(0, I.view());
    b.uploadGray(1, J.view());
    b.buildPyramid(0);
    b.buildPyramid(1);
    b.eigenMap(0);
    const int n = b.select(0).appended;
    std::vector<TrackRecord> seeds(n), checked(n);
    b.readRecords(RecordBuffer::kSeeds, 0, n, seeds.data());
    b.track(Direction::kForward, 0, 1, 0, n);
    b.track(Direction::kBackward, 0, 1, 0, n);
    b.check(0, n);
    b.readRecords(RecordBuffer::kChecked, 0, n, checked.data());
    std::vector<double> epe;
    int known = 0;
    for (int i = 0; i < n; ++i) {
      const int x = static_cast<int>(seeds[i].x), y = static_cast<int>(seeds[i].y);
      if (!flow.known(x, y)) continue;
      ++known;
      if (!statusAlive(checked[i].status)) continue;
      epe.push_back(std::hypot(checked[i].x - seeds[i].x - flow.u(x, y),
                               checked[i].y - seeds[i].y - flow.v(x, y)));
    }
    ASSERT_GT(known, 200) << name;
    std::sort(epe.begin(), epe.end());
    const double median = epe[epe.size() / 2], p95 = epe[epe.size() * 95 / 100];
    std::printf("%-12s %4d points, kept %5.1f%%, EPE median %.3f px, p95 %.3f px\n", name, known,
                100.0 * epe.size() / known, median, p95);
    EXPECT_GE(epe.size(), 0.7 * known) << name;
    EXPECT_LT(median, 0.25) << name;
  }
}

}  // namespace
}  // namespace vidmap::klt
