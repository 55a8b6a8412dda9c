#include "vidmap/geometry/scorer.h"

#include <string>

#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"

namespace vidmap::geometry {

std::vector<HypothesisScore> scoreHypothesesCpu(ModelKind kind, const std::vector<double>& models,
                                                const std::vector<double>& points,
                                                double threshold_sq) {
  const int ms = modelStride(kind), ps = pointStride(kind);
  require(models.size() % ms == 0, "scoreHypothesesCpu: models size " +
                                       std::to_string(models.size()) + " is not a multiple of " +
                                       std::to_string(ms));
  require(points.size() % ps == 0, "scoreHypothesesCpu: points size " +
                                       std::to_string(points.size()) + " is not a multiple of " +
                                       std::to_string(ps));
  require(threshold_sq > 0, "scoreHypothesesCpu: threshold_sq must be positive");
  const long nm = static_cast<long>(models.size() / ms);
  const long np = static_cast<long>(points.size() / ps);
  std::vector<HypothesisScore> out(nm);
  // The kind is resolved once per call, so each inner loop calls one residual function.
  auto scoreAll = [&](auto residual) {
    parallelFor(nm, [&](std::int64_t m) {
      const double* model = &models[m * ms];
      double cost = 0;
      int inl = 0;
      for (long i = 0; i < np; ++i) {
        const double r2 = residual(model, &points[i * ps]);
        inl += r2 < threshold_sq;
        cost += msacCost(r2, threshold_sq);
      }
      out[m] = {cost, inl};
    });
  };
  switch (kind) {
    case ModelKind::kEpipolar:
      scoreAll(
          [](const double* M, const double* p) { return sampsonSq(M, p[0], p[1], p[2], p[3]); });
      break;
    case ModelKind::kHomography:
      scoreAll(
          [](const double* H, const double* p) { return homographySq(H, p[0], p[1], p[2], p[3]); });
      break;
    case ModelKind::kProjection:
      scoreAll([](const double* P, const double* p) {
        return reprojectionSq(P, p[0], p[1], p[2], p[3], p[4]);
      });
      break;
  }
  return out;
}

int bestHypothesis(const std::vector<HypothesisScore>& scores) {
  int best = -1;
  for (size_t i = 0; i < scores.size(); ++i)
    if (best < 0 || scores[i].cost < scores[best].cost) best = static_cast<int>(i);
  return best;
}

}  // namespace vidmap::geometry
