#include "vidmap/ba/fold_maps.h"

#include <algorithm>
#include <cstdint>

#include "vidmap/core/parallel.h"

namespace vidmap::ba {

FoldMaps buildFoldMaps(const Structure& s, bool matrix) {
  FoldMaps f;
  const int C = s.C;
  std::vector<std::vector<int>> lists(s.nF);
  for (int i = 0; i < s.numImages; ++i)
    for (int c = 0; c < C; ++c) {
      const int m = s.colMap[static_cast<size_t>(i) * C + c];
      if (m >= 0) lists[m].push_back(i * C + c);
    }
  f.vecStart.assign(s.nF + 1, 0);
  for (int m = 0; m < s.nF; ++m) {
    f.vecStart[m + 1] = f.vecStart[m] + static_cast<int>(lists[m].size());
    f.vecSrc.insert(f.vecSrc.end(), lists[m].begin(), lists[m].end());
  }
  f.matStart.push_back(0);
  if (!matrix) return f;
  // Each contribution lands on (row, col) = (min(R, K), max(R, K)) of the upper triangle. The
  // targets are listed by row, then column, and each target sums its sources in the order of
  // (segment, r, c). Built in parallel, without a list of all contributions: chunks of segments
  // count their contributions by row, then write each straight into its row's bucket (stable:
  // chunk t after chunks < t), and each row is sorted by column (stable). The former serial
  // sort of 24-byte contributions by 64-bit keys took 20 ms at 93 images and 0.25 s at 300 on
  // the H200's host (docs/benchmarks.md, issue 13, helper ba34).
  struct Contribution {
    int col, src;
    float factor;  // 1 or 2: exact
  };
  const int n = s.nF;
  const int ns = static_cast<int>(s.segA.size());
  auto forSegment = [&](int g, auto&& emit) {
    const int ia = s.segA[g], ib = s.segB[g];
    for (int r = 0; r < C; ++r) {
      const int R = s.colMap[static_cast<size_t>(ia) * C + r];
      if (R < 0) continue;
      for (int c = 0; c < C; ++c) {
        const int K = s.colMap[static_cast<size_t>(ib) * C + c];
        if (K < 0) continue;
        const int src = (g * C + r) * C + c;
        if (ia == ib) {
          if (R <= K) emit(R, K, src, 1.0f);  // B is the whole symmetric E(i, i)
        } else if (R == K) {
          emit(R, K, src, 2.0f);  // a shared camera's column: B and B'
        } else {
          emit(std::min(R, K), std::max(R, K), src, 1.0f);
        }
      }
    }
  };
  const int chunks = std::max(1, std::min(64, ns));
  auto chunkBegin = [&](std::int64_t t) { return static_cast<int>(ns * t / chunks); };
  std::vector<std::int64_t> cnt(static_cast<size_t>(chunks) * (n + 1), 0);
  parallelFor(chunks, [&](std::int64_t t) {
    std::int64_t* c = &cnt[static_cast<size_t>(t) * (n + 1)];
    for (int g = chunkBegin(t); g < chunkBegin(t + 1); ++g)
      forSegment(g, [&](int R, int, int, float) { ++c[R]; });
  });
  std::vector<std::int64_t> rowStart(n + 1, 0);
  std::int64_t at = 0;
  for (int R = 0; R < n; ++R) {
    rowStart[R] = at;
    for (int t = 0; t < chunks; ++t) {
      std::int64_t& c = cnt[static_cast<size_t>(t) * (n + 1) + R];
      const std::int64_t m = c;
      c = at;
      at += m;
    }
  }
  rowStart[n] = at;
  std::vector<Contribution> byRow(static_cast<size_t>(at));
  parallelFor(chunks, [&](std::int64_t t) {
    std::int64_t* c = &cnt[static_cast<size_t>(t) * (n + 1)];
    for (int g = chunkBegin(t); g < chunkBegin(t + 1); ++g)
      forSegment(g, [&](int R, int K, int src, float factor) { byRow[c[R]++] = {K, src, factor}; });
  });
  // Each row by column (stable), then its targets counted.
  std::vector<int> rowTargets(n + 1, 0);
  parallelForDynamic(n, [&](std::int64_t R) {
    const auto b = byRow.begin() + rowStart[R], e = byRow.begin() + rowStart[R + 1];
    std::stable_sort(b, e,
                     [](const Contribution& x, const Contribution& y) { return x.col < y.col; });
    int u = 0;
    for (auto it = b; it != e; ++it) u += (it == b || it->col != (it - 1)->col) ? 1 : 0;
    rowTargets[R + 1] = u;
  });
  for (int R = 0; R < n; ++R) rowTargets[R + 1] += rowTargets[R];
  const int numTargets = rowTargets[n];
  f.matStart.resize(static_cast<size_t>(numTargets) + 1);
  f.matTarget.resize(numTargets);
  f.matSrc.resize(byRow.size());
  f.matFactor.resize(byRow.size());
  parallelForDynamic(n, [&](std::int64_t R) {
    int q = rowTargets[R];
    for (std::int64_t k = rowStart[R]; k < rowStart[R + 1]; ++k) {
      const Contribution& c = byRow[k];
      if (k == rowStart[R] || c.col != byRow[k - 1].col) {
        f.matStart[q] = static_cast<int>(k);
        f.matTarget[q++] = R * n + c.col;
      }
      f.matSrc[k] = c.src;
      f.matFactor[k] = c.factor;
    }
  });
  f.matStart[numTargets] = static_cast<int>(byRow.size());
  if (byRow.empty()) f.matStart.resize(1);
  return f;
}

}  // namespace vidmap::ba
