#include "vidmap/pipeline/focal_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <Eigen/Geometry>

#include "vidmap/core/camera_model.h"
#include "vidmap/core/check.h"
#include "vidmap/sfm/bundle.h"

namespace vidmap::pipeline {

void FocalCheckOptions::check() const {
  checkRange("focal_check.step", step, 1e-4, 0.5);
  checkRange("focal_check.noiseFloorPx", noiseFloorPx, 1e-3, 100.0);
  checkRange("focal_check.maxRelUncertainty", maxRelUncertainty, 1e-6, 10.0);
  checkRange("focal_check.minTurnDeg", minTurnDeg, 0.0, 180.0);
  checkRange("focal_check.maxIterations", maxIterations, 1, 1000);
  checkRange("focal_check.chi2Precision", chi2Precision, 0.0, 1e6);
  checkRange("focal_check.riseTolerance", riseTolerance, 0.0, 1.0);
}

namespace {

// The RMS reprojection error of `r` (a copy of the model) adjusted with its focal length scaled
// by `factor` and held, stopping at a relative cost change of functionTolerance, or (riseBase >
// 0) when the cost's rise over riseBase is known to o.riseTolerance of itself.
double adjustedRms(sfm::Reconstruction r, double factor, const FocalCheckOptions& o,
                   double functionTolerance, double riseBase, double* sumSq, int* iterations) {
  auto& p = r.mutableCamera().mutableParams();
  p[0] *= factor;
  if (modelNumFocals(r.camera().model()) == 2) p[1] *= factor;
  sfm::BundleOptions bo;
  bo.refineIntrinsics = true;
  bo.holdFocal = true;
  bo.maxIterations = o.maxIterations;
  bo.functionTolerance = functionTolerance;
  if (riseBase > 0) bo.riseTolerance = o.riseTolerance, bo.riseBase = riseBase;
  bo.backend = o.backend;
  const sfm::BundleReport rep = sfm::adjustBundle(r, {}, bo);
  *iterations += rep.iterations;
  *sumSq = static_cast<double>(rep.observations) * rep.finalRmsPx * rep.finalRmsPx;
  return rep.finalRmsPx;
}

}  // namespace

double largestTurnDeg(const sfm::Reconstruction& rec) {
  std::vector<Eigen::Quaterniond> q;
  for (const auto& [id, im] : rec.images()) q.emplace_back(im.pose.R);
  double worst = 0;
  for (size_t i = 0; i < q.size(); ++i)
    for (size_t j = i + 1; j < q.size(); ++j) worst = std::max(worst, q[i].angularDistance(q[j]));
  return worst * 180 / M_PI;
}

FocalCheck checkFocal(const sfm::Reconstruction& rec, const FocalCheckOptions& o) {
  o.check();
  FocalCheck c;
  if (rec.camera().fixed() || rec.numImages() < 2) return c;
  const auto t0 = std::chrono::steady_clock::now();
  c.ran = true;
  c.focalPx = rec.camera().params()[0];
  // The stop: a cost change (half the chi-square) of chi2Precision sigma^2 / 2, relative to the
  // cost; the model's cost stands for each adjustment's (they end near it).
  double tolerance = 1e-10;
  if (o.chi2Precision > 0) {
    double sumSq = 0;
    for (const auto& [id, p] : rec.points())
      for (const sfm::FeatureRef& f : p.track) {
        const double e = rec.reprojectionError(p.X, f);
        sumSq += e * e;
      }
    const double n = static_cast<double>(rec.numObservations());
    const double sigma = std::max(n > 0 ? std::sqrt(sumSq / n) : 0.0, o.noiseFloorPx);
    if (std::isfinite(sumSq) && sumSq > 0)
      tolerance = std::max(tolerance, o.chi2Precision * sigma * sigma / sumSq);
  }
  // The centre stops at the tolerance above, the sides also at the rise rule (riseTolerance;
  // half the sum of squares is the solver's cost). Starting the sides from the centre's
  // adjustment instead of the model was tried: no fewer iterations (27 and 21 against 22 and
  // 19 on tum-fr1-xyz at 4 fps), docs/benchmarks.md, "Focal check: the sides stop on their rise".
  double s0 = 0, sLow = 0, sHigh = 0;
  c.rmsPx = adjustedRms(rec, 1.0, o, tolerance, 0.0, &s0, &c.iterations);
  const double base = o.riseTolerance > 0 ? s0 / 2 : 0.0;
  c.rmsLowPx = adjustedRms(rec, 1.0 - o.step, o, tolerance, base, &sLow, &c.iterations);
  c.rmsHighPx = adjustedRms(rec, 1.0 + o.step, o, tolerance, base, &sHigh, &c.iterations);
  const double sigma = std::max(c.rmsPx, o.noiseFloorPx);
  // A side that ended below the centre (the model's focal was not the minimum) counts as flat.
  c.deltaChi2 = std::max(0.0, (sLow + sHigh - 2 * s0) / 2) / (sigma * sigma);
  c.relUncertainty =
      c.deltaChi2 > 0 ? o.step / std::sqrt(c.deltaChi2) : std::numeric_limits<double>::infinity();
  c.undetermined = !(c.relUncertainty <= o.maxRelUncertainty);
  c.turnDeg = largestTurnDeg(rec);
  c.suspect = c.undetermined && c.turnDeg >= o.minTurnDeg;
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

}  // namespace vidmap::pipeline
