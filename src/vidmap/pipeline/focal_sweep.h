// A photo set whose model is suspect (pipeline/focal_check.h: its focal length undetermined
// although its views turn) was likely built from a starting focal length far from the truth:
// the mapper starts from 1.2 x the width (COLMAP's prior) when the first pairs do not
// self-calibrate, and a narrow field of view (a telephoto lens, the Middlebury dino ring's 11
// degrees: 4.3 x that guess) makes the first pairs near-affine, so neither the self-calibration
// nor the pairs' verification tells the guess is wrong, and bundle adjustment settles in a wrong
// minimum. The mapper is run again on the same keyframes and pairs (no features or matching
// again) from longer starting focal lengths, a ladder of factors of the guess, and the run that
// explains the most observations (2D-3D within the mapper's reprojection bounds, summed over
// its models; fewer suspect models, then the lower mean reprojection error break ties) is kept:
// a wrong start explains fewer of the matches in fewer images (docs/benchmarks.md, "Photo sets:
// the rings against COLMAP").
#pragma once

#include <memory>
#include <vector>

#include "vidmap/pipeline/focal_check.h"
#include "vidmap/sfm/mapper.h"

namespace vidmap::pipeline {

struct FocalSweepOptions {
  bool enabled = true;
  std::vector<double> factors = {2, 4, 8};  // starting focal lengths: the guess times these

  void check() const;  // throws vidmap::Error naming the bad field
};

// The keyframes and pairs fed to the mapper, kept to run it again (photo sets: small).
struct MapperInput {
  std::vector<sfm::Keyframe> keyframes;
  std::vector<std::vector<sfm::PairMatches>> pairs;
};

struct FocalSweepTrial {
  double startFocalPx = 0;  // working pixels
  int models = 0, registered = 0, suspect = 0;
  std::int64_t observations = 0;
  double meanErrorPx = 0;  // working pixels
  bool chosen = false;
};

struct FocalSweep {
  bool ran = false;
  std::vector<FocalSweepTrial> trials;  // the first run, then one per factor
  // The chosen run when it is not the first (null otherwise), and its models' focal checks.
  std::unique_ptr<sfm::Mapper> mapper;
  std::vector<FocalCheck> focal;
  double seconds = 0;
};

// The score of a mapper's models as FocalSweepTrial (observations, suspect models, error).
FocalSweepTrial scoreTrial(const sfm::Mapper& mapper, const std::vector<FocalCheck>& focal);

// Runs the mapper from camera0 with its focal length times each factor on `input`, checking
// each run's models with `check`, and compares them with `first` (the run already made).
FocalSweep sweepFocal(const MapperInput& input, const sfm::Camera& camera0,
                      const sfm::MapperOptions& mapperOptions, const FocalSweepTrial& first,
                      const FocalCheckOptions& check, const FocalSweepOptions& options = {});

}  // namespace vidmap::pipeline
