// The matcher against an independent brute force in double precision, and the rules one by
// one (ratio, mutual, distance limit, epipolar band, one query against many).
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "vidmap/core/cpu_features.h"
#include "vidmap/core/error.h"
#include "vidmap/features/match_dots_cpu.h"
#include "vidmap/features/match_kernels.h"
#include "vidmap/features/matcher.h"

namespace vidmap::features {
namespace {

MatchOptions cpu() {
  MatchOptions o;
  o.backend = Backend::kCpu;
  return o;
}

void normalise(float* d) {
  double n = 0;
  for (int i = 0; i < 128; ++i) n += d[i] * d[i];
  for (int i = 0; i < 128; ++i) d[i] = static_cast<float>(d[i] / std::sqrt(n));
}

// n random non-negative unit descriptors at random positions in a 640 x 480 image.
Features randomFeatures(int n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0, 1);
  Features f;
  f.width = 640;
  f.height = 480;
  f.keypoints.resize(n);
  f.descriptors.resize(static_cast<size_t>(n) * 128);
  for (int i = 0; i < n; ++i) {
    f.keypoints[i].x = 640 * u(rng);
    f.keypoints[i].y = 480 * u(rng);
    float* d = f.descriptors.data() + i * 128;
    for (int j = 0; j < 128; ++j) d[j] = u(rng) * u(rng);
    normalise(d);
  }
  return f;
}

// B holds noisy copies of the first `planted` descriptors of A (shuffled) and random others.
Features plantedCopy(const Features& a, int planted, int extra, float noise, std::mt19937& rng,
                     std::vector<int>* truth) {
  Features b = randomFeatures(planted + extra, rng);
  std::vector<int> perm(planted + extra);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::normal_distribution<float> g(0, noise);
  truth->assign(a.size(), -1);
  for (int i = 0; i < planted; ++i) {
    float* d = b.descriptors.data() + perm[i] * 128;
    for (int j = 0; j < 128; ++j) d[j] = std::max(0.0f, a.descriptor(i)[j] + g(rng));
    normalise(d);
    (*truth)[i] = perm[i];
  }
  return b;
}

// The rules, evaluated in double with no matrix product: the reference.
std::vector<Match> bruteForce(const Features& a, const Features& b, const MatchOptions& o,
                              const EpipolarGuide* guide = nullptr) {
  const int na = static_cast<int>(a.size()), nb = static_cast<int>(b.size());
  std::vector<double> D(static_cast<size_t>(na) * nb);
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j) {
      double s = 0;
      for (int k = 0; k < 128; ++k) {
        const double d = double(a.descriptor(i)[k]) - b.descriptor(j)[k];
        s += d * d;
      }
      bool ok = true;
      if (guide)
        ok = epipolarDistance(guide->F.data(), a.keypoints[i].x, a.keypoints[i].y, b.keypoints[j].x,
                              b.keypoints[j].y, guide->sampson) <= guide->bandPx;
      D[static_cast<size_t>(i) * nb + j] = ok ? std::sqrt(s) : INFINITY;
    }
  std::vector<Match> out;
  for (int i = 0; i < na; ++i) {
    double d1 = INFINITY, d2 = INFINITY;
    int j1 = -1;
    for (int j = 0; j < nb; ++j) {
      const double d = D[static_cast<size_t>(i) * nb + j];
      if (d < d1)
        d2 = d1, d1 = d, j1 = j;
      else if (d < d2)
        d2 = d;
    }
    if (j1 < 0 || d1 == INFINITY) continue;
    if (d2 != INFINITY && !(d1 < o.ratio * d2)) continue;
    if (o.maxDistance > 0 && d1 > o.maxDistance) continue;
    if (o.mutual) {
      int best = -1;
      double bd = INFINITY;
      for (int k = 0; k < na; ++k)
        if (D[static_cast<size_t>(k) * nb + j1] < bd)
          bd = D[static_cast<size_t>(k) * nb + j1], best = k;
      if (best != i) continue;
    }
    out.push_back({i, j1, static_cast<float>(d1)});
  }
  return out;
}

void expectSame(const std::vector<Match>& got, const std::vector<Match>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].a, want[i].a);
    EXPECT_EQ(got[i].b, want[i].b);
    EXPECT_NEAR(got[i].distance, want[i].distance, 1e-4);
  }
}

