// Measures of detector and matcher quality against known geometry (a homography between two
// views, or the epipolar geometry of two calibrated cameras), for tests and benchmarks.
#pragma once

#include <array>
#include <vector>

#include "vidmap/features/features.h"
#include "vidmap/features/matcher.h"

namespace vidmap::features::testing {

struct Repeatability {
  int commonA = 0;           // keypoints of A whose image under H lies inside B (margin 8 px)
  int commonB = 0;           // keypoints of B whose image under H^-1 lies inside A
  int repeated = 0;          // keypoints of A (in the common part) with a keypoint of B nearby
  double rate = 0;           // repeated / min(commonA, commonB)
  double medianErrorPx = 0;  // median distance |H a - b| of the repeated pairs
};

// A keypoint a is repeated when a keypoint b of B lies within maxPx of H(a) and the scales
// agree: b.scale / (s a.scale) in [1 / maxScaleRatio, maxScaleRatio] with s the local scale of
// H at a (sqrt |det J|). Positions with several orientations count once.
Repeatability repeatability(const Features& a, const Features& b, const std::array<double, 9>& H,
                            double maxPx = 1.5, double maxScaleRatio = 1.5);

// The fraction of matches with |H(a) - b| < maxPx (1 when there are no matches).
double matchPrecision(const std::vector<Match>& m, const Features& a, const Features& b,
                      const std::array<double, 9>& H, double maxPx);

// The Sampson distances (pixels) of the matches under F (x_b^T F x_a = 0).
std::vector<double> sampsonDistances(const std::vector<Match>& m, const Features& a,
                                     const Features& b, const std::array<double, 9>& F);

// Fraction of values below t.
double fractionBelow(const std::vector<double>& v, double t);

double median(std::vector<double> v);

}  // namespace vidmap::features::testing
