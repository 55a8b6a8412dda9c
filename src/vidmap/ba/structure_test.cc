// The explicit Schur system's structure against independent references: the observation pairs
// of every segment listed by a plain serial walk (one bucket per image pair), and the matrix
// fold map by the former serial construction (contributions sorted by target). Both must match
// exactly, element for element, on 1 and 4 threads: the backends sum in these orders.
#include "vidmap/ba/structure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "vidmap/ba/fold_maps.h"
#include "vidmap/ba/synthetic.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace vidmap::ba {
namespace {

struct RefPairs {
  std::vector<int> segA, segB, segStart, pairA, pairB;
};

// The pairs (a, b): a walks image ia's observations, b the observations of a's point in images
// ib >= ia (only ib == ia without allSegments; a held point: only (a, a)); bucketed by (ia, ib),
// buckets in (ia, ib) order.
RefPairs referencePairs(const Structure& s, bool allSegments) {
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> buckets;
  auto varies = [&](int i) { return s.exclSize[i] > 0 || s.imageShared[i] >= 0; };
  for (int a = 0; a < s.numObs(); ++a) {
    const int ia = s.obsImage[a], j = s.obsPoint[a];
    if (!varies(ia)) continue;
    if (s.pointCol[j] < 0) {
      buckets[{ia, ia}].push_back({a, a});
      continue;
    }
    for (int b = 0; b < s.numObs(); ++b)
      if (s.obsPoint[b] == j && s.obsImage[b] >= ia && varies(s.obsImage[b]) &&
          (allSegments || s.obsImage[b] == ia))
        buckets[{ia, s.obsImage[b]}].push_back({a, b});
  }
  RefPairs r;
  r.segStart.push_back(0);
  for (const auto& [key, list] : buckets) {
    r.segA.push_back(key.first), r.segB.push_back(key.second);
    for (const auto& [a, b] : list) r.pairA.push_back(a), r.pairB.push_back(b);
    r.segStart.push_back(static_cast<int>(r.pairA.size()));
  }
  return r;
}

// The former serial matrix map: every (target, source, factor), stably sorted by target.
FoldMaps referenceMatrixMap(const Structure& s) {
  struct Contribution {
    std::int64_t target;
    int src;
    double factor;
  };
  std::vector<Contribution> all;
  const std::int64_t n = s.nF;
  const int C = s.C;
  for (int g = 0; g < static_cast<int>(s.segA.size()); ++g) {
    const int ia = s.segA[g], ib = s.segB[g];
    for (int r = 0; r < C; ++r)
      for (int c = 0; c < C; ++c) {
        const std::int64_t R = s.colMap[static_cast<size_t>(ia) * C + r];
        const std::int64_t K = s.colMap[static_cast<size_t>(ib) * C + c];
        if (R < 0 || K < 0 || (ia == ib && R > K)) continue;
        const double factor = (ia != ib && R == K) ? 2.0 : 1.0;
        all.push_back({std::min(R, K) * n + std::max(R, K), (g * C + r) * C + c, factor});
      }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& x, const auto& y) { return x.target < y.target; });
  FoldMaps f;
  for (size_t k = 0; k < all.size(); ++k) {
    if (k == 0 || all[k].target != all[k - 1].target) {
      f.matStart.push_back(static_cast<int>(k));
      f.matTarget.push_back(all[k].target);
    }
    f.matSrc.push_back(all[k].src);
    f.matFactor.push_back(all[k].factor);
  }
  f.matStart.push_back(static_cast<int>(all.size()));
  return f;
}

// Scenes with a shared camera, per-image cameras, held images, held points and single-view
// points (held by the solver), in both layouts.
std::vector<Problem> problems() {
  std::vector<Problem> out;
  for (int variant = 0; variant < 4; ++variant) {
    SyntheticOptions o;
    o.numImages = variant < 2 ? 7 : 24;
    o.numPoints = variant < 2 ? 60 : 300;
    o.layout = variant < 2 ? SyntheticLayout::kArc : SyntheticLayout::kCorridor;
    o.sharedIntrinsics = variant % 2 == 0;
    o.seed = 11 + variant;
    Problem p = makeSyntheticScene(o).initial;
    p.setImageConstant(2);
    for (int j = 0; j < static_cast<int>(p.points.size()); j += 5) p.setPointConstant(j);
    out.push_back(std::move(p));
  }
  return out;
}

int maxThreads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void setThreads(int n) {
#if defined(_OPENMP)
  omp_set_num_threads(n);
#endif
  (void)n;
}

TEST(Structure, SegmentPairsMatchASerialWalk) {
  const int saved = maxThreads();
  for (const Problem& p : problems())
    for (int threads : {1, 4}) {
      setThreads(threads);
      Structure s = buildStructure(p, Options(), true);
      const RefPairs r = referencePairs(s, true);
      ASSERT_GT(r.pairA.size(), 0u);
      EXPECT_EQ(s.segA, r.segA);
      EXPECT_EQ(s.segB, r.segB);
      EXPECT_EQ(s.segStart, r.segStart);
      EXPECT_EQ(std::vector<int>(s.pairA.begin(), s.pairA.end()), r.pairA);
      EXPECT_EQ(std::vector<int>(s.pairB.begin(), s.pairB.end()), r.pairB);
      for (int i = 0; i < s.numImages; ++i) {
        int diag = -1;
        for (size_t k = 0; k < r.segA.size(); ++k)
          if (r.segA[k] == i && r.segB[k] == i) diag = static_cast<int>(k);
        EXPECT_EQ(s.diagSegment[i], diag) << "image " << i;
        // Every segment touching image i, once, in segment order.
        std::vector<int> touching;
        for (size_t k = 0; k < r.segA.size(); ++k)
          if (r.segA[k] == i || r.segB[k] == i) touching.push_back(static_cast<int>(k));
        EXPECT_EQ(std::vector<int>(s.imageSegs.begin() + s.imageSegStart[i],
                                   s.imageSegs.begin() + s.imageSegStart[i + 1]),
                  touching)
            << "image " << i;
      }
      // Only the diagonal segments without the explicit system.
      listSegments(s, false);
      const RefPairs d = referencePairs(s, false);
      EXPECT_EQ(s.segA, d.segA);
      EXPECT_EQ(s.segB, d.segB);
      EXPECT_EQ(s.segStart, d.segStart);
      EXPECT_EQ(std::vector<int>(s.pairA.begin(), s.pairA.end()), d.pairA);
      EXPECT_EQ(std::vector<int>(s.pairB.begin(), s.pairB.end()), d.pairB);
    }
  setThreads(saved);
}

TEST(Structure, MatrixFoldMapMatchesTheSerialSort) {
  const int saved = maxThreads();
  for (const Problem& p : problems())
    for (int threads : {1, 4}) {
      setThreads(threads);
      const Structure s = buildStructure(p, Options(), true);
      const FoldMaps f = buildFoldMaps(s, true);
      const FoldMaps r = referenceMatrixMap(s);
      ASSERT_GT(r.matSrc.size(), 0u);
      EXPECT_EQ(f.matStart, r.matStart);
      EXPECT_EQ(f.matTarget, r.matTarget);
      EXPECT_EQ(f.matSrc, r.matSrc);
      EXPECT_EQ(f.matFactor, r.matFactor);
      EXPECT_EQ(buildFoldMaps(s, false).matStart, std::vector<int>{0});
    }
  setThreads(saved);
}

}  // namespace
}  // namespace vidmap::ba
