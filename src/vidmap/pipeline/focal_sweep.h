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
//
// A video under the KLT gate (camera unknown, focal length self-calibrated) whose gate kept
// at most half of the sampled frames can be swept too (videoFactors, empty by default since
// sfm::profileFocal removes the bias below), near the self-calibrated focal length: that
// estimate treats the first pairs as rotations (sfm/focal_estimation.h), and a camera that
// translates as it turns (a pan walked sideways) biases it by the translation's share of the
// motion, 2-3% on the synthetic pans. Keyframes far apart in angle turn that error into a
// parallax that is not there: the initial pair's pose and the first registrations are wrong
// and no adjustment recovers (the pan at 75 degrees: good from 409 to 425 px, broken at the
// self-calibrated 428.7; truth 417). Dense keyframes (every sampled frame, `--klt off`) are a
// few degrees apart and tolerate it. docs/benchmarks.md, "The KLT gate's pans: the focal
// length's start swept (issues 12 and 13, helper pan31)".
#pragma once

#include <memory>
#include <vector>

#include "vidmap/pipeline/focal_check.h"
#include "vidmap/sfm/mapper.h"

namespace vidmap::pipeline {

struct FocalSweepOptions {
  bool enabled = true;
  std::vector<double> factors = {2, 4, 8};  // starting focal lengths: the guess times these
  // A video under the KLT gate: the self-calibrated focal length times these, when the gate
  // kept at most videoMaxKeyframeFraction of the sampled frames (empty: never).
  // Empty by default since the self-calibration is refined on the first pairs' calibrated
  // profile (sfm::profileFocal): from that start the pans hold without the extra runs, which
  // cost 2-4 CPU s and took TUM fr1-rpy at all frames from 1.58 to 1.79 deg (docs/benchmarks.md,
  // "The self-calibration's bias on a pan walked sideways, at its source").
  std::vector<double> videoFactors = {};
  double videoMaxKeyframeFraction = 0.5;
  // A video's sweep keeps, of the runs explaining at least this fraction of the most
  // observations, the one of the lowest mean reprojection error: on a pan, a start 3% above
  // the truth settles where a larger focal length trades rotation for translation and explains
  // as many observations (22699 against 22611) at a higher error (0.13 against 0.10 px), while
  // a broken start explains a third of them.
  double videoNearMost = 0.9;

  void check() const;  // throws vidmap::Error naming the bad field
};

// The keyframes and pairs fed to the mapper, kept to run it again (photo sets: small), and a
// video's tracked frames, each after the keyframes that came before it.
struct MapperInput {
  std::vector<sfm::Keyframe> keyframes;
  std::vector<std::vector<sfm::PairMatches>> pairs;
  std::vector<std::pair<size_t, sfm::TrackedFrame>> tracked;  // (keyframes before it, frame)
  std::size_t bytes = 0;                                      // what it holds, about
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
// The same with the given factors (a video's: FocalSweepOptions::videoFactors). nearMost 0:
// the photos' rule above; > 0 (a video's, FocalSweepOptions::videoNearMost): of the runs that
// explain at least nearMost times the most observations of any run, the lowest mean
// reprojection error (the first run on a tie).
FocalSweep sweepFocal(const MapperInput& input, const sfm::Camera& camera0,
                      const sfm::MapperOptions& mapperOptions, const FocalSweepTrial& first,
                      const FocalCheckOptions& check, const std::vector<double>& factors,
                      double nearMost);

// Records what `mapper` is fed into `input` (keyframes, pairs, tracked frames); beyond maxBytes
// the recording stops and `input` is emptied (*full set): no sweep then.
void recordMapperInput(sfm::Mapper& mapper, MapperInput* input, std::size_t maxBytes, bool* full);

}  // namespace vidmap::pipeline
