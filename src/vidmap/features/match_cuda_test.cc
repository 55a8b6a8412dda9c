// The CUDA matcher against the CPU oracle (label gpu; skipped without a device). The distance
// matrices come from different GEMMs (cuBLAS vs Eigen), so a decision may differ only where the
// float distances nearly tie: each differing match is checked to be such a near tie.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include "vidmap/features/matcher.h"
#include "vidmap/features/sift.h"
#include "vidmap/features/testing/blob_scene.h"

namespace vidmap::features {
namespace {

#define REQUIRE_DEVICE() \
  if (!cudaDeviceAvailable()) GTEST_SKIP() << "no CUDA device"

Features randomFeatures(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  Features f;
  f.keypoints.resize(n);
  f.descriptors.resize(static_cast<size_t>(n) * 128);
  for (int i = 0; i < n; ++i) {
    f.keypoints[i].x = 640 * u(rng);
    f.keypoints[i].y = 480 * u(rng);
    float* d = f.descriptors.data() + i * 128;
    double s = 0;
    for (int j = 0; j < 128; ++j) d[j] = u(rng) * u(rng), s += d[j] * d[j];
    for (int j = 0; j < 128; ++j) d[j] = static_cast<float>(d[j] / std::sqrt(s));
  }
  return f;
}

// b holds noisy copies of a's first half.
Features noisyCopy(const Features& a, float noise, unsigned seed) {
  Features b = randomFeatures(static_cast<int>(a.size()), seed);
  std::mt19937 rng(seed + 1);
  std::normal_distribution<float> g(0, noise);
  for (size_t i = 0; i < a.size() / 2; ++i) {
    double s = 0;
    float* d = b.descriptors.data() + i * 128;
    for (int j = 0; j < 128; ++j)
      d[j] = std::max(0.0f, a.descriptor(i)[j] + g(rng)), s += d[j] * d[j];
    for (int j = 0; j < 128; ++j) d[j] = static_cast<float>(d[j] / std::sqrt(s));
  }
  return b;
}

double dist(const Features& a, int i, const Features& b, int j) {
  double s = 0;
  for (int k = 0; k < 128; ++k) {
    const double d = double(a.descriptor(i)[k]) - b.descriptor(j)[k];
    s += d * d;
  }
  return std::sqrt(s);
}

// A match present in one list only must sit at a near tie: its ratio within 1e-4 of the
// threshold, or a competitor (second in the row, or another row for the column) within 1e-4.
bool nearTie(const Match& m, const Features& a, const Features& b, const MatchOptions& o) {
  const double d1 = dist(a, m.a, b, m.b);
  for (size_t j = 0; j < b.size(); ++j) {
    if (static_cast<int>(j) == m.b) continue;
    const double d = dist(a, m.a, b, static_cast<int>(j));
    if (std::abs(d1 - o.ratio * d) < 1e-4 || std::abs(d - d1) < 1e-4) return true;
  }
  for (size_t i = 0; i < a.size(); ++i)
    if (static_cast<int>(i) != m.a && std::abs(dist(a, static_cast<int>(i), b, m.b) - d1) < 1e-4)
      return true;
  return false;
}

void expectSameExceptNearTies(const std::vector<Match>& c, const std::vector<Match>& g,
                              const Features& a, const Features& b, const MatchOptions& o,
                              const char* name) {
  auto key = [](const Match& m) { return std::pair{m.a, m.b}; };
  std::set<std::pair<int, int>> cs, gs;
  for (const auto& m : c) cs.insert(key(m));
  for (const auto& m : g) gs.insert(key(m));
  int onlyCpu = 0, onlyGpu = 0;
  for (const auto& m : c)
    if (!gs.count(key(m))) {
      ++onlyCpu;
      EXPECT_TRUE(nearTie(m, a, b, o)) << name << " cpu-only match " << m.a << "-" << m.b;
    }
  for (const auto& m : g)
    if (!cs.count(key(m))) {
      ++onlyGpu;
      EXPECT_TRUE(nearTie(m, a, b, o)) << name << " gpu-only match " << m.a << "-" << m.b;
    }
  std::printf("[ %s ] cpu %zu gpu %zu, only cpu %d, only gpu %d\n", name, c.size(), g.size(),
              onlyCpu, onlyGpu);
  EXPECT_LE(onlyCpu + onlyGpu, 2 + static_cast<int>(c.size() / 500));
}

MatchOptions with(Backend b) {
  MatchOptions o;
  o.backend = b;
  return o;
}

TEST(MatchCuda, PlainAndGuidedAgreeWithTheCpu) {
  REQUIRE_DEVICE();
  Features a = randomFeatures(3000, 1), b = noisyCopy(a, 0.02f, 2);
  Matcher cpu(with(Backend::kCpu)), gpu(with(Backend::kCuda));
  expectSameExceptNearTies(cpu.match(a, b), gpu.match(a, b), a, b, cpu.options(), "plain");
  EpipolarGuide g;
  g.F = {0, -1e-3, 0.2, 1e-3, 0, -0.3, -0.2, 0.3, 0};  // a pure translation's F
  g.bandPx = 60;
  for (bool sampson : {true, false}) {
    g.sampson = sampson;
    expectSameExceptNearTies(cpu.matchGuided(a, b, g), gpu.matchGuided(a, b, g), a, b,
                             cpu.options(), sampson ? "guided sampson" : "guided line");
  }
  MatchOptions o = with(Backend::kCpu);
  o.mutual = false;
  o.maxDistance = 0.3f;
  MatchOptions og = o;
  og.backend = Backend::kCuda;
  expectSameExceptNearTies(Matcher(o).match(a, b), Matcher(og).match(a, b), a, b, o,
                           "no mutual, max distance");
}

TEST(MatchCuda, ManyAgreeWithTheCpu) {
  REQUIRE_DEVICE();
  Features q = randomFeatures(2000, 3);
  std::vector<Features> refs;
  for (unsigned k = 0; k < 4; ++k) refs.push_back(noisyCopy(q, 0.02f + 0.01f * k, 10 + k));
  refs.push_back(Features{});
  std::vector<const Features*> ptrs;
  for (auto& r : refs) ptrs.push_back(&r);
  Matcher cpu(with(Backend::kCpu)), gpu(with(Backend::kCuda));
  auto c = cpu.matchMany(q, ptrs), g = gpu.matchMany(q, ptrs);
  ASSERT_EQ(g.size(), refs.size());
  for (size_t k = 0; k < refs.size(); ++k)
    expectSameExceptNearTies(c[k], g[k], q, refs[k], cpu.options(), "many");
  EXPECT_TRUE(g.back().empty());
}

// Exact ties in a column: rows of A that are copies of one descriptor of B have the same
// distance to it (the same products in the same order), and the column's nearest row, which
// the mutual check reads, must be the lowest of them on both backends, within one chunk of the
// CUDA column pass and across chunks (4096 rows: chunks of 128).
TEST(MatchCuda, ColumnTiesGoToTheLowestRow) {
  REQUIRE_DEVICE();
  Features a = randomFeatures(4096, 21), b = randomFeatures(4096, 22);
  const int target = 7;
  const std::vector<int> copies = {100, 101, 1000, 3000, 4095};
  for (int i : copies)
    std::copy(b.descriptor(target), b.descriptor(target) + 128,
              a.descriptors.begin() + static_cast<long>(i) * 128);
  for (Backend backend : {Backend::kCpu, Backend::kCuda}) {
    const auto m = Matcher(with(backend)).match(a, b);
    std::set<int> rowsOfTarget;
    for (const auto& x : m)
      if (x.b == target) rowsOfTarget.insert(x.a);
    EXPECT_EQ(rowsOfTarget, std::set<int>{copies.front()})
        << (backend == Backend::kCpu ? "cpu" : "cuda");
  }
}

TEST(MatchCuda, SiftFeaturesAgreeWithTheCpu) {
  REQUIRE_DEVICE();
  auto scene = testing::randomBlobScene(640, 480, 1200, 1.5, 10, 5);
  const auto H = testing::similarity(12, 0.9, 320, 240, 5, -3);
  SiftOptions so;
  so.backend = Backend::kCpu;
  Sift sift(so);
  auto a = sift.extract(testing::renderBlobs(scene, 640, 480)).features;
  auto b = sift.extract(testing::renderBlobs(scene, 640, 480, H)).features;
  Matcher cpu(with(Backend::kCpu)), gpu(with(Backend::kCuda));
  expectSameExceptNearTies(cpu.match(a, b), gpu.match(a, b), a, b, cpu.options(), "sift");
}

}  // namespace
}  // namespace vidmap::features
