// The steps after detection: deduping the extrema and ranking the oriented points (the CPU
// backend's code; the CUDA backend does the same on the device, sift_cuda.cu, and the tests
// hold it to this order) and turning points into keypoints in input pixels.
#pragma once

#include <vector>

#include "vidmap/features/features.h"
#include "vidmap/features/sift_kernels.h"
#include "vidmap/features/sift_plan.h"

namespace vidmap::features {

// Removes extrema that converged to the same sample (level, yi, xi) as another (their
// descriptors would be equal and fail every ratio test), and orders them by that sample.
void dedupeExtrema(std::vector<Extremum>& ext);

// The point of an extremum before its orientation, with its scale (keypointSigmaAt, which the
// device computes alike).
SiftPoint toPoint(const Extremum& e, int octaveIndex, const ScaleSpacePlan& plan, float sigma0);

// Orders points strongest first by strongerPoint (sift_kernels.h: |value| descending; ties by
// octave, level, y, x, angle so the order does not depend on the detection order) and keeps the
// first maxFeatures (0: all).
void selectStrongest(std::vector<SiftPoint>& points, int maxFeatures);

// The keypoint of a point in input pixels.
Keypoint toKeypoint(const SiftPoint& p, const ScaleSpacePlan& plan);

}  // namespace vidmap::features