TEST(Match, PlainEqualsBruteForceAndFindsPlantedPairs) {
  std::mt19937 rng(1);
  Features a = randomFeatures(700, rng);
  std::vector<int> truth;
  Features b = plantedCopy(a, 400, 500, 0.01f, rng, &truth);
  for (bool mutual : {true, false}) {
    MatchOptions o = cpu();
    o.mutual = mutual;
    auto m = Matcher(o).match(a, b);
    expectSame(m, bruteForce(a, b, o));
    int correct = 0;
    for (const auto& x : m) correct += truth[x.a] == x.b;
    EXPECT_GE(correct, 390);
    EXPECT_EQ(correct, static_cast<int>(m.size()));
  }
}

TEST(Match, RatioTestAndMaxDistance) {
  // A single query with two candidates at chosen distances.
  Features a, b;
  a.keypoints.resize(1);
  b.keypoints.resize(2);
  a.descriptors.assign(128, 0.0f);
  b.descriptors.assign(256, 0.0f);
  a.descriptors[0] = 1;
  // b0 at distance d1, b1 at distance d2 from a (unit vectors in the plane of e0, e1).
  auto place = [&](int j, double dist) {
    const double c = 1 - dist * dist / 2;  // |a - b|^2 = 2 - 2 cos
    b.descriptors[j * 128 + 0] = static_cast<float>(c);
    b.descriptors[j * 128 + 1 + j] = static_cast<float>(std::sqrt(1 - c * c));
  };
  place(0, 0.4);
  place(1, 0.4 / 0.79);
  Matcher m(cpu());
  ASSERT_EQ(m.match(a, b).size(), 1u);
  EXPECT_EQ(m.match(a, b)[0].b, 0);
  EXPECT_NEAR(m.match(a, b)[0].distance, 0.4, 1e-5);
  place(1, 0.4 / 0.81);
  EXPECT_TRUE(m.match(a, b).empty());
  auto o = cpu();
  o.ratio = 0.85f;
  EXPECT_EQ(Matcher(o).match(a, b).size(), 1u);
  o.maxDistance = 0.35f;
  EXPECT_TRUE(Matcher(o).match(a, b).empty());
  // A single candidate passes the ratio test.
  b.keypoints.resize(1);
  b.descriptors.resize(128);
  EXPECT_EQ(m.match(a, b).size(), 1u);
}

TEST(Match, MutualCheckKeepsTheNearerQuery) {
  std::mt19937 rng(2);
  Features b = randomFeatures(50, rng);
  Features a;
  a.keypoints.resize(2);
  a.descriptors.resize(256);
  // Both queries are near b7; a1 is nearer.
  std::normal_distribution<float> g(0, 1);
  for (int q = 0; q < 2; ++q) {
    for (int k = 0; k < 128; ++k)
      a.descriptors[q * 128 + k] =
          std::max(0.0f, b.descriptor(7)[k] + (q ? 0.002f : 0.01f) * g(rng));
    normalise(a.descriptors.data() + q * 128);
  }
  auto m = Matcher(cpu()).match(a, b);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].a, 1);
  EXPECT_EQ(m[0].b, 7);
  auto o = cpu();
  o.mutual = false;
  EXPECT_EQ(Matcher(o).match(a, b).size(), 2u);
}

TEST(Match, IdenticalCandidatesAreAmbiguous) {
  std::mt19937 rng(3);
  Features a = randomFeatures(1, rng);
  Features b = a;
  b.keypoints.push_back(a.keypoints[0]);
  b.descriptors.insert(b.descriptors.end(), a.descriptors.begin(), a.descriptors.end());
  EXPECT_TRUE(Matcher(cpu()).match(a, b).empty());
}

// Two cameras looking at random points: F from E and the intrinsics makes x_b^T F x_a vanish.
struct TwoViews {
  std::array<double, 9> E, K, F;
  std::vector<Eigen::Vector2d> pa, pb;
};

