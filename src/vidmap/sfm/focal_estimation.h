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

// The focal length's profile over a video's first pairs, calibrated: at each f the relative pose
// of every pair is refined on the Sampson error of E = [t]x R (geometry::refineRelativePose, a
// Cauchy loss) and the robust costs, in pixels^2, are summed; the f of the least cost is the
// maximum-likelihood focal length of the pairs (8 unknowns F less 7: two views with parallax
// determine f; H. Stewenius, D. Nister, F. Kahl and F. Schaffalitzky, "A minimal solution for
// relative pose with unknown focal length", CVPR 2005). Unlike the homography's reading above it
// is not biased by a translation that the homography takes for rotation (a pan walked sideways
// reads 2-3% long there: docs/benchmarks.md, "The KLT gate's pans: the focal length's start
// swept"), and a pure rotation still fits only at the true f (E = [t]x R holds for any t).
struct FocalPair {
  geometry::Vec2List p1, p2;  // matches, pixels (undistorted)
  geometry::Pose relative;    // a start pose at focal0 (t may be zero)
};

struct FocalProfile {
  double focal = 0;
  double cost = 0;          // the summed robust cost at the minimum (pixels^2)
  bool atBoundary = false;  // the least cost at an end of [minFocal, maxFocal]: not determined
  int points = 0;           // the matches used (within maxErrorPx at focal0)
  double startCost = 0;     // the summed robust cost at focal0
  // The likelihood ratio of the minimum against focal0: 2 (startCost - cost) / s2, s2 = 2 cost /
  // points the mean squared residual (chi-square with one degree of freedom where focal0 is
  // the truth).
  double ratio = 0;
};

// Searches f in [minFocal, maxFocal] (focal0 inside it). The matches whose Sampson error exceeds
// maxErrorPx at focal0 are dropped; lossPx: the Cauchy scale. Returns nullopt without pairs.
std::optional<FocalProfile> profileFocal(const std::vector<FocalPair>& pairs, double cx, double cy,
                                         double focal0, double minFocal, double maxFocal,
                                         double maxErrorPx = 4.0, double lossPx = 1.0);

}  // namespace vidmap::sfm
