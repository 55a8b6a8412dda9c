#include "vidmap/sfm/pair_verification.h"

#include <cmath>

#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/score.h"

namespace vidmap::sfm {

PairVerification pairVerification(const geometry::TwoViewOptions& base, bool video,
                                  FocalLength focal, const PairMatches& pm, bool swapped) {
  PairVerification v;
  v.options = base;
  if (!video) return v;
  if (focal != FocalLength::kUnknown) {
    // fr1-desk at all frames on the H200 (its first pass starts 34% long): F kept for the
    // pairs no E explains while the focal length is an estimate, ATE 27.2 mm; not, 41.8 mm
    // (docs/benchmarks.md, "The mapper's host work on the H200, pairs no E explains, and a 10 Hz
    // list read as sparse").
    v.options.fundamental = focal == FocalLength::kGiven
                                ? geometry::TwoViewOptions::Fundamental::kWhenEssentialExplainsPart
                                : geometry::TwoViewOptions::Fundamental::kWhenEssentialFails;
    v.options.homography_test_only = true;
  }
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

std::vector<char> trackMatchesFit(const geometry::TwoViewGeometry& g, const geometry::Pinhole& cam,
                                  const geometry::Vec2List& p1, const geometry::Vec2List& p2,
                                  double maxErrorPx) {
  std::vector<char> fit(p1.size(), 0);
  if (!g.success()) return fit;
  bool homography = false;
  geometry::Mat3 M = geometry::Mat3::Zero();
  if (g.config != geometry::TwoViewConfig::kUncalibrated && g.E.norm() > 0) {
    const geometry::Mat3 Ki = cam.K().inverse();
    M = Ki.transpose() * g.E * Ki;  // F of E in pixels
  } else if (g.F.norm() > 0) {
    M = g.F;
  } else {
    M = g.H;
    homography = true;
  }
  if (!(M.norm() > 0)) return fit;
  const geometry::Mat3R R = M;  // the residuals read row-major
  const double t2 = maxErrorPx * maxErrorPx;
  for (size_t k = 0; k < p1.size(); ++k) {
    const double e =
        homography ? geometry::homographySq(R.data(), p1[k].x(), p1[k].y(), p2[k].x(), p2[k].y())
                   : geometry::sampsonSq(R.data(), p1[k].x(), p1[k].y(), p2[k].x(), p2[k].y());
    fit[k] = e <= t2;
  }
  return fit;
}

}  // namespace vidmap::sfm