TwoViews twoViews(int n, std::mt19937& rng) {
  TwoViews v;
  Eigen::Matrix3d K;
  K << 500, 0, 320, 0, 510, 240, 0, 0, 1;
  const Eigen::Matrix3d R =
      Eigen::AngleAxisd(0.2, Eigen::Vector3d(0.1, 1, 0.2).normalized()).toRotationMatrix();
  const Eigen::Vector3d t(-1, 0.1, 0.05);
  Eigen::Matrix3d tx;
  tx << 0, -t.z(), t.y(), t.z(), 0, -t.x(), -t.y(), t.x(), 0;
  const Eigen::Matrix3d E = tx * R;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) v.E[r * 3 + c] = E(r, c), v.K[r * 3 + c] = K(r, c);
  v.F = EpipolarGuide::fromEssential(v.E, v.K, v.K, 1).F;
  std::uniform_real_distribution<double> u(-1, 1);
  while (static_cast<int>(v.pa.size()) < n) {
    const Eigen::Vector3d X(3 * u(rng), 2 * u(rng), 8 + 3 * u(rng));
    const Eigen::Vector3d xa = K * X, xb = K * (R * X + t);
    const Eigen::Vector2d a = xa.hnormalized(), b = xb.hnormalized();
    if (a.x() < 0 || a.x() > 640 || a.y() < 0 || a.y() > 480 || b.x() < 0 || b.x() > 640 ||
        b.y() < 0 || b.y() > 480 || xb.z() <= 0)
      continue;
    v.pa.push_back(a);
    v.pb.push_back(b);
  }
  return v;
}

TEST(Match, FundamentalFromEssentialIsConsistent) {
  std::mt19937 rng(4);
  auto v = twoViews(50, rng);
  for (size_t i = 0; i < v.pa.size(); ++i) {
    EXPECT_LT(
        epipolarDistance(v.F.data(), v.pa[i].x(), v.pa[i].y(), v.pb[i].x(), v.pb[i].y(), true),
        1e-8);
    EXPECT_LT(
        epipolarDistance(v.F.data(), v.pa[i].x(), v.pa[i].y(), v.pb[i].x(), v.pb[i].y(), false),
        1e-8);
  }
}

// Repeated texture: every true correspondence has a twin descriptor elsewhere in B. Plain
// matching rejects them all as ambiguous; the epipolar band separates them.
TEST(Match, GuidedResolvesRepeatedStructure) {
  std::mt19937 rng(5);
  const int n = 200;
  auto v = twoViews(n, rng);
  Features a = randomFeatures(n, rng);
  Features b = a;  // same descriptors: b_i is a_i's correspondence
  for (int i = 0; i < n; ++i) {
    a.keypoints[i].x = v.pa[i].x(), a.keypoints[i].y = v.pa[i].y();
    b.keypoints[i].x = v.pb[i].x(), b.keypoints[i].y = v.pb[i].y();
  }
  // Twins: the same descriptors placed 60 px off along the image's x axis (off the line).
  std::vector<Keypoint> twins = b.keypoints;
  for (auto& k : twins) k.y += 60;
  b.keypoints.insert(b.keypoints.end(), twins.begin(), twins.end());
  b.descriptors.insert(b.descriptors.end(), a.descriptors.begin(), a.descriptors.end());
  Matcher m(cpu());
  EXPECT_TRUE(m.match(a, b).empty());
  for (bool sampson : {true, false}) {
    EpipolarGuide g = EpipolarGuide::fromEssential(v.E, v.K, v.K, 3.0, sampson);
    auto gm = m.matchGuided(a, b, g);
    int correct = 0;
    for (const auto& x : gm) correct += x.a == x.b;
    EXPECT_GE(correct, 0.9 * n) << "sampson " << sampson;
    EXPECT_EQ(correct, static_cast<int>(gm.size()));
    expectSame(gm, bruteForce(a, b, cpu(), &g));
  }
}

TEST(Match, GuidedEqualsBruteForceOnRandomData) {
  std::mt19937 rng(6);
  Features a = randomFeatures(300, rng);
  std::vector<int> truth;
  Features b = plantedCopy(a, 150, 250, 0.05f, rng, &truth);
  auto v = twoViews(10, rng);
  EpipolarGuide g = EpipolarGuide::fromEssential(v.E, v.K, v.K, 40.0);
  auto gm = Matcher(cpu()).matchGuided(a, b, g);
  expectSame(gm, bruteForce(a, b, cpu(), &g));
  EXPECT_FALSE(gm.empty());
}

