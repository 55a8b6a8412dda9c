// Fusion's per-pixel phase on CUDA against the CPU (label gpu; skipped without a device):
// the same function (fuMatchPixel) in double precision, compiled without FMA contraction, so
// the clouds are equal point for point, bit for bit, whatever the residency.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "vidmap/core/error.h"
#include "vidmap/gpu/device.h"
#include "vidmap/mvs/fusion.h"
#include "vidmap/mvs/fusion_cuda.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/mvs/testing/synthetic.h"

namespace vidmap::mvs {
namespace {

#define REQUIRE_DEVICE() \
  if (gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device"

void expectSameCloud(const std::vector<io::PlyPoint>& a, const std::vector<io::PlyPoint>& b,
                     const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].xyz, b[i].xyz) << what << ", point " << i;
    ASSERT_EQ(a[i].normal, b[i].normal) << what << ", point " << i;
    ASSERT_EQ(a[i].rgb, b[i].rgb) << what << ", point " << i;
  }
}

// PatchMatch's maps (photometric: noisy, many tests near their thresholds; geometric), both
// clusterings and two cluster sizes: the CUDA phase gives the CPU's points in the CPU's order.
TEST(FusionCuda, EqualsTheCpuFusion) {
  REQUIRE_DEVICE();
  testing::SyntheticMvs s = testing::makeFacadeMvs(128, 96, 5, 1.2);
  Workspace ws = testing::workspaceOf(s);
  PatchMatchOptions o;
  o.photometricIterations = 3;
  o.geometricIterations = 1;
  o.backend = Backend::kCuda;
  const PatchMatchResult r = runPatchMatch(ws, o);
  for (int pass = 0; pass < 2; ++pass)
    for (int minPixels : {2, 3})
      for (int clustering : {0, 1}) {
        FusionOptions fo;
        fo.minPixels = minPixels;
        fo.parallelClusteringThreads = clustering;
        fo.backend = Backend::kCpu;
        FusionStats sc, sg;
        const std::vector<DepthMap>& maps = pass ? r.geometric : r.photometric;
        const auto cpu = fuseDepthMaps(ws, maps, fo, &sc);
        fo.backend = Backend::kCuda;
        const auto gpu = fuseDepthMaps(ws, maps, fo, &sg);
        ASSERT_EQ(sc.backend, "cpu");
        ASSERT_EQ(sg.backend, "cuda");
        std::printf("pass %d, min pixels %d, clustering %d: %zu points, %lld records\n", pass,
                    minPixels, clustering, cpu.size(), (long long)sc.records);
        ASSERT_GT(cpu.size(), 1000u);
        expectSameCloud(cpu, gpu, pass ? "geometric" : "photometric");
        EXPECT_EQ(sc.records, sg.records);
        EXPECT_EQ(sc.validPixels, sg.validPixels);
        EXPECT_EQ(sc.fusedPixels, sg.fusedPixels);
        EXPECT_EQ(sg.devicePeakBytes, sg.planPeakBytes);
      }
}

// A budget that forces evictions gives the same cloud; the device peak equals the plan's and
// stays within the budget; a budget too small for one reference and its sources is an error.
TEST(FusionCuda, PeakEqualsPlanAndBudgetDoesNotChangeThePoints) {
  REQUIRE_DEVICE();
  testing::SyntheticMvs s = testing::makeFacadeMvs(64, 48, 6, 1.5);
  Workspace ws = testing::workspaceOf(s);
  PatchMatchOptions o;
  o.photometricIterations = 3;
  o.geometricIterations = 1;
  o.backend = Backend::kCuda;
  const PatchMatchResult r = runPatchMatch(ws, o);
  Workspace small = ws;  // two sources each: three views per reference
  for (View& v : small.views)
    if (v.sources.size() > 2) v.sources.erase(v.sources.begin() + 2, v.sources.end());
  FusionOptions fo;
  fo.minPixels = 2;
  fo.backend = Backend::kCuda;
  const std::int64_t px = 64 * 48;
  const std::int64_t working = FusionCuda::workingBytes(px, 2);
  fo.maxGpuMemory = working + 3 * FusionCuda::viewBytes(px) - 1;
  EXPECT_THROW(fuseDepthMaps(small, r.final(), fo), Error);
  fo.maxGpuMemory = working + 4 * FusionCuda::viewBytes(px);
  FusionStats tight, loose, cpuStats;
  const auto a = fuseDepthMaps(small, r.final(), fo, &tight);
  fo.maxGpuMemory = 0;
  const auto b = fuseDepthMaps(small, r.final(), fo, &loose);
  fo.backend = Backend::kCpu;
  const auto c = fuseDepthMaps(small, r.final(), fo, &cpuStats);
  ASSERT_GT(c.size(), 100u);
  EXPECT_EQ(tight.devicePeakBytes, tight.planPeakBytes);
  EXPECT_LE(tight.devicePeakBytes, working + 4 * FusionCuda::viewBytes(px));
  EXPECT_EQ(loose.devicePeakBytes, loose.planPeakBytes);
  EXPECT_EQ(loose.uploads, 6);
  EXPECT_GE(tight.uploads, loose.uploads);
  EXPECT_LT(tight.devicePeakBytes, loose.devicePeakBytes);  // evictions: the budget bounds it
  expectSameCloud(a, c, "tight budget");
  expectSameCloud(b, c, "loose budget");
}

}  // namespace
}  // namespace vidmap::mvs
