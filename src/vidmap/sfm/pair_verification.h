// How the mapper verifies one pair of a video (seeds/002 item 3): the two-view options and the
// first E hypothesis for geometry::estimateRelativePose.
//   - E (five-point) with the known or self-calibrated focal length, always;
//   - H (four-point), always: the rotation (panoramic) test and the self-calibration's
//     rotation pairs; once the focal length is known and E explains the pair, H is only the
//     plane and rotation test, its samples cut to those that find an H passing it
//     (TwoViewOptions::homography_test_only);
//   - F (seven-point) for every pair while the focal length is unknown (the self-calibration
//     reads F); once it is estimated (self-calibrated, or refined by a first pass) only when E
//     fails, since a wrong estimate leaves E few inliers on a pair F explains; and with a focal
//     length given (a fixed camera) only when E explains part of the pair
//     (TwoViewOptions::Fundamental::kWhenEssentialExplainsPart): a pair that no E explains
//     then holds chance matches, which F's two more degrees of freedom fit;
//   - the guide's E of guided matching (PairMatches::essential) as E's first hypothesis, so
//     the guided pair is not searched from scratch a second time: on a high-inlier pair the
//     adaptive stopping rule (Hartley and Zisserman, eq. 4.18, at TwoViewOptions::confidence,
//     0.999 by default) then ends E's RANSAC after a handful of samples.
#pragma once

#include <optional>

#include "vidmap/geometry/two_view.h"
#include "vidmap/sfm/tracks.h"

namespace vidmap::sfm {

struct PairVerification {
  geometry::TwoViewOptions options;
  std::optional<geometry::Mat3> essential;  // in the order the pair is verified
  const geometry::Mat3* prior() const { return essential ? &*essential : nullptr; }
};

// `video` false: the base options and no prior (E, F and H from scratch). `swapped`: the pair
// is verified as (pm.image2, pm.image1), so the prior is transposed.
enum class FocalLength { kUnknown, kEstimated, kGiven };
PairVerification pairVerification(const geometry::TwoViewOptions& base, bool video,
                                  FocalLength focal, const PairMatches& pm, bool swapped);

// Matches of KLT tracks are not verified on their own. A pair that only tracks link
// (keyframes too far apart for the descriptor matching) has a dozen or two matches, and the
// five-point RANSAC passes such a set with a geometry nothing else confirms: on TUM fr1-desk at
// 4 fps, pairs 7 keyframes apart (40-50 degrees of turn by the ground truth) verified on 12-37
// track matches with median triangulation angles of 80-140 degrees, and the focal length ran to
// 10302 px (docs/benchmarks.md, "KLT: tracks for the gate, descriptors for the matches"). So a
// pair's geometry comes from its descriptor matches, and a track match is kept when it fits
// that geometry within maxErrorPx (pixels of p1, p2: undistorted, in the pinhole `cam`): the
// Sampson distance of the pair's E (F when uncalibrated; E also for a panoramic pair, whose H
// would refuse the parallax of a small translation), the transfer error of H when the pair has
// neither. Returns one flag per track match.
std::vector<char> trackMatchesFit(const geometry::TwoViewGeometry& g, const geometry::Pinhole& cam,
                                  const geometry::Vec2List& p1, const geometry::Vec2List& p2,
                                  double maxErrorPx);

}  // namespace vidmap::sfm
