// The CUDA matcher against the CPU oracle (label gpu; skipped without a device). The distance
// matrices come from different GEMMs (cuBLAS vs Eigen), so a decision may differ only where the
// float distances nearly tie: each differing match is checked to be such a near tie.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "vidmap/features/match_cuda.h"
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

void expectBitEqual(const std::vector<std::vector<Match>>& x,
                    const std::vector<std::vector<Match>>& y, const char* name) {
  ASSERT_EQ(x.size(), y.size()) << name;
  size_t total = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    ASSERT_EQ(x[k].size(), y[k].size()) << name << " image " << k;
    total += x[k].size();
    for (size_t i = 0; i < x[k].size(); ++i) {
      EXPECT_EQ(x[k][i].a, y[k][i].a) << name;
      EXPECT_EQ(x[k][i].b, y[k][i].b) << name;
      EXPECT_EQ(x[k][i].distance, y[k][i].distance) << name;  // bit for bit
    }
  }
  EXPECT_GT(total, 100u) << name;  // not a vacuous comparison
}

// Descriptors kept on the device (Matcher::keepOnDevice) give the host-input path's matches bit
// for bit (plain, guided, limited to the strongest, one image), with no descriptor uploaded
// when all are resident and exactly the missing image's bytes when one is not; the CPU oracle
// agrees as in the tests above. Eviction of the oldest, replacement, and a kept image whose
// descriptor count changed (read from the host again).
TEST(MatchCuda, DeviceResidentDescriptorsGiveTheHostInputsMatches) {
  REQUIRE_DEVICE();
  auto q = std::make_shared<Features>(randomFeatures(2000, 3));
  std::vector<std::shared_ptr<Features>> refs;
  for (unsigned k = 0; k < 3; ++k)
    refs.push_back(std::make_shared<Features>(noisyCopy(*q, 0.02f + 0.01f * k, 30 + k)));
  std::vector<const Features*> ptrs;
  for (auto& r : refs) ptrs.push_back(r.get());
  EpipolarGuide g;
  g.F = {0, -1e-3, 0.2, 1e-3, 0, -0.3, -0.2, 0.3, 0};
  g.bandPx = 60;
  const std::vector<EpipolarGuide> guides(refs.size(), g);
  const int limit = 700;
  Matcher cpu(with(Backend::kCpu)), gpu(with(Backend::kCuda));
  const auto all = [&](Matcher& m) {
    return std::vector{m.matchMany(*q, ptrs), m.matchMany(*q, ptrs, guides),
                       m.matchMany(*q, ptrs, {}, limit), m.matchMany(*q, {ptrs[1]})};
  };
  const std::int64_t image = 2000 * 128 * 4, limited = limit * 128 * 4;
  const auto host = all(gpu);  // nothing kept yet: every descriptor uploaded
  EXPECT_EQ(gpu.uploadedDescriptorBytes(), 4 * image + 4 * image + 4 * limited + 2 * image);

  gpu.keepOnDevice(q);
  for (auto& r : refs) gpu.keepOnDevice(r);
  EXPECT_TRUE(gpu.onDevice(*q));
  for (auto& r : refs) EXPECT_TRUE(gpu.onDevice(*r));
  const std::int64_t afterKeep = gpu.uploadedDescriptorBytes();
  EXPECT_EQ(afterKeep, 10 * image + 4 * limited + 4 * image);  // each image once
  const auto resident = all(gpu);
  EXPECT_EQ(gpu.uploadedDescriptorBytes(), afterKeep);  // nothing uploaded
  const char* names[] = {"plain", "guided", "limited", "one"};
  for (int c = 0; c < 4; ++c) expectBitEqual(host[c], resident[c], names[c]);
  const auto oracle = cpu.matchMany(*q, ptrs);
  for (size_t k = 0; k < refs.size(); ++k)
    expectSameExceptNearTies(oracle[k], resident[0][k], *q, *refs[k], cpu.options(), "resident");

  // Capacity 3 and a fifth image: the two oldest (the query, refs[0]) go; keeping refs[2]
  // again replaces its copy (no eviction).
  gpu.setResidentCapacity(3);
  auto extra = std::make_shared<Features>(noisyCopy(*q, 0.05f, 40));
  gpu.keepOnDevice(extra);
  EXPECT_FALSE(gpu.onDevice(*q));
  EXPECT_FALSE(gpu.onDevice(*refs[0]));
  EXPECT_TRUE(gpu.onDevice(*refs[1]) && gpu.onDevice(*refs[2]) && gpu.onDevice(*extra));
  gpu.keepOnDevice(refs[2]);
  EXPECT_TRUE(gpu.onDevice(*refs[1]) && gpu.onDevice(*refs[2]) && gpu.onDevice(*extra));
  // Fallback: the query and refs[0] from the host, the others from the device.
  const std::int64_t before = gpu.uploadedDescriptorBytes();
  expectBitEqual(host[0], gpu.matchMany(*q, ptrs), "mixed");
  EXPECT_EQ(gpu.uploadedDescriptorBytes() - before, 2 * image);
  // A kept image whose descriptors grew is not read from its stale copy.
  refs[1]->keypoints.push_back(refs[1]->keypoints.front());
  refs[1]->descriptors.insert(refs[1]->descriptors.end(), refs[1]->descriptors.begin(),
                              refs[1]->descriptors.begin() + 128);
  EXPECT_FALSE(gpu.onDevice(*refs[1]));
  Matcher fresh(with(Backend::kCuda));
  expectBitEqual(fresh.matchMany(*q, ptrs), gpu.matchMany(*q, ptrs), "grown");
  // Capacity 0 keeps nothing; a negative one is an error.
  gpu.setResidentCapacity(0);
  gpu.keepOnDevice(q);
  EXPECT_FALSE(gpu.onDevice(*q));
  EXPECT_THROW(gpu.setResidentCapacity(-1), Error);
  EXPECT_THROW(gpu.keepOnDevice(nullptr), Error);
}

