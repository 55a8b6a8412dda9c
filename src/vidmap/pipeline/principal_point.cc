#include "vidmap/pipeline/principal_point.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "vidmap/core/camera_model.h"
#include "vidmap/core/check.h"
#include "vidmap/sfm/bundle.h"

namespace vidmap::pipeline {

void PrincipalPointOptions::check() const {
  checkRange("principal_point.noiseFloorPx", noiseFloorPx, 1e-3, 100.0);
  checkRange("principal_point.minDeltaChi2", minDeltaChi2, 0.0, 1e6);
  checkRange("principal_point.maxRelSigma", maxRelSigma, 0.0, 1.0);
  checkRange("principal_point.maxShiftFraction", maxShiftFraction, 0.0, 0.5);
  checkRange("principal_point.maxIterations", maxIterations, 1, 1000);
}

namespace {

// Adjusts `rec` (every image and point, focal length and distortion free, the principal point
// free or held) and returns chi-square's numerator: the sum of squared errors (working px^2).
double adjust(sfm::Reconstruction& rec, bool freePoint, const PrincipalPointOptions& o,
              double* rmsPx) {
  sfm::BundleOptions bo;
  bo.refineIntrinsics = true;
  bo.refinePrincipalPoint = freePoint;
  bo.maxIterations = o.maxIterations;
  bo.functionTolerance = 1e-10;
  bo.backend = o.backend;
  bo.loss = ba::LossType::kSoftL1;  // as the mapper's adjustments: its model's last outliers
  const sfm::BundleReport rep = sfm::adjustBundle(rec, {}, bo);
  *rmsPx = rep.finalRmsPx;
  return static_cast<double>(rep.observations) * rep.finalRmsPx * rep.finalRmsPx;
}

}  // namespace

PrincipalPointFit refinePrincipalPoint(sfm::Reconstruction& rec, const FocalCheck& focal,
                                       const PrincipalPointOptions& o) {
  o.check();
  PrincipalPointFit f;
  const sfm::Camera& cam = rec.camera();
  const int ci = modelNumFocals(cam.model());  // cx, cy follow the focal lengths
  f.cx = cam.params()[ci];
  f.cy = cam.params()[ci + 1];
  if (!o.enabled || cam.fixed() || rec.numImages() < 2) {
    f.reason = "fixed_camera";
    return f;
  }
  f.ran = true;
  if (!focal.ran || focal.undetermined) {
    f.reason = "focal_undetermined";
    return f;
  }
  const auto t0 = std::chrono::steady_clock::now();
  sfm::Reconstruction held = rec;
  const double s0 = adjust(held, false, o, &f.rmsHeldPx);
  sfm::Reconstruction freed = held;
  const double s1 = adjust(freed, true, o, &f.rmsFreePx);
  const auto& p = freed.camera().params();
  f.shiftPx = std::hypot(p[ci] - f.cx, p[ci + 1] - f.cy);
  const double sigma = std::max(f.rmsFreePx, o.noiseFloorPx);
  f.deltaChi2 = std::max(0.0, s0 - s1) / (sigma * sigma);
  f.sigmaPx = f.deltaChi2 > 0 ? f.shiftPx / std::sqrt(f.deltaChi2)
                              : std::numeric_limits<double>::infinity();
  if (!(f.deltaChi2 >= o.minDeltaChi2)) {
    f.reason = "chi2";
  } else if (!(f.sigmaPx <= o.maxRelSigma * freed.camera().meanFocal())) {
    f.reason = "sigma";
  } else if (f.shiftPx > o.maxShiftFraction * std::max(cam.width(), cam.height())) {
    f.reason = "shift";
  } else {
    f.refined = true;
    f.cx = p[ci];
    f.cy = p[ci + 1];
    rec = std::move(freed);
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return f;
}

}  // namespace vidmap::pipeline
