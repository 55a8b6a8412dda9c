// Many problems' hypotheses scored in one call: the batch of a lock-step RANSAC over the pairs
// of a keyframe (two_view_batch.h), where each hypothesis names its problem (its points, model
// kind and threshold). The per-(model, point) residual is batchResidualSq of score.h, summed in
// point order on the CPU; the CUDA scorer (score_batch_cuda.h) sums in a fixed block order, so
// its costs equal these up to the rounding of the order (and FMA unless built with
// VIDMAP_CUDA_NO_FMA); inlier counts are equal without FMA.
#pragma once

#include <memory>
#include <vector>

#include "vidmap/geometry/score.h"
#include "vidmap/geometry/scorer.h"

namespace vidmap::geometry {

// Every hypothesis of a batch holds this many doubles: 3x3 models use the first 9.
constexpr int kBatchModelStride = 12;

struct BatchProblem {
  ModelKind kind = ModelKind::kEpipolar;
  long offset = 0;  // first double of its points in ScoreBatch::points
  int num_points = 0;
  double threshold_sq = 1;  // inlier threshold on the squared residual
};

// The problems of a batch and their points (uploaded once to a device scorer).
struct ScoreBatch {
  std::vector<BatchProblem> problems;
  std::vector<double> points;
  // Adds a problem over `packed` (the layout of score.h for the kind); returns its index.
  int add(ModelKind kind, const std::vector<double>& packed, double threshold_sq);
  // Adds a problem over the points of problem `same` (another kind or threshold).
  int addSharing(int same, ModelKind kind, double threshold_sq);
};

// Hypotheses: the problem of each and its model (kBatchModelStride doubles, row-major).
struct HypothesisBatch {
  std::vector<int> problem;
  std::vector<double> models;
  int size() const { return static_cast<int>(problem.size()); }
  void clear() {
    problem.clear();
    models.clear();
  }
  // Appends `stride` (9 or 12) doubles, zero-padded.
  void add(int p, const double* model, int stride);
};

// Throws vidmap::Error on a hypothesis naming no problem, or problems outside the points.
std::vector<HypothesisScore> scoreBatchCpu(const ScoreBatch& batch, const HypothesisBatch& hyp);

// A scorer of batches: the problems once, then many hypothesis batches.
class BatchScorer {
 public:
  virtual ~BatchScorer() = default;
  virtual void setProblems(const ScoreBatch& batch) = 0;
  std::vector<HypothesisScore> score(const HypothesisBatch& hyp) {
    ++calls_;
    hypotheses_ += hyp.size();
    return scoreImpl(hyp);
  }
  long calls() const { return calls_; }            // score() calls (a launch pair on a device)
  long hypotheses() const { return hypotheses_; }  // hypotheses scored

 protected:
  virtual std::vector<HypothesisScore> scoreImpl(const HypothesisBatch& hyp) = 0;

 private:
  long calls_ = 0, hypotheses_ = 0;
};

class CpuBatchScorer final : public BatchScorer {
 public:
  void setProblems(const ScoreBatch& batch) override { batch_ = batch; }

 protected:
  std::vector<HypothesisScore> scoreImpl(const HypothesisBatch& hyp) override {
    return scoreBatchCpu(batch_, hyp);
  }

 private:
  ScoreBatch batch_;
};

}  // namespace vidmap::geometry