// The guided path visits only the grid cells its band crosses: against the brute force over
// every pair, for narrow and wide bands, both distances, epipolar lines of every direction
// (random motions) and keypoints of B piled on one spot (a one-cell grid).
TEST(Match, GuidedGridEqualsBruteForce) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::Matrix3d K;
  K << 500, 0, 320, 0, 510, 240, 0, 0, 1;
  std::array<double, 9> k;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) k[r * 3 + c] = K(r, c);
  int compared = 0, matched = 0;
  for (int trial = 0; trial < 6; ++trial) {
    Features a = randomFeatures(400, rng);
    std::vector<int> truth;
    Features b = plantedCopy(a, 200, 1000, 0.05f, rng, &truth);
    if (trial == 5)
      for (auto& kp : b.keypoints) kp.x = 100.25f, kp.y = 200.5f;
    const Eigen::Matrix3d R =
        Eigen::AngleAxisd(0.3 * u(rng), Eigen::Vector3d(u(rng), u(rng), u(rng)).normalized())
            .toRotationMatrix();
    const Eigen::Vector3d t(u(rng), u(rng), 0.3 * u(rng));
    Eigen::Matrix3d tx;
    tx << 0, -t.z(), t.y(), t.z(), 0, -t.x(), -t.y(), t.x(), 0;
    const Eigen::Matrix3d E = tx * R;
    std::array<double, 9> e;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) e[r * 3 + c] = E(r, c);
    for (double band : {1.5, 6.0, 60.0})
      for (bool sampson : {true, false}) {
        const EpipolarGuide g = EpipolarGuide::fromEssential(e, k, k, band, sampson);
        const auto gm = Matcher(cpu()).matchGuided(a, b, g);
        expectSame(gm, bruteForce(a, b, cpu(), &g));
        ++compared;
        matched += static_cast<int>(gm.size());
      }
  }
  EXPECT_EQ(compared, 36);
  EXPECT_GT(matched, 100);  // the comparisons are not all of empty lists
}

// Epipolar lines far outside the image (a huge offset, or tiny line coefficients against a
// unit offset): no keypoint is in the band, and the grid walk handles coordinates beyond any
// int.
TEST(Match, GuidedLinesFarOutsideTheImageFindNothing) {
  std::mt19937 rng(12);
  Features a = randomFeatures(200, rng);
  std::vector<int> truth;
  Features b = plantedCopy(a, 100, 100, 0.05f, rng, &truth);
  for (const auto& F : {std::array<double, 9>{0, 0, 1, 0, 0, 0, 0, 0, -1e15},
                        std::array<double, 9>{0, 0, 1e-14, 0, 0, 1e-13, 0, 0, 1}})
    for (bool sampson : {true, false}) {
      EpipolarGuide g;
      g.F = F;
      g.bandPx = 4;
      g.sampson = sampson;
      const auto gm = Matcher(cpu()).matchGuided(a, b, g);
      expectSame(gm, bruteForce(a, b, cpu(), &g));
      EXPECT_TRUE(gm.empty());
    }
}

// The first n features of f (SIFT orders them strongest first).
Features prefix(const Features& f, int n) {
  Features p = f;
  n = std::min(n, static_cast<int>(f.size()));
  p.keypoints.resize(n);
  p.descriptors.resize(static_cast<size_t>(n) * 128);
  return p;
}

