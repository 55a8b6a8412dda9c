// The principal point of an unknown camera, refined where a model determines it. COLMAP's
// mapper (and the mapper here) holds it at the image centre: a photo's principal point is
// rarely there (Strecha's fountain: 15 and 17 px from it at 3072 x 2048, Middlebury's temple
// 18 px at 640 x 480), and the offset tilts every camera in its own frame and bends the model,
// the largest error left once the keypoints are good (docs/benchmarks.md, "Photo sets: the
// principal point"). It is refined after mapping, on a finished model, where the model
// decides whether it can be: a narrow view (nearly affine images) leaves it free, a shift of the
// principal point then trades against a rotation of every camera at no cost, and a free
// adjustment walks it far off (the Middlebury dino ring, 11 degrees of view: 165 px).
//
// The test is a likelihood ratio, as the focal check's profile (pipeline/focal_check.h): a copy
// of the model is adjusted with the principal point held (focal length and distortion free),
// then with it free; the fall of chi-square between the two, in units of the keypoints' noise
// (the model's RMS error, at least noiseFloorPx), is chi-square distributed with 2 degrees of
// freedom when the point truly is at the centre. The refined point is kept when that fall
// rejects the centre (at least minDeltaChi2: 13.8, p = 0.001), the standard error along the shift
// (below) is at most maxRelSigma of the focal length, the shift is at most
// maxShiftFraction of the larger side, and the model's focal length is determined (a model
// whose focal length is free is not trusted with more intrinsics: the dino's); otherwise the
// model is left exactly as it was. The standard error of the point along its shift, shift /
// sqrt(delta chi2) for a quadratic cost, is reported with it.
#pragma once

#include <string>

#include "vidmap/ba/options.h"
#include "vidmap/pipeline/focal_check.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::pipeline {

struct PrincipalPointOptions {
  bool enabled = true;
  double noiseFloorPx = 0.3;   // keypoint noise assumed at least (working pixels)
  double minDeltaChi2 = 13.8;  // fall of chi-square that rejects the centre (2 dof, p = 0.001)
  // The standard error along the shift, at most this fraction of the focal length (0.3 deg):
  // a significant shift can still be a loose one where the views leave a direction nearly free
  // (a ring of views at one height: a tilt of every camera). Measured: the fountain 0.07-0.21%,
  // the synthetic off-centre loop 0.2%; a synthetic orbit with a centred point, whose test
  // passed at delta chi2 16.7 by its keypoints' small biases, 1.4% (its focal length went 3.5%
  // off when kept).
  double maxRelSigma = 0.005;
  double maxShiftFraction = 0.05;  // of the larger side of the image
  int maxIterations = 50;          // of each adjustment
  ba::BackendType backend = ba::BackendType::kCpu;

  void check() const;  // throws vidmap::Error naming the bad field
};

struct PrincipalPointFit {
  bool ran = false;      // the camera was unknown and the model had its focal length checked
  bool refined = false;  // the refined point was kept (the model changed)
  std::string reason;    // why not: "fixed_camera", "focal_undetermined", "chi2", "sigma",
                         // "shift"
  double shiftPx = 0;    // from the held point (working pixels)
  double deltaChi2 = 0;  // the fall of chi-square when the point is freed
  double sigmaPx = 0;    // standard error along the shift (infinite when flat)
  double rmsHeldPx = 0, rmsFreePx = 0;
  double cx = 0, cy = 0;  // the point after (working pixels; the held one when not refined)
  double seconds = 0;
};

// Refines the principal point of `rec` when the model determines it (see above); `focal` is
// the model's focal check. `rec` is replaced by the adjusted copy only when the point is kept.
PrincipalPointFit refinePrincipalPoint(sfm::Reconstruction& rec, const FocalCheck& focal,
                                       const PrincipalPointOptions& options = {});

}  // namespace vidmap::pipeline
