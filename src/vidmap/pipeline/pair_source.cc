#include "vidmap/pipeline/pair_source.h"

#include <algorithm>
#include <set>
#include <utility>

namespace vidmap::pipeline {

namespace {

sfm::PairMatches normalised(const sfm::PairMatches& p) {
  if (p.image1 < p.image2) return p;
  sfm::PairMatches q;
  q.image1 = p.image2;
  q.image2 = p.image1;
  q.matches.reserve(p.matches.size());
  for (const auto& [a, b] : p.matches) q.matches.emplace_back(b, a);
  return q;
}

}  // namespace

std::int64_t mergePairMatches(std::vector<sfm::PairMatches>& pairs,
                              const std::vector<sfm::PairMatches>& extra) {
  std::int64_t added = 0;
  for (sfm::PairMatches& p : pairs) p = normalised(p);
  for (const sfm::PairMatches& e0 : extra) {
    const sfm::PairMatches e = normalised(e0);
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const sfm::PairMatches& p) {
      return p.image1 == e.image1 && p.image2 == e.image2;
    });
    if (it == pairs.end()) {
      pairs.push_back({e.image1, e.image2, {}});
      it = pairs.end() - 1;
    }
    std::set<std::pair<int, int>> have(it->matches.begin(), it->matches.end());
    for (const auto& m : e.matches)
      if (have.insert(m).second) {
        it->matches.push_back(m);
        ++added;
      }
  }
  return added;
}

}  // namespace vidmap::pipeline
