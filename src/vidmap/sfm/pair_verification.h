// How the mapper verifies one pair of a video (seeds/002 item 3): the two-view options and the
// first E hypothesis for geometry::estimateRelativePose.
//   - E (five-point) with the known or self-calibrated focal length, always;
//   - H (four-point), always: the rotation (panoramic) test and the self-calibration's
//     rotation pairs;
//   - F (seven-point) for every pair while the focal length is unknown (the self-calibration
//     reads F), then only when E fails;
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
PairVerification pairVerification(const geometry::TwoViewOptions& base, bool video, bool focalKnown,
                                  const PairMatches& pm, bool swapped);

}  // namespace vidmap::sfm
