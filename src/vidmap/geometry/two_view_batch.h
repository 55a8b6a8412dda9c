// Two-view verification of many pairs at once (the pairs of a keyframe): the E, F and H
// RANSACs of all pairs run in lock-step rounds (ransac_lockstep.h), each round's hypotheses of
// every pair scored in one BatchScorer call (CpuBatchScorer, or CudaBatchScorer: one launch
// pair per round on the GPU), then each pair's model choice, pose and triangulation as
// estimateRelativePose (two_view.h) does, in parallel over the pairs. The result of every pair
// equals estimateRelativePose's on it bit for bit, whatever the scorer and the number of
// threads (the lock-step replay re-scores on the CPU every hypothesis that can become the
// best; two_view_batch_test and score_batch_cuda_test check it).
#pragma once

#include <optional>
#include <vector>

#include "vidmap/geometry/ransac_lockstep.h"
#include "vidmap/geometry/two_view.h"

namespace vidmap::geometry {

struct TwoViewPair {
  const Vec2List* pts1 = nullptr;  // pixels; not owned, alive during the call
  const Vec2List* pts2 = nullptr;
  Pinhole cam1, cam2;
  TwoViewOptions options;
  std::optional<Mat3> essential_prior;  // as estimateRelativePose's
};

struct TwoViewBatchStats {
  int rounds = 0;       // lock-step rounds (scorer calls), both phases
  long hypotheses = 0;  // hypotheses scored by the scorer
};

// One geometry per pair, in order. Throws vidmap::Error as estimateRelativePose does (the first
// failing pair's, in order).
std::vector<TwoViewGeometry> estimateRelativePoses(const std::vector<TwoViewPair>& pairs,
                                                   BatchScorer& scorer,
                                                   const LockstepOptions& lockstep = {},
                                                   TwoViewBatchStats* stats = nullptr);

}  // namespace vidmap::geometry
