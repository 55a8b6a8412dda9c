// Maps that fold the per-image expanded camera-side columns into the reduced camera system
// (structure.h): a vector map (each reduced column sums its expanded sources, one for an
// exclusive column, one per image for a shared camera's column) and, for the explicit system,
// a matrix map (each upper-triangle entry of S sums factor * B[src] over the segment-block
// elements that land on it: E(i, k) = B and E(k, i) = B' of segment (i, k)). Each target sums
// its sources in a fixed order on every backend.
#pragma once

#include <cstdint>
#include <vector>

#include "vidmap/ba/structure.h"

namespace vidmap::ba {

struct FoldMaps {
  std::vector<int> vecStart, vecSrc;    // per reduced column; sources are i * C + c
  std::vector<int> matStart;            // per listed target
  std::vector<std::int64_t> matTarget;  // row * nF + col, row <= col
  std::vector<int> matSrc;              // segment * C * C + r * C + c
  std::vector<double> matFactor;        // 1, or 2 where B and B' land on one diagonal entry
};

FoldMaps buildFoldMaps(const Structure& s, bool matrix);

}  // namespace vidmap::ba