TEST(Match, ManyOnTheStrongestEqualsTheTruncatedLists) {
  std::mt19937 rng(11);
  Features q = randomFeatures(500, rng);
  std::vector<Features> refs;
  std::vector<std::vector<int>> truth(3);
  for (int k = 0; k < 3; ++k)
    refs.push_back(plantedCopy(q, 300, 200 + 100 * k, 0.01f, rng, &truth[k]));
  refs.push_back(prefix(refs[0], 150));  // shorter than the limit: whole
  truth.push_back(truth[0]);
  std::vector<const Features*> ptrs;
  for (auto& r : refs) ptrs.push_back(&r);
  const int limit = 200;
  Matcher m(cpu());
  for (int single = 0; single < 2; ++single) {
    const std::vector<const Features*> use = single ? std::vector<const Features*>{ptrs[1]} : ptrs;
    auto many = m.matchMany(q, use, {}, limit);
    ASSERT_EQ(many.size(), use.size());
    for (size_t k = 0; k < use.size(); ++k) {
      const size_t ref = single ? 1 : k;
      // The rules on the first `limit` features of each side, indices as in the whole lists.
      expectSame(many[k], bruteForce(prefix(q, limit), prefix(refs[ref], limit), cpu()));
      // Known truth: the planted copies among the strongest on both sides are found.
      const int nb = std::min(limit, static_cast<int>(refs[ref].size()));
      int planted = 0, found = 0;
      for (int i = 0; i < limit; ++i) planted += truth[ref][i] >= 0 && truth[ref][i] < nb;
      for (const auto& x : many[k]) {
        EXPECT_LT(x.a, limit);
        EXPECT_LT(x.b, nb);
        found += truth[ref][x.a] == x.b;
      }
      EXPECT_GE(found, planted * 95 / 100);
      EXPECT_GT(planted, 0);
    }
  }
  EXPECT_THROW(m.matchMany(q, ptrs, {}, -1), Error);
}

// The device-resident store's bad inputs are clear errors on every backend (the CPU backend
// keeps nothing on a device, uploads nothing and ignores good calls).
TEST(Match, KeepOnDeviceBadInputIsAClearErrorOnTheCpu) {
  Matcher m(cpu());
  EXPECT_THROW(m.setResidentCapacity(-1), Error);
  EXPECT_THROW(m.keepOnDevice(nullptr), Error);
  auto f = std::make_shared<Features>();
  f->keypoints.resize(2);
  f->descriptors.resize(128);  // one descriptor for two keypoints
  EXPECT_THROW(m.keepOnDevice(f), Error);
  f->descriptors.resize(256);
  m.keepOnDevice(f);
  EXPECT_FALSE(m.onDevice(*f));
  EXPECT_EQ(m.uploadedDescriptorBytes(), 0);
}

TEST(Match, ManyEqualsOneByOne) {
  std::mt19937 rng(7);
  Features q = randomFeatures(400, rng);
  std::vector<Features> refs;
  std::vector<int> truth;
  for (int k = 0; k < 4; ++k) refs.push_back(plantedCopy(q, 100 + 50 * k, 200, 0.03f, rng, &truth));
  refs.push_back(Features{});  // an image without features
  std::vector<const Features*> ptrs;
  for (auto& r : refs) ptrs.push_back(&r);
  Matcher m(cpu());
  auto many = m.matchMany(q, ptrs);
  ASSERT_EQ(many.size(), refs.size());
  for (size_t k = 0; k < refs.size(); ++k) expectSame(many[k], m.match(q, refs[k]));
  EXPECT_TRUE(many.back().empty());
  auto v = twoViews(10, rng);
  std::vector<EpipolarGuide> guides(refs.size(), EpipolarGuide::fromEssential(v.E, v.K, v.K, 30));
  auto manyGuided = m.matchMany(q, ptrs, guides);
  for (size_t k = 0; k < refs.size(); ++k)
    expectSame(manyGuided[k], m.matchGuided(q, refs[k], guides[k]));
}

