// The host steps both backends share after detection: ranking the oriented points and turning
// them into keypoints in input pixels.
#pragma once

#include <vector>

#include "vidmap/features/features.h"
#include "vidmap/features/sift_kernels.h"
#include "vidmap/features/sift_plan.h"

namespace vidmap::features {

// Removes extrema that converged to the same sample (level, yi, xi) as another (their
// descriptors would be equal and fail every ratio test), and orders them by that sample.
void dedupeExtrema(std::vector<Extremum>& ext);

// The point of an extremum before its orientation, with its scale (computed on the host by
// both backends so that they agree bit for bit).
SiftPoint toPoint(const Extremum& e, int octaveIndex, const ScaleSpacePlan& plan, float sigma0);

// Orders points strongest first (|value| descending; ties by octave, level, y, x, angle so the
// order does not depend on the detection order) and keeps the first maxFeatures (0: all).
void selectStrongest(std::vector<SiftPoint>& points, int maxFeatures);

// The keypoint of a point in input pixels.
Keypoint toKeypoint(const SiftPoint& p, const ScaleSpacePlan& plan);

}  // namespace vidmap::features
