// Selection on the GPU against the CPU backend (docs/architecture.md, KLT: the tracker): the
// lambda_min map, its maximum, the picks after the suppression and the capacity cut, with and
// without alive tracks; and the whole Tracker on a CUDA backend against the CPU Tracker,
// with the resident bytes equal to the device layer's live bytes. Labelled gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

#include "vidmap/klt/cpu_backend.h"
#include "vidmap/klt/cuda_test_util.h"
#include "vidmap/klt/tracker.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace vidmap::klt {
namespace {

using cudatest::expectAgree;
using cudatest::expectFloatsAgree;

struct Selection {
  std::vector<float> eig;
  float max = 0;
  SelectCounts counts;
  std::vector<TrackRecord> picks;
};

Selection runSelect(Backend& b, const GrayImage& img, const std::vector<TrackRecord>& alive) {
  Selection s;
  b.uploadGray(0, img.view());
  b.buildPyramid(0);
  b.uploadSeeds(alive.data(), static_cast<int>(alive.size()));
  b.eigenMap(0);
  s.max = b.eigenMax();
  s.counts = b.select(static_cast<int>(alive.size()));
  s.picks.resize(s.counts.appended);
  b.readRecords(RecordBuffer::kSeeds, static_cast<int>(alive.size()), s.counts.appended,
                s.picks.data());
  s.eig.resize(static_cast<std::size_t>(img.width()) * img.height());
  b.readEigenMap(s.eig.data());
  return s;
}

// The picks sorted strongest first (pickStronger order on score, then position).
std::vector<TrackRecord> strongest(std::vector<TrackRecord> p, std::size_t n) {
  std::sort(p.begin(), p.end(), [](const TrackRecord& a, const TrackRecord& b) {
    return std::tie(b.measure, a.y, a.x) < std::tie(a.measure, b.y, b.x);
  });
  if (p.size() > n) p.resize(n);
  return p;
}

void compareSelection(const std::string& name, const GrayImage& img, const Options& o,
                      const std::vector<TrackRecord>& alive) {
  gpu::Context ctx;
  CpuBackend cpu(img.width(), img.height(), o);
  auto gpu = makeCudaBackend(ctx, img.width(), img.height(), o);
  const Selection a = runSelect(cpu, img, alive), b = runSelect(*gpu, img, alive);
  std::printf("[select] %-36s max %.6g / %.6g  selected %d / %d  appended %d / %d\n", name.c_str(),
              a.max, b.max, a.counts.selected, b.counts.selected, a.counts.appended,
              b.counts.appended);
  expectFloatsAgree(name + " lambda_min map", a.eig, b.eig);
  if (cudatest::kBitExact) {
    EXPECT_EQ(a.max, b.max) << name;
    EXPECT_EQ(a.counts.selected, b.counts.selected) << name;
    EXPECT_EQ(a.counts.appended, b.counts.appended) << name;
    if (a.counts.appended == b.counts.appended) expectAgree(name + " picks", a.picks, b.picks);
  } else {
    EXPECT_NEAR(a.max, b.max, 1e-5 * a.max) << name;
    // The 512 strongest picks are the same points.
    const auto sa = strongest(a.picks, 512), sb = strongest(b.picks, 512);
    std::set<std::pair<float, float>> gpuSet;
    for (const auto& p : b.picks) gpuSet.insert({p.x, p.y});
    int found = 0;
    for (const auto& p : sa) found += gpuSet.count({p.x, p.y}) > 0;
    std::printf("[select] %-36s %d of the %zu strongest CPU picks are GPU picks\n", name.c_str(),
                found, sa.size());
    EXPECT_EQ(found, static_cast<int>(sa.size())) << name;
  }
}

TEST(CudaSelect, TexturedScenes) {
  VIDMAP_SKIP_WITHOUT_GPU();
  compareSelection("textured 640", synth::makeTexturedScene({}), optionsFor(640), {});
  synth::TexturedSceneOptions so;
  so.width = 1280;
  so.height = 720;
  compareSelection("textured 1280", synth::makeTexturedScene(so), optionsFor(1280), {});
}

TEST(CudaSelect, CheckerboardAndFlat) {
  VIDMAP_SKIP_WITHOUT_GPU();
  compareSelection("checkerboard", synth::makeCheckerboard(320, 200, 40, 4, 3, 80, 40),
                   optionsFor(320), {});
  compareSelection("flat", synth::makeFlat(320, 200), optionsFor(320), {});
}

TEST(CudaSelect, WithAliveTracksAndShortCapacity) {
  VIDMAP_SKIP_WITHOUT_GPU();
  const GrayImage img = synth::makeTexturedScene({});
  std::vector<TrackRecord> alive;
  for (auto [x, y] : synth::gridPoints(640, 360, 20, 11, 30, 30))
    alive.push_back(seedRecord(x + 0.37f, y - 0.21f, 0.0f));
  Options o = optionsFor(640);
  compareSelection("220 alive tracks", img, o, alive);
  o.capacity = 500;  // fewer than the picks: the strongest 280 are appended in cell order
  compareSelection("220 alive, capacity 500", img, o, alive);
  o.capacity = 220;  // no room
  compareSelection("220 alive, capacity 220", img, o, alive);
}

// The Tracker on the CUDA backend against the Tracker on the CPU backend: six pushes of a
// moving textured scene with keyframes, and the resident bytes after each push.
TEST(CudaTracker, SequenceEqualsCpuAndMemoryIsAccounted) {
  VIDMAP_SKIP_WITHOUT_GPU();
  gpu::Context ctx;
  const GrayImage base = synth::makeTexturedScene({});
  const Options o = optionsFor(640);
  for (CudaTrackKernel k : cudatest::trackKernels()) {
    {
      auto backend = makeCudaBackend(ctx, 640, 360, o, {k});
      EXPECT_EQ(ctx.memory().liveBytes(), static_cast<std::int64_t>(backend->residentBytes()));
      Tracker gpuTracker(640, 360, o, std::move(backend));
      Tracker cpuTracker(640, 360, o);
      for (int f = 0; f < 6; ++f) {
        const GrayImage frame = synth::warpImage(base, synth::translation(2.3 * f, -1.4 * f));
        const bool keyframe = f % 3 == 0;
        const bool sameTracks = cpuTracker.tracks().id == gpuTracker.tracks().id;
        const StepReport rc = cpuTracker.push(frame, keyframe);
        const StepReport rg = gpuTracker.push(frame, keyframe);
        EXPECT_EQ(ctx.memory().liveBytes(), static_cast<std::int64_t>(gpuTracker.residentBytes()));
        std::printf("[tracker %s] push %d: in %d/%d alive %d/%d selected %d/%d appended %d/%d\n",
                    cudaTrackKernelName(k), f, rc.tracksIn, rg.tracksIn, rc.alive, rg.alive,
                    rc.selected, rg.selected, rc.appended, rg.appended);
        if (cudatest::kBitExact) {
          ASSERT_EQ(rc.alive, rg.alive);
          ASSERT_EQ(rc.ends, rg.ends);
          const TrackTable &a = cpuTracker.tracks(), &b = gpuTracker.tracks();
          ASSERT_EQ(a.id, b.id);
          EXPECT_EQ(a.x, b.x);
          EXPECT_EQ(a.y, b.y);
          EXPECT_EQ(a.measure, b.measure);
        } else if (sameTracks && !cpuTracker.lastChecked().empty()) {
          // With FMA a weak pick can differ, and then the tables differ in membership; the
          // records are compared while the tables hold the same tracks.
          expectAgree("tracker push " + std::to_string(f), cpuTracker.lastChecked(),
                      gpuTracker.lastChecked());
        }
      }
    }
    EXPECT_EQ(ctx.memory().liveBytes(), 0);
  }
}

}  // namespace
}  // namespace vidmap::klt
