// The CUDA backend against the CPU backend on the synthetic cases of tracking_test.cc
// (translations, 1280 px, rotations, scale, brightness, failure cases, period-8 texture), both
// tracking kernels (one thread per track, one warp per track), with chunk invariance. Labelled gpu;
// skips without a device.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/klt/cpu_backend.h"
#include "vidmap/klt/cuda_test_util.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace vidmap::klt {
namespace {

[[maybe_unused]] ::testing::Environment* const kPooled =
    ::testing::AddGlobalTestEnvironment(new cudatest::PooledAgreementCheck);

using cudatest::expectAgree;
using cudatest::expectPyramidsAgree;
using cudatest::Pair;
using cudatest::Points;
using cudatest::runPair;

const GrayImage& scene640() {
  static const GrayImage img = synth::makeTexturedScene({});
  return img;
}

const GrayImage& scene1280() {
  static const GrayImage img = [] {
    synth::TexturedSceneOptions so;
    so.width = 1280;
    so.height = 720;
    return synth::makeTexturedScene(so);
  }();
  return img;
}

// The design's 40 points, and a dense grid of 1,024 for the statistics of the FMA build.
Points points40(int w = 640, int h = 360) {
  return synth::gridPoints(w, h, 8, 5, w / 6.4, h / 4.5);
}
Points points1024(int w = 640, int h = 360) { return synth::gridPoints(w, h, 32, 32, 20, 20); }

// CPU and both CUDA kernels on one frame pair; every record and level compared.
void compareCase(const std::string& name, const GrayImage& I, const GrayImage& J, const Options& o,
                 const Points& pts) {
  gpu::Context ctx;
  CpuBackend cpu(I.width(), I.height(), o);
  const Pair ref = runPair(cpu, I, J, pts);
  for (CudaTrackKernel k : cudatest::trackKernels()) {
    auto gpuBackend = makeCudaBackend(ctx, I.width(), I.height(), o, {k});
    const Pair got = runPair(*gpuBackend, I, J, pts);
    const std::string tag = name + " [" + cudaTrackKernelName(k) + "]";
    expectAgree(tag + " forward", ref.forward, got.forward);
    expectAgree(tag + " backward", ref.backward, got.backward);
    expectAgree(tag + " checked", ref.checked, got.checked);
    if (k == CudaTrackKernel::kLane) expectPyramidsAgree(name, cpu, *gpuBackend);
  }
}

struct Shift {
  double dx, dy;
};

class CudaTranslation : public ::testing::TestWithParam<Shift> {};

TEST_P(CudaTranslation, EqualsCpu) {
  VIDMAP_SKIP_WITHOUT_GPU();
  const Shift s = GetParam();
  const GrayImage J = synth::warpImage(scene640(), synth::translation(s.dx, s.dy));
  char name[64];
  std::snprintf(name, sizeof name, "shift (%.1f, %.1f)", s.dx, s.dy);
  compareCase(name, scene640(), J, optionsFor(640), points1024());
}

INSTANTIATE_TEST_SUITE_P(Design71, CudaTranslation,
                         ::testing::Values(Shift{0.3, 0.2}, Shift{3.7, -2.1}, Shift{12.5, 9.0},
                                           Shift{30, -24}));

TEST(CudaCases, Translation1280) {
  VIDMAP_SKIP_WITHOUT_GPU();
  const GrayImage J = synth::warpImage(scene1280(), synth::translation(60, -48));
  compareCase("1280 shift (60, -48)", scene1280(), J, optionsFor(1280), points1024(1280, 720));
}

TEST(CudaCases, RotationsAndScale) {
  VIDMAP_SKIP_WITHOUT_GPU();
  for (double deg : {2.0, 5.0, 10.0}) {
    const GrayImage J = synth::warpImage(scene640(), synth::rotationAboutCentre(deg, 640, 360));
    compareCase("rotation " + std::to_string(int(deg)) + " deg", scene640(), J, optionsFor(640),
                points40());
  }
  const GrayImage J = synth::warpImage(scene640(), synth::scaleAboutCentre(1.05, 640, 360));
  compareCase("scale 1.05", scene640(), J, optionsFor(640), points40());
}

TEST(CudaCases, Brightness) {
  VIDMAP_SKIP_WITHOUT_GPU();
  synth::Warp2d w = synth::translation(3.7, -2.1);
  w.gain = 1.1;
  w.offset = 0.05;
  const GrayImage J = synth::warpImage(scene640(), w);
  for (int mode : {2, 1, 0}) {
    Options o = optionsFor(640);
    o.photometric = mode;
    compareCase("gain 1.1 offset 0.05 photometric " + std::to_string(mode), scene640(), J, o,
                points40());
  }
}

TEST(CudaCases, FailureCases) {
  VIDMAP_SKIP_WITHOUT_GPU();
  const synth::FailureScene f = synth::makeFailureScene();
  Points pts;
  for (const auto& p : f.points) pts.emplace_back(p.x, p.y);
  compareCase("failure cases", f.frame0, f.frame1, optionsFor(640), pts);
}

TEST(CudaCases, PeriodEightTexture) {
  VIDMAP_SKIP_WITHOUT_GPU();
  const GrayImage I = synth::makePeriodicTexture(320, 200, 8, 1);
  const GrayImage J = synth::warpImage(I, synth::translation(4, 4));
  compareCase("period 8 shifted 4 px", I, J, optionsFor(320),
              synth::gridPoints(320, 200, 12, 8, 40, 30));
}

// Any split of the tracks into calls gives the same bits, on each kernel and in each build.
TEST(CudaCases, ChunkInvariance) {
  VIDMAP_SKIP_WITHOUT_GPU();
  gpu::Context ctx;
  const GrayImage J = synth::warpImage(scene640(), synth::translation(3.7, -2.1));
  const Points pts = points1024();
  for (CudaTrackKernel k : cudatest::trackKernels()) {
    auto b = makeCudaBackend(ctx, 640, 360, optionsFor(640), {k});
    const Pair one = runPair(*b, scene640(), J, pts);
    for (int chunk : {3, 5, 100, 333}) {
      // Each track's records depend on its seed only, so the tiny chunks (a partial warp per
      // launch) run over the first 96 tracks: a tenth of the launches, which keeps the test
      // whole under compute-sanitizer, where each launch costs tens of milliseconds.
      const std::size_t n = chunk < 32 ? 96 : pts.size();
      const Points sub(pts.begin(), pts.begin() + static_cast<std::ptrdiff_t>(n));
      const Pair split = runPair(*b, scene640(), J, sub, chunk);
      int equal = 0;
      for (std::size_t i = 0; i < sub.size(); ++i)
        equal += cudatest::sameBits(one.forward[i], split.forward[i]) &&
                 cudatest::sameBits(one.backward[i], split.backward[i]) &&
                 cudatest::sameBits(one.checked[i], split.checked[i]);
      std::printf("[chunks] %s chunk %d: %d of %zu tracks bit-equal to one call\n",
                  cudaTrackKernelName(k), chunk, equal, sub.size());
      EXPECT_EQ(equal, static_cast<int>(sub.size()));
    }
  }
}

// The two kernels compute the same sums in the same order, so without FMA they agree bit for
// bit with each other as well (the CPU comparisons above imply it; this states it).
TEST(CudaCases, WarpEqualsLaneWithoutFma) {
  VIDMAP_SKIP_WITHOUT_GPU();
  gpu::Context ctx;
  const GrayImage J = synth::warpImage(scene640(), synth::rotationAboutCentre(5, 640, 360));
  const Points pts = points1024();
  auto lane = makeCudaBackend(ctx, 640, 360, optionsFor(640), {CudaTrackKernel::kLane});
  auto warp = makeCudaBackend(ctx, 640, 360, optionsFor(640), {CudaTrackKernel::kWarp});
  const Pair a = runPair(*lane, scene640(), J, pts), b = runPair(*warp, scene640(), J, pts);
  expectAgree("warp vs lane, rotation 5 deg, checked", a.checked, b.checked, false);
}

TEST(CudaBackend, BadInputIsAnError) {
  VIDMAP_SKIP_WITHOUT_GPU();
  gpu::Context ctx;
  Options o = optionsFor(640);
  EXPECT_THROW(makeCudaBackend(ctx, 10, 10, o), Error);  // smaller than the window
  o.levels = 0;
  EXPECT_THROW(makeCudaBackend(ctx, 640, 360, o), Error);
  auto b = makeCudaBackend(ctx, 640, 360, optionsFor(640));
  const GrayImage small(320, 200, 0.5f);
  EXPECT_THROW(b->uploadGray(0, small.view()), Error);
  EXPECT_THROW(b->uploadGray(2, scene640().view()), Error);
  EXPECT_THROW(b->buildPyramid(-1), Error);
  EXPECT_THROW(b->track(Direction::kForward, 0, 1, 0, o.capacity + 1), Error);
  EXPECT_THROW(b->check(5, 4), Error);
  std::vector<TrackRecord> too(o.capacity + 1);
  EXPECT_THROW(b->uploadSeeds(too.data(), static_cast<int>(too.size())), Error);
  TrackRecord r;
  EXPECT_THROW(b->readRecords(RecordBuffer::kSeeds, o.capacity, 1, &r), Error);
  EXPECT_THROW(b->readLevel(0, optionsFor(640).levels, nullptr, nullptr), Error);
  EXPECT_EQ(ctx.memory().liveBytes(), static_cast<std::int64_t>(b->residentBytes()));
}

}  // namespace
}  // namespace vidmap::klt
