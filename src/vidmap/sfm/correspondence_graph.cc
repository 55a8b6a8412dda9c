#include "vidmap/sfm/correspondence_graph.h"

#include <string>

#include "vidmap/core/error.h"

namespace vidmap::sfm {

void CorrespondenceGraph::addImage(int id, int numKeypoints) {
  require(id == numImages(), "correspondence graph: images must be added in order (got " +
                                 std::to_string(id) + ", expected " + std::to_string(numImages()) +
                                 ")");
  require(numKeypoints >= 0, "correspondence graph: negative keypoint count");
  corr_.emplace_back(static_cast<size_t>(numKeypoints));
  neighbours_.emplace_back();
  observable_.push_back(0);
}

void CorrespondenceGraph::addPair(int a, int b, const std::vector<std::pair<int, int>>& matches) {
  require(a >= 0 && b >= 0 && a < numImages() && b < numImages() && a != b,
          "correspondence graph: pair (" + std::to_string(a) + ", " + std::to_string(b) +
              ") names an unknown image");
  require(!hasPair(a, b), "correspondence graph: pair (" + std::to_string(a) + ", " +
                              std::to_string(b) + ") added twice");
  for (const auto& [ka, kb] : matches)
    require(ka >= 0 && kb >= 0 && ka < numKeypoints(a) && kb < numKeypoints(b),
            "correspondence graph: a match of pair (" + std::to_string(a) + ", " +
                std::to_string(b) + ") names a keypoint out of range");
  for (const auto& [ka, kb] : matches) {
    auto& ca = corr_[a][ka];
    auto& cb = corr_[b][kb];
    if (ca.empty()) ++observable_[a];
    if (cb.empty()) ++observable_[b];
    ca.push_back({b, kb});
    cb.push_back({a, ka});
  }
  neighbours_[a][b] = static_cast<int>(matches.size());
  neighbours_[b][a] = static_cast<int>(matches.size());
}

bool CorrespondenceGraph::hasPair(int a, int b) const {
  return a >= 0 && a < numImages() && neighbours_[a].count(b) != 0;
}

std::vector<std::pair<int, int>> CorrespondenceGraph::pairMatches(int a, int b) const {
  std::vector<std::pair<int, int>> out;
  if (!hasPair(a, b)) return out;
  for (int k = 0; k < numKeypoints(a); ++k)
    for (const FeatureRef& r : corr_[a][k])
      if (r.image == b) out.emplace_back(k, r.feature);
  return out;
}

}  // namespace vidmap::sfm
