// Batched hypothesis scoring: many models (E/F/H as 3x3, PnP as 3x4, row-major) against all
// correspondences, the MSAC cost and inlier count of each. The CPU scorer here is the oracle of
// the CUDA scorer (score_cuda.h), and both evaluate batchResidualSq of score.h per
// (model, point). A RANSAC driver can generate a batch of 256-512 hypotheses and pick the best
// with one call instead of scoring them one by one.
#pragma once

#include <vector>

#include "vidmap/geometry/score.h"

namespace vidmap::geometry {

struct HypothesisScore {
  double cost = 0;  // sum over points of min(r^2, t^2)
  int inliers = 0;  // points with r^2 < t^2
};

// models: num_models x modelStride(kind) doubles; points: num_points x pointStride(kind).
// The cost of each model is summed in point order. Throws vidmap::Error on bad sizes.
std::vector<HypothesisScore> scoreHypothesesCpu(ModelKind kind, const std::vector<double>& models,
                                                const std::vector<double>& points,
                                                double threshold_sq);

// The index of the best score: lowest cost, ties to the lowest index (-1 when empty).
int bestHypothesis(const std::vector<HypothesisScore>& scores);

}  // namespace vidmap::geometry