// The AVX2 products against Eigen's float product (the baseline build's, and the oracle's
// before): equal bit for bit for every remainder of the rows of A (mod 6, the kernel's tile)
// and of B (mod 8 and 16: Eigen's groups and the kernel's panels), and for a B too small for
// the kernel. Descriptors as SIFT's: non-negative, unit norm, planted near-copies among them.
TEST(Match, AvxDotsEqualEigenBitForBit) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::mt19937 rng(11);
  const Features a = randomFeatures(520, rng);
  std::vector<int> truth;
  const Features b = plantedCopy(a, 300, 1600, 0.02f, rng, &truth);
  if (!DescriptorDots(b.descriptors.data(), 16, true).usesAvx2())
    GTEST_SKIP() << "no AVX2 here, or a build whose Eigen is not SSE2 (Eigen's product runs)";
  int differ = 0;  // products that another summation order changes: the test can tell orders
  for (int nb : {1, 9, 15, 16, 17, 21, 24, 31, 100, 203, 1835, 1900}) {
    for (int na : {1, 2, 3, 7, 12, 299, 512}) {
      Eigen::Map<const RowMatrix> A(a.descriptors.data(), na, 128);
      Eigen::Map<const RowMatrix> B(b.descriptors.data(), nb, 128);
      const RowMatrix ref = A * B.transpose();
      std::vector<float> s(static_cast<size_t>(na) * nb, -1.0f);
      const DescriptorDots dots(b.descriptors.data(), nb, true);
      EXPECT_EQ(dots.usesAvx2(), nb >= 16);
      dots(a.descriptors.data(), na, s.data());
      ASSERT_EQ(0, std::memcmp(s.data(), ref.data(), s.size() * sizeof(float)))
          << "na " << na << " nb " << nb;
      if (nb == 1900 && na == 512)
        for (int i = 0; i < na; ++i)
          for (int j = 0; j < nb; ++j) {
            float pairwise = 0, lo = 0, hi = 0;  // halves summed apart: another order
            for (int k = 0; k < 64; ++k) lo += a.descriptor(i)[k] * b.descriptor(j)[k];
            for (int k = 64; k < 128; ++k) hi += a.descriptor(i)[k] * b.descriptor(j)[k];
            pairwise = lo + hi;
            differ += pairwise != ref(i, j);
          }
    }
  }
  EXPECT_GT(differ, 1000);  // of 972800: bit-equality above is not a matter of luck
}

// The product's row blocks (productRowBlocks): in order over all rows, at most 512 rows, under
// glibc's 32 MiB cap where 192 rows fit under it, and a row alone in its block exactly where
// 512-row blocks leave one (Eigen's one-row product sums in another order); the 512-row
// blocks themselves where they fit.
TEST(Match, ProductRowBlocksLeaveARowAloneWhere512RowBlocksDo) {
  constexpr long kBelowCap = (32L << 20) - (1L << 16);
  for (int nb : {1, 1000, 16000, 16383, 20000, 43000, 44000, 100000})
    for (int na : {0, 1, 2, 3, 190, 191, 192, 193, 418, 419, 420, 511, 512, 513, 514, 1024, 1025,
                   1835, 2049}) {
      SCOPED_TRACE("na " + std::to_string(na) + ", nb " + std::to_string(nb));
      const std::vector<int> b = productRowBlocks(na, nb);
      ASSERT_GE(b.size(), 1u);
      EXPECT_EQ(b.front(), na > 0 ? 0 : na);
      EXPECT_EQ(b.back(), na);
      const bool fits = 192L * 4 * nb <= kBelowCap;
      for (size_t k = 0; k + 1 < b.size(); ++k) {
        const int rows = b[k + 1] - b[k];
        ASSERT_GE(rows, 1);
        EXPECT_LE(rows, 512);
        if (fits) {
          EXPECT_LE(4L * rows * nb, kBelowCap) << "block " << k;
        }
        const bool aloneBefore = na % 512 == 1 && b[k] == na - 1;
        EXPECT_EQ(rows == 1, aloneBefore) << "block " << k << " at row " << b[k];
      }
      if (512L * 4 * nb <= kBelowCap || !fits) {  // the blocks of before
        std::vector<int> before;
        for (int r = 0; r < na; r += 512) before.push_back(r);
        before.push_back(na);
        EXPECT_EQ(b, before);
      }
    }
}

