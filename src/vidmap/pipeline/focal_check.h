// Is the focal length of an unknown camera determined by a model? Some motions leave it free:
// under a pure translation (forward, sideways, any direction, without rotation) a focal length
// f' = s f fits the images exactly as well as f, with every depth and the cameras' offsets
// along the optical axis scaled by s (the depth-focal ambiguity; Hartley and Zisserman,
// "Multiple View Geometry", 2nd ed., section 19.8 on critical motions for self-calibration).
// Rotation between the views breaks it. Whether the first pairs' self-calibration succeeded
// says little about this (it fails on a sideways walk that turns, and succeeds on noise), so the
// test is a measurement on the finished model: the profile of the bundle-adjustment cost over
// the focal length. The model is adjusted again with the focal held at f (1 - step) and at
// f (1 + step), poses, points and distortion free; the rise of the cost, in units of the
// keypoints' noise (the model's RMS reprojection error, at least noiseFloorPx), gives the
// standard deviation of the focal length (the curvature of chi-square: sigma_f / f = step /
// sqrt(delta chi2)). The focal length counts as undetermined above maxRelUncertainty.
//
// An undetermined focal length is expected of a translation; of views that turn, it is not: a
// rotation between the views determines the focal length of a correct model (Hartley, above),
// so a model whose views turn by minTurnDeg or more and whose focal length is still free is
// suspect. That is the signature of a wrong model built from a focal guess far from the truth
// (the Middlebury dino ring: a narrow field of view, 11 degrees, started from the 1.2 x width
// guess, 4.3 times too short, gives a wrong model whose profile is flat, sigma_f / f 10%;
// docs/benchmarks.md, "Photo sets: the rings against COLMAP"), and of a view so narrow that
// the images are nearly affine, where the focal length cannot be measured either.
#pragma once

#include <limits>

#include "vidmap/ba/options.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::pipeline {

struct FocalCheckOptions {
  double step = 0.05;               // relative change of the focal length profiled
  double noiseFloorPx = 0.3;        // keypoint noise assumed at least (working pixels)
  double maxRelUncertainty = 0.02;  // sigma_f / f above this: undetermined
  double minTurnDeg = 10;           // views turning by this much and undetermined: suspect
  int maxIterations = 30;           // of each profiled adjustment
  // Each profiled adjustment stops when an iteration lowers its chi-square by less than this
  // many sigma^2 (sigma: the model's RMS error before the check, at least noiseFloorPx): the
  // statistic is a difference of chi-squares in units of sigma^2, and the decision reads it
  // against (step / maxRelUncertainty)^2 = 6.25. A relative tolerance of 1e-10 of the cost
  // (the former stop, the floor here) asked 1e-4 sigma^2 of a 100-image model. 0: that floor.
  double chi2Precision = 0.01;
  // And each side (f (1 -+ step)) stops when an iteration lowers its cost by less than this
  // fraction of its rise over the centre's cost (ba::Options::riseTolerance; 0: off). LM's
  // tail shrinks the change about geometrically, by half or more an iteration, so what is left
  // of the descent is about the last change: the rise, and so sigma_f / f, to about 0.1%. A
  // rise near the decision, a few sigma^2, is held to chi2Precision instead (the larger stop
  // of the two applies).
  double riseTolerance = 1e-3;
  ba::BackendType backend = ba::BackendType::kCpu;

  void check() const;  // throws vidmap::Error naming the bad field
};

struct FocalCheck {
  bool ran = false;                    // false for a camera held fixed (given with --camera)
  double focalPx = 0;                  // the model's focal length (working pixels)
  double rmsPx = 0;                    // at the model's focal length, after the same adjustment
  double rmsLowPx = 0, rmsHighPx = 0;  // with the focal held at f (1 -+ step)
  double deltaChi2 = 0;                // the mean rise of chi-square over the two sides
  double relUncertainty = std::numeric_limits<double>::infinity();  // sigma_f / f
  bool undetermined = false;
  double turnDeg = 0;    // the largest rotation between two of the model's images
  bool suspect = false;  // undetermined although the views turn by minTurnDeg or more
  int iterations = 0;    // LM iterations of the three profiled adjustments
  double seconds = 0;
};

// The largest angle of rotation between two of the model's images (degrees).
double largestTurnDeg(const sfm::Reconstruction& rec);

// Profiles the focal length of `rec` (left as it is: the adjustments run on copies).
FocalCheck checkFocal(const sfm::Reconstruction& rec, const FocalCheckOptions& options = {});

}  // namespace vidmap::pipeline
