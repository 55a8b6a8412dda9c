#include "vidmap/ba/fold_maps.h"

#include <algorithm>

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
  struct Contribution {
    std::int64_t target;
    int src;
    double factor;
  };
  std::vector<Contribution> all;
  const std::int64_t n = s.nF;
  const int ns = static_cast<int>(s.segA.size());
  for (int g = 0; g < ns; ++g) {
    const int ia = s.segA[g], ib = s.segB[g];
    for (int r = 0; r < C; ++r) {
      const std::int64_t R = s.colMap[static_cast<size_t>(ia) * C + r];
      if (R < 0) continue;
      for (int c = 0; c < C; ++c) {
        const std::int64_t K = s.colMap[static_cast<size_t>(ib) * C + c];
        if (K < 0) continue;
        const int src = (g * C + r) * C + c;
        if (ia == ib) {
          if (R <= K) all.push_back({R * n + K, src, 1.0});  // B is the whole symmetric E(i, i)
        } else if (R == K) {
          all.push_back({R * n + K, src, 2.0});  // a shared camera's column: B and B'
        } else {
          all.push_back({std::min(R, K) * n + std::max(R, K), src, 1.0});
        }
      }
    }
  }
  // Stable sort by target = row * n + column: two stable counting sorts (column, then row),
  // linear in the contributions (a comparison sort took tens of milliseconds at 90 images).
  {
    std::vector<Contribution> tmp(all.size());
    auto countingSort = [&](auto key) {
      std::vector<std::int64_t> start(n + 1, 0);
      for (const Contribution& c : all) ++start[key(c) + 1];
      for (std::int64_t k = 0; k < n; ++k) start[k + 1] += start[k];
      for (const Contribution& c : all) tmp[start[key(c)]++] = c;
      all.swap(tmp);
    };
    countingSort([n](const Contribution& c) { return c.target % n; });
    countingSort([n](const Contribution& c) { return c.target / n; });
  }
  for (size_t k = 0; k < all.size(); ++k) {
    if (k > 0 && all[k].target != all[k - 1].target) f.matStart.push_back(static_cast<int>(k));
    if (k == 0 || all[k].target != all[k - 1].target) f.matTarget.push_back(all[k].target);
    f.matSrc.push_back(all[k].src);
    f.matFactor.push_back(all[k].factor);
  }
  if (!all.empty()) f.matStart.push_back(static_cast<int>(all.size()));
  return f;
}

}  // namespace vidmap::ba
