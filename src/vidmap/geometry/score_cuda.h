// The CUDA batched hypothesis scorer: one launch scores a batch of models against all
// correspondences (a grid of models x point blocks; each thread evaluates batchResidualSq of
// score.h for its (model, point) pairs, a block reduces, a second tiny kernel sums the blocks
// in a fixed order, so the result does not depend on scheduling). The correspondences are
// uploaded once per pair and reused for every batch. Built only with CUDA; no CUDA types here.
// Memory and kernel time are accounted in the gpu::Context (kernel "geometry.score").
#pragma once

#include <memory>
#include <vector>

#include "vidmap/geometry/scorer.h"
#include "vidmap/gpu/context.h"

namespace vidmap::geometry {

class CudaHypothesisScorer {
 public:
  explicit CudaHypothesisScorer(gpu::Context& ctx);
  ~CudaHypothesisScorer();
  CudaHypothesisScorer(const CudaHypothesisScorer&) = delete;
  CudaHypothesisScorer& operator=(const CudaHypothesisScorer&) = delete;

  // Uploads the correspondences (layout of score.h for the kind). Throws vidmap::Error.
  void setPoints(ModelKind kind, const std::vector<double>& points);
  // Scores num_models = models.size() / modelStride(kind) models; equals scoreHypothesesCpu up
  // to the order of the floating-point sums (and FMA unless built with VIDMAP_CUDA_NO_FMA).
  std::vector<HypothesisScore> score(const std::vector<double>& models, double threshold_sq);
  // Milliseconds of the last score() on the device (upload + kernels + download, CUDA events).
  float lastDeviceMs() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::geometry
