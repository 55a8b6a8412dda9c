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
  if (p.essential) {  // x1^T E^T x2 = 0: the transpose for the swapped order
    const auto& e = *p.essential;
    q.essential = std::array<double, 9>{e[0], e[3], e[6], e[1], e[4], e[7], e[2], e[5], e[8]};
  }
  q.firstTrackMatch = p.firstTrackMatch;
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
      it->firstTrackMatch = 0;
    }
    std::set<std::pair<int, int>> have(it->matches.begin(), it->matches.end());
    if (it->firstTrackMatch < 0) it->firstTrackMatch = static_cast<int>(it->matches.size());
    for (const auto& m : e.matches)
      if (have.insert(m).second) {
        it->matches.push_back(m);
        ++added;
      }
  }
  return added;
}

}  // namespace vidmap::pipeline