// The decisions taken on the device (kDecide) equal the host's decideMatches on the same row
// top-2s and columns' nearest rows (MatchCuda::setHostDecision, the former path) bit for bit:
// one image, four (one empty) plain and guided, the strongest 700 of each, no mutual check with
// a distance limit, a query of 300 (fewer rows than threads), and from kept descriptors.
TEST(MatchCuda, DeviceDecisionsEqualTheHostDecisions) {
  REQUIRE_DEVICE();
  gpu::Context ctx(0);
  MatchCuda dev(ctx), host(ctx);
  host.setHostDecision(true);
  const auto q = std::make_shared<const Features>(randomFeatures(2000, 50));
  std::vector<std::shared_ptr<const Features>> refs;
  for (unsigned k = 0; k < 3; ++k)
    refs.push_back(std::make_shared<const Features>(noisyCopy(*q, 0.02f + 0.01f * k, 51 + k)));
  refs.push_back(std::make_shared<const Features>());
  EpipolarGuide g;
  g.F = {0, -1e-3, 0.2, 1e-3, 0, -0.3, -0.2, 0.3, 0};
  g.bandPx = 60;
  const std::vector<EpipolarGuide> guides(refs.size(), g);
  // The problem of q's first na rows against each ref's first nb (all when 0).
  std::vector<float> bcat;
  std::vector<Keypoint> kcat;
  const auto problem = [&](int na, int count, int nb, bool guided) {
    MatchProblem p;
    p.a = q->descriptors.data();
    p.na = na;
    p.keypointsA = q->keypoints.data();
    p.segments = {0};
    bcat.clear();
    kcat.clear();
    for (int k = 0; k < count; ++k) {
      const int n = nb ? std::min<int>(nb, refs[k]->size()) : static_cast<int>(refs[k]->size());
      bcat.insert(bcat.end(), refs[k]->descriptors.begin(),
                  refs[k]->descriptors.begin() + static_cast<long>(n) * 128);
      kcat.insert(kcat.end(), refs[k]->keypoints.begin(), refs[k]->keypoints.begin() + n);
      p.segments.push_back(p.segments.back() + n);
    }
    p.b = bcat.data();
    p.nb = p.segments.back();
    p.keypointsB = kcat.data();
    p.guides = guided ? guides.data() : nullptr;
    return p;
  };
  MatchOptions o;
  MatchOptions loose = o;
  loose.mutual = false;
  loose.maxDistance = 0.5f;
  struct Case {
    const char* name;
    int na, count, nb;
    bool guided;
    MatchOptions options;
  };
  const Case cases[] = {{"one", 2000, 1, 0, false, o},           {"many", 2000, 4, 0, false, o},
                        {"guided many", 2000, 4, 0, true, o},    {"limited", 700, 4, 700, false, o},
                        {"no mutual", 2000, 4, 0, false, loose}, {"few rows", 300, 2, 0, false, o}};
  for (const Case& c : cases) {
    const MatchProblem p = problem(c.na, c.count, c.nb, c.guided);
    expectBitEqual(host.match(p, c.options), dev.match(p, c.options), c.name);
  }
  // From kept descriptors: the query's and each image's read in place.
  dev.keep(q, nullptr, 8);
  host.keep(q, nullptr, 8);
  std::vector<const float*> devB, hostB;
  for (int k = 0; k < 3; ++k) {
    dev.keep(refs[k], nullptr, 8);
    host.keep(refs[k], nullptr, 8);
    devB.push_back(dev.resident(*refs[k]));
    hostB.push_back(host.resident(*refs[k]));
  }
  const MatchProblem p = problem(2000, 3, 0, false);
  expectBitEqual(host.match(p, o, nullptr, host.resident(*q), hostB),
                 dev.match(p, o, nullptr, dev.resident(*q), devB), "kept");
  expectBitEqual(host.match(p, o), dev.match(p, o, nullptr, dev.resident(*q), devB),
                 "kept against host input");
}

// Kept features that are destroyed leave the store: new features at the same address, with as
// many descriptors, are read from the host, not from the old copy.
TEST(MatchCuda, DestroyedKeptFeaturesAreNotRead) {
  REQUIRE_DEVICE();
  Matcher gpu(with(Backend::kCuda)), fresh(with(Backend::kCuda));
  const Features other = noisyCopy(randomFeatures(500, 5), 0.02f, 7);
  std::optional<Features> slot(randomFeatures(500, 5));
  auto owner = std::make_shared<int>(0);
  gpu.keepOnDevice(std::shared_ptr<const Features>(owner, &*slot));  // alive while owner is
  EXPECT_TRUE(gpu.onDevice(*slot));
  owner.reset();
  slot.emplace(noisyCopy(other, 0.02f, 8));  // new features in the same place
  EXPECT_FALSE(gpu.onDevice(*slot));
  expectBitEqual(fresh.matchMany(*slot, {&other}), gpu.matchMany(*slot, {&other}), "reused");
}

}  // namespace
}  // namespace vidmap::features
