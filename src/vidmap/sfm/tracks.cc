#include "vidmap/sfm/tracks.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>

#include "vidmap/core/error.h"

namespace vidmap::sfm {

namespace {

struct UnionFind {
  std::vector<std::int64_t> parent;
  explicit UnionFind(std::int64_t n) : parent(static_cast<size_t>(n)) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  std::int64_t find(std::int64_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  // The smaller root becomes the parent, so components do not depend on the edge order.
  void unite(std::int64_t a, std::int64_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

}  // namespace

TrackSet buildTracks(const std::vector<int>& numFeatures, const std::vector<PairMatches>& pairs) {
  std::vector<std::int64_t> offset(numFeatures.size() + 1, 0);
  for (size_t i = 0; i < numFeatures.size(); ++i) {
    require(numFeatures[i] >= 0, "negative feature count of image " + std::to_string(i));
    offset[i + 1] = offset[i] + numFeatures[i];
  }
  const int numImages = static_cast<int>(numFeatures.size());
  UnionFind uf(offset.back());
  std::vector<char> used(static_cast<size_t>(offset.back()), 0);
  for (const auto& p : pairs) {
    require(p.image1 >= 0 && p.image1 < numImages && p.image2 >= 0 && p.image2 < numImages &&
                p.image1 != p.image2,
            "match pair names an invalid image pair (" + std::to_string(p.image1) + ", " +
                std::to_string(p.image2) + ")");
    for (const auto& [f1, f2] : p.matches) {
      require(f1 >= 0 && f1 < numFeatures[p.image1] && f2 >= 0 && f2 < numFeatures[p.image2],
              "match names a feature out of range in pair (" + std::to_string(p.image1) + ", " +
                  std::to_string(p.image2) + ")");
      auto a = offset[p.image1] + f1, b = offset[p.image2] + f2;
      uf.unite(a, b);
      used[a] = used[b] = 1;
    }
  }
  // Group nodes by root, in node order (deterministic).
  std::unordered_map<std::int64_t, int> trackOf;
  std::vector<std::vector<FeatureRef>> comps;
  for (int img = 0; img < numImages; ++img) {
    for (int f = 0; f < numFeatures[img]; ++f) {
      auto node = offset[img] + f;
      if (!used[node]) continue;
      auto root = uf.find(node);
      auto [it, fresh] = trackOf.emplace(root, static_cast<int>(comps.size()));
      if (fresh) comps.emplace_back();
      comps[it->second].push_back({img, f});
    }
  }
  TrackSet out;
  for (auto& c : comps) {
    // Nodes were visited in image order, so a repeated image is adjacent.
    bool consistent = true;
    for (size_t i = 1; i < c.size(); ++i) consistent &= c[i].image != c[i - 1].image;
    if (!consistent) {
      ++out.dropped_inconsistent;
      continue;
    }
    out.tracks.push_back(std::move(c));
  }
  return out;
}

}  // namespace vidmap::sfm
