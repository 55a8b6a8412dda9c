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
}

namespace {

// The RMS reprojection error of a copy of `rec` adjusted with its focal length scaled by
// `factor` and held.
double adjustedRms(const sfm::Reconstruction& rec, double factor, const FocalCheckOptions& o,
                   double* sumSq) {
  sfm::Reconstruction r = rec;
  auto& p = r.mutableCamera().mutableParams();
  p[0] *= factor;
  if (modelNumFocals(r.camera().model()) == 2) p[1] *= factor;
  sfm::BundleOptions bo;
  bo.refineIntrinsics = true;
  bo.holdFocal = true;
  bo.maxIterations = o.maxIterations;
  bo.functionTolerance = 1e-10;
  bo.backend = o.backend;
  const sfm::BundleReport rep = sfm::adjustBundle(r, {}, bo);
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
  double s0 = 0, sLow = 0, sHigh = 0;
  c.rmsPx = adjustedRms(rec, 1.0, o, &s0);
  c.rmsLowPx = adjustedRms(rec, 1.0 - o.step, o, &sLow);
  c.rmsHighPx = adjustedRms(rec, 1.0 + o.step, o, &sHigh);
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