// Guided matching's distances on AVX2 against Eigen's (a - b).squaredNorm(), what the guided
// path computed before: memcmp-equal for every count mod 4 and for repeated and equal rows.
TEST(Match, AvxGuidedDistancesEqualEigenBitForBit) {
  using V = Eigen::Matrix<float, 128, 1>;
  std::mt19937 rng(13);
  const Features a = randomFeatures(40, rng);
  std::vector<int> truth;
  Features b = plantedCopy(a, 20, 280, 0.02f, rng, &truth);
  std::copy_n(a.descriptor(3), 128, b.descriptors.data() + 7 * 128);  // distance 0 from a_3
  std::uniform_int_distribution<int> pick(0, static_cast<int>(b.size()) - 1);
  int differ = 0, compared = 0;  // distances another summation order changes
  for (int n : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 17, 299}) {
    std::vector<int> pos(n);
    for (int& p : pos) p = pick(rng);
    if (n > 2) pos[1] = pos[0], pos[2] = 7;
    for (int i = 0; i < static_cast<int>(a.size()); ++i) {
      std::vector<float> out(n, -1.0f), ref(n);
      squaredDistances128(a.descriptor(i), b.descriptors.data(), pos.data(), n, out.data(), true);
      for (int m = 0; m < n; ++m) {
        ref[m] = (Eigen::Map<const V>(a.descriptor(i)) - Eigen::Map<const V>(b.descriptor(pos[m])))
                     .squaredNorm();
        float seq = 0;  // increasing k, one accumulator: another order
        for (int k = 0; k < 128; ++k)
          seq += (a.descriptor(i)[k] - b.descriptor(pos[m])[k]) *
                 (a.descriptor(i)[k] - b.descriptor(pos[m])[k]);
        differ += seq != ref[m];
        ++compared;
      }
      if (n > 0) {  // memcmp of an empty vector's data (null) is undefined
        ASSERT_EQ(0, std::memcmp(out.data(), ref.data(), n * sizeof(float)))
            << "n " << n << " row " << i;
      }
    }
  }
  EXPECT_EQ(0.0f, [&] {
    float d = -1;
    const int p = 7;
    squaredDistances128(a.descriptor(3), b.descriptors.data(), &p, 1, &d, true);
    return d;
  }());
  EXPECT_GT(differ, compared / 10);  // bit-equality above is not a matter of luck
}

// The matcher's decisions with the AVX2 products equal those with Eigen's (one query against
// several images, so that B's segments and remainders fall anywhere).
TEST(Match, AvxDotsGiveTheSameMatches) {
  std::mt19937 rng(5);
  Features q = randomFeatures(700, rng);
  std::vector<Features> refs;
  std::vector<int> truth;
  for (int k = 0; k < 3; ++k) refs.push_back(plantedCopy(q, 300, 301 + 7 * k, 0.03f, rng, &truth));
  std::vector<const Features*> ptrs;
  for (auto& r : refs) ptrs.push_back(&r);
  MatchOptions on = cpu(), off = cpu();
  off.cpuAvx2 = false;
  const auto x = Matcher(on).matchMany(q, ptrs), y = Matcher(off).matchMany(q, ptrs);
  ASSERT_EQ(x.size(), y.size());
  for (size_t k = 0; k < x.size(); ++k) {
    ASSERT_EQ(x[k].size(), y[k].size());
    EXPECT_GT(x[k].size(), 200u);
    for (size_t m = 0; m < x[k].size(); ++m) {
      EXPECT_EQ(x[k][m].a, y[k][m].a);
      EXPECT_EQ(x[k][m].b, y[k][m].b);
      EXPECT_EQ(0, std::memcmp(&x[k][m].distance, &y[k][m].distance, sizeof(float)));
    }
  }
}

