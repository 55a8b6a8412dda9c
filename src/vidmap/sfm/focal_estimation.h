// Self-calibration of an unknown focal length from the two-view models of a video's first
// pairs, before the mapper initialises (an initial model built with a wrong focal length
// settles in a wrong minimum of bundle adjustment, most of all under rotation).
//
// With the principal point known and square pixels, K(f) = [f 0 cx; 0 f cy; 0 0 1]:
//   - a pair with parallax gives F; E(f) = K^T F K is essential only at the true f, where its
//     two non-zero singular values are equal (P. R. S. Mendonca and R. Cipolla, "A simple
//     technique for self-calibration", CVPR 1999): cost (s1 - s2) / (s1 + s2);
//   - a pair related by a pure rotation gives H = K R K^-1; K^-1 H K is a rotation only at the
//     true f (R. I. Hartley, "Self-calibration of stationary cameras", IJCV 1997): cost
//     (s1 - s3) / (s1 + s3) of its singular values.
// The inlier-weighted costs are summed over the pairs and minimised over f (a log grid, then
// golden-section search).
#pragma once

#include <optional>
#include <vector>

#include "vidmap/geometry/types.h"

namespace vidmap::sfm {

struct FocalObservation {
  enum Kind { kFundamental, kRotation } kind = kFundamental;
  geometry::Mat3 M;  // F or H, in pixels
  double weight = 1;
};

struct FocalEstimate {
  double focal = 0;
  double cost = 0;       // weighted mean cost at the minimum
  double sharpness = 0;  // mean cost over the search range / cost at the minimum
  // The minimum lies at an end of the search range: the cost still falls beyond it, so the
  // focal length is not determined by the observations (not an estimate to use).
  bool atBoundary = false;
};

// Searches f in [minFocal, maxFocal]. Returns nullopt with no observations.
std::optional<FocalEstimate> estimateFocal(const std::vector<FocalObservation>& obs, double cx,
                                           double cy, double minFocal, double maxFocal);

// The cost of one observation at focal f (exposed for tests).
double focalCost(const FocalObservation& o, double f, double cx, double cy);

}  // namespace vidmap::sfm
