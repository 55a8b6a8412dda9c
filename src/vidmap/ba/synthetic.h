// Synthetic bundle adjustment scenes with known truth, for tests and benchmarks. The scene is
// built and projected with Eigen's geometry (Eigen::AngleAxisd, Eigen::Quaterniond) and the
// camera model formulas written out here, independently of the solver's projection code.
//
// Cameras stand on an arc around a cloud of points and look at its centre (or walk along a
// wall of points); every point that projects inside the image of a camera in front of it is
// observed. The truth problem holds the
// exact projections; the noisy problem adds Gaussian pixel noise (and gross outliers) to the
// observations and perturbs the parameters as a starting point.
#pragma once

#include <cstdint>
#include <vector>

#include "vidmap/ba/problem.h"

namespace vidmap::ba {

enum class SyntheticLayout {
  kArc,       // cameras on an arc around one cloud: every camera sees most points
  kCorridor,  // cameras along a line looking sideways at a long wall of points: each point is
              // seen by the ~15 nearest cameras (sparse covisibility, as in a video)
};

struct SyntheticOptions {
  SyntheticLayout layout = SyntheticLayout::kArc;
  int numImages = 12;
  int numPoints = 400;
  CameraModel model = CameraModel::kSimpleRadial;
  RotationType rotation = RotationType::kAngleAxis;
  bool sharedIntrinsics = true;  // one camera for all images, else one per image
  int width = 640, height = 480;
  double focal = 500.0;
  double noiseSigma = 0.5;       // pixels, per coordinate
  double outlierFraction = 0.0;  // share of observations moved by outlierPixels
  double outlierPixels = 40.0;
  double rotationPerturbation = 0.01;  // radians (standard deviation per axis)
  double translationPerturbation = 0.02;
  double pointPerturbation = 0.05;
  double intrinsicsPerturbation = 0.02;  // relative, focal and distortion
  std::uint32_t seed = 1;
};

struct SyntheticScene {
  Problem truth;              // exact parameters, exact projections
  Problem noisy;              // truth parameters, noisy observations (the cost at the truth)
  Problem initial;            // perturbed parameters, noisy observations (the starting point)
  std::vector<bool> outlier;  // per observation
};

SyntheticScene makeSyntheticScene(const SyntheticOptions& o);

}  // namespace vidmap::ba
