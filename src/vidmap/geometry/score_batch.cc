#include "vidmap/geometry/score_batch.h"

#include <algorithm>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"

namespace vidmap::geometry {

int ScoreBatch::add(ModelKind kind, const std::vector<double>& packed, double threshold_sq) {
  const int ps = pointStride(kind);
  require(packed.size() % ps == 0, "ScoreBatch: points size " + std::to_string(packed.size()) +
                                       " is not a multiple of " + std::to_string(ps));
  require(threshold_sq > 0, "ScoreBatch: threshold_sq must be positive");
  problems.push_back(
      {kind, static_cast<long>(points.size()), static_cast<int>(packed.size() / ps), threshold_sq});
  points.insert(points.end(), packed.begin(), packed.end());
  return static_cast<int>(problems.size()) - 1;
}

int ScoreBatch::addSharing(int same, ModelKind kind, double threshold_sq) {
  require(same >= 0 && same < static_cast<int>(problems.size()),
          "ScoreBatch: problem " + std::to_string(same) + " does not exist");
  const BatchProblem& s = problems[same];
  require(pointStride(kind) == pointStride(s.kind),
          "ScoreBatch: a problem shares points of another layout");
  require(threshold_sq > 0, "ScoreBatch: threshold_sq must be positive");
  problems.push_back({kind, s.offset, s.num_points, threshold_sq});
  return static_cast<int>(problems.size()) - 1;
}

void HypothesisBatch::add(int p, const double* model, int stride) {
  require(stride == 9 || stride == 12, "HypothesisBatch: a model has 9 or 12 entries");
  problem.push_back(p);
  models.insert(models.end(), model, model + stride);
  models.insert(models.end(), kBatchModelStride - stride, 0.0);
}

namespace {

// One hypothesis' cost, the kind resolved once (each loop calls one residual function).
template <class Residual>
HypothesisScore scoreOne(Residual residual, const double* model, const double* points, int n,
                         int ps, double t2) {
  double cost = 0;
  int inl = 0;
  for (int i = 0; i < n; ++i) {
    const double r2 = residual(model, points + static_cast<long>(i) * ps);
    inl += r2 < t2;
    cost += msacCost(r2, t2);
  }
  return {cost, inl};
}

}  // namespace

std::vector<HypothesisScore> scoreBatchCpu(const ScoreBatch& batch, const HypothesisBatch& hyp) {
  const int np = static_cast<int>(batch.problems.size());
  require(hyp.models.size() == hyp.problem.size() * kBatchModelStride,
          "scoreBatchCpu: " + std::to_string(hyp.models.size()) + " model entries for " +
              std::to_string(hyp.problem.size()) + " hypotheses");
  for (const BatchProblem& p : batch.problems)
    require(p.offset >= 0 && p.num_points >= 0 &&
                p.offset + static_cast<long>(p.num_points) * pointStride(p.kind) <=
                    static_cast<long>(batch.points.size()),
            "scoreBatchCpu: a problem's points lie outside the batch");
  for (int p : hyp.problem)
    require(p >= 0 && p < np, "scoreBatchCpu: a hypothesis names problem " + std::to_string(p) +
                                  " of " + std::to_string(np));
  std::vector<HypothesisScore> out(hyp.problem.size());
  parallelFor(static_cast<std::int64_t>(out.size()), [&](std::int64_t h) {
    const BatchProblem& p = batch.problems[hyp.problem[h]];
    const double* m = &hyp.models[h * kBatchModelStride];
    const double* pts = batch.points.data() + p.offset;
    const int ps = pointStride(p.kind);
    switch (p.kind) {
      case ModelKind::kEpipolar:
        out[h] = scoreOne(
            [](const double* M, const double* q) { return sampsonSq(M, q[0], q[1], q[2], q[3]); },
            m, pts, p.num_points, ps, p.threshold_sq);
        break;
      case ModelKind::kHomography:
        out[h] = scoreOne([](const double* H,
                             const double* q) { return homographySq(H, q[0], q[1], q[2], q[3]); },
                          m, pts, p.num_points, ps, p.threshold_sq);
        break;
      case ModelKind::kProjection:
        out[h] = scoreOne(
            [](const double* P, const double* q) {
              return reprojectionSq(P, q[0], q[1], q[2], q[3], q[4]);
            },
            m, pts, p.num_points, ps, p.threshold_sq);
        break;
    }
  });
  return out;
}

}  // namespace vidmap::geometry