// The decisions from given row top-2s and columns' nearest rows (the step both backends share:
// decideMatches, and the CUDA matcher's kDecide through isMatch), on values chosen by hand: 3
// query rows against two images (columns 0-3 and 4-5), ratio 0.8 (0.64 on squared distances).
TEST(Match, DecisionsFromTheRowTop2AndTheColumnsNearestRows) {
  auto top = [](float d1, float d2, int j1) {
    Top2 t;
    t.d1 = d1, t.d2 = d2, t.j1 = j1;
    return t;
  };
  const std::vector<int> segments = {0, 4, 6};
  const std::vector<Top2> rowTop = {
      top(0.25f, 1.0f, 2),         // row 0, image 0: passes, column 2's nearest is row 0
      top(0.5f, 0.7f, 5),          // row 0, image 1: 0.5 >= 0.64 * 0.7, ambiguous
      top(0.16f, kNoDistance, 3),  // row 1, image 0: one candidate, but column 3 prefers row 2
      top(kNoDistance, kNoDistance, -1),  // row 1, image 1: no candidate (guided)
      top(0.09f, 0.5f, 3),                // row 2, image 0: passes, mutual
      top(0.36f, 4.0f, 4)};               // row 2, image 1: passes, mutual; distance 0.6
  const std::vector<int> colBest = {1, 1, 0, 2, 2, 0};
  MatchOptions o;
  auto m = decideMatches(rowTop, colBest, segments, 3, o);
  ASSERT_EQ(m.size(), 2u);
  ASSERT_EQ(m[0].size(), 2u);
  EXPECT_EQ(m[0][0].a, 0);
  EXPECT_EQ(m[0][0].b, 2);
  EXPECT_EQ(m[0][0].distance, 0.5f);
  EXPECT_EQ(m[0][1].a, 2);
  EXPECT_EQ(m[0][1].b, 3);
  EXPECT_FLOAT_EQ(m[0][1].distance, 0.3f);
  ASSERT_EQ(m[1].size(), 1u);
  EXPECT_EQ(m[1][0].a, 2);
  EXPECT_EQ(m[1][0].b, 0);  // column 4 is the second image's first
  EXPECT_FLOAT_EQ(m[1][0].distance, 0.6f);
  // Without the mutual check row 1 matches column 3 too; a limit of 0.55 drops the 0.6 match.
  o.mutual = false;
  o.maxDistance = 0.55f;
  m = decideMatches(rowTop, colBest, segments, 3, o);
  ASSERT_EQ(m[0].size(), 3u);
  EXPECT_EQ(m[0][1].a, 1);
  EXPECT_EQ(m[0][1].b, 3);
  EXPECT_FLOAT_EQ(m[0][1].distance, 0.4f);
  EXPECT_TRUE(m[1].empty());
  // A wider ratio admits the ambiguous one.
  o.ratio = 0.9f;
  o.maxDistance = 0;
  m = decideMatches(rowTop, colBest, segments, 3, o);
  ASSERT_EQ(m[1].size(), 2u);
  EXPECT_EQ(m[1][0].a, 0);
  EXPECT_EQ(m[1][0].b, 1);
}

// The AVX2 row scan against the scalar loop, on values with many exact ties (distances from a
// few levels, columns equal to others) and NaN products: the same top-2 per segment and the
// same nearest row of each column, bit for bit.
TEST(Match, AvxScanEqualsTheScalarScan) {
  if (!cpuHasAvx2()) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> level(0, 12);
  const int na = 300, nb = 203;
  const std::vector<int> segments = {0, 5, 77, 78, 150, 203};
  std::vector<float> s(static_cast<size_t>(na) * nb), normA(na), normB(nb);
  for (auto& v : s) v = 0.05f * level(rng);
  for (int n = 0; n < 20; ++n) s[rng() % s.size()] = std::nanf("");
  for (auto& v : normA) v = 0.5f + 0.05f * level(rng);
  for (auto& v : normB) v = 0.5f + 0.05f * level(rng);
  std::vector<float> cd[2];
  std::vector<int> ci[2];
  std::vector<Top2> top[2];
  for (int pass = 0; pass < 2; ++pass) {
    cd[pass].assign(nb, kNoDistance);
    ci[pass].assign(nb, -1);
    for (int i = 0; i < na; ++i)
      for (size_t k = 0; k + 1 < segments.size(); ++k) {
        Top2 t;
        scanRow(s.data() + static_cast<size_t>(i) * nb, normA[i], normB.data(), segments[k],
                segments[k + 1], i, &t, cd[pass].data(), ci[pass].data(), pass == 1);
        top[pass].push_back(t);
      }
  }
  int ties = 0;
  for (size_t r = 0; r < top[0].size(); ++r) {
    EXPECT_EQ(top[0][r].j1, top[1][r].j1);
    EXPECT_EQ(0, std::memcmp(&top[0][r].d1, &top[1][r].d1, sizeof(float)));
    EXPECT_EQ(0, std::memcmp(&top[0][r].d2, &top[1][r].d2, sizeof(float)));
    ties += top[0][r].j1 >= 0 && top[0][r].d1 == top[0][r].d2;
  }
  EXPECT_GT(ties, 100);  // the tie rule (the lower index) is exercised
  EXPECT_EQ(ci[0], ci[1]);
  EXPECT_EQ(0, std::memcmp(cd[0].data(), cd[1].data(), nb * sizeof(float)));
}

}  // namespace
}  // namespace vidmap::features
