#include "vidmap/sfm/pair_verification.h"

#include <cmath>

namespace vidmap::sfm {

PairVerification pairVerification(const geometry::TwoViewOptions& base, bool video, bool focalKnown,
                                  const PairMatches& pm, bool swapped) {
  PairVerification v;
  v.options = base;
  if (!video) return v;
  if (focalKnown)
    v.options.fundamental = geometry::TwoViewOptions::Fundamental::kWhenEssentialFails;
  if (pm.essential) {
    geometry::Mat3 E;
    bool finite = true;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        E(i, j) = (*pm.essential)[3 * i + j];
        finite = finite && std::isfinite(E(i, j));
      }
    if (finite && E.norm() > 0) v.essential = swapped ? geometry::Mat3(E.transpose()) : E;
  }
  return v;
}

}  // namespace vidmap::sfm
