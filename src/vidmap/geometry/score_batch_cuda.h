// The CUDA scorer of hypothesis batches (score_batch.h): the problems' points uploaded once,
// then each batch in one launch pair. Kernel 1, grid (hypotheses, point blocks): each thread
// sums batchResidualSq of score.h over a strided set of its hypothesis' points, the block
// reduces in a fixed order and writes one partial; kernel 2 adds a hypothesis' partials in
// block order. The result does not depend on scheduling; it equals scoreBatchCpu up to the
// order of the sums (and FMA unless built with VIDMAP_CUDA_NO_FMA). Kernel time and memory are
// accounted in the gpu::Context (kernel "geometry.score_batch"). Built only with CUDA; no CUDA
// types here.
#pragma once

#include <memory>

#include "vidmap/geometry/score_batch.h"
#include "vidmap/gpu/context.h"

namespace vidmap::geometry {

class CudaBatchScorer final : public BatchScorer {
 public:
  explicit CudaBatchScorer(gpu::Context& ctx);
  ~CudaBatchScorer() override;
  CudaBatchScorer(const CudaBatchScorer&) = delete;
  CudaBatchScorer& operator=(const CudaBatchScorer&) = delete;

  void setProblems(const ScoreBatch& batch) override;
  float lastDeviceMs() const;  // the last score() on the device (upload, kernels, download)

 protected:
  std::vector<HypothesisScore> scoreImpl(const HypothesisBatch& hyp) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::geometry
