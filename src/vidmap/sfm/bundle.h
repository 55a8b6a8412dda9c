// Bundle adjustment of a reconstruction (or a part of it) through the ba module: the images
// to refine, the points they observe, the other images observing those points held constant
// (as COLMAP's local BA; bounded for a local window, see BundleOptions), the shared camera's
// focal length and radial distortion refined when it is unknown, and the gauge held when no
// two constant images fix it.
#pragma once

#include <vector>

#include "vidmap/ba/options.h"
#include "vidmap/sfm/reconstruction.h"

namespace vidmap::gpu {
class Context;
}

namespace vidmap::sfm {

struct BundleOptions {
  bool refineIntrinsics = false;  // focal and distortion of an unknown camera
  // With refineIntrinsics: the focal length held, the distortion refined (a profile of the
  // cost over the focal length, pipeline/focal_check.h).
  bool holdFocal = false;
  // With refineIntrinsics: the distortion held (the mapper's camera after a runaway, mapper.h).
  bool holdDistortion = false;
  // With refineIntrinsics: the principal point refined too (COLMAP holds it at the image
  // centre; pipeline/principal_point.h frees it where a model determines it).
  bool refinePrincipalPoint = false;
  ba::LossType loss = ba::LossType::kTrivial;
  double lossScale = 1.0;  // pixels
  int maxIterations = 50;
  // Stop when an iteration lowers the cost by less than this fraction (Ceres' default 1e-6;
  // the mapper loosens it for the global adjustments made while the model grows).
  double functionTolerance = 1e-6;
  // ba::Options::riseTolerance and riseBase (a profile's stop: pipeline/focal_check.h).
  double riseTolerance = 0.0;
  double riseBase = 0.0;
  ba::BackendType backend = ba::BackendType::kCpu;
  // With backend kCuda, a problem of fewer observations runs on the CPU, where the CUDA
  // backend's fixed cost per solve (allocations, uploads, graph capture) would exceed the CPU's
  // whole solve. Measured on the H200 (docs/benchmarks.md, "Bounded local BA"): 6 images and
  // 3000 observations solve in 7.0 ms on CUDA and 8.5 ms on the host's CPU. With CUDA graphs
  // (docs/benchmarks.md, "Small CUDA bundle adjustments") a CUDA LM iteration costs about
  // 0.3 ms up to 4000 observations and the mapper's CPU iteration about 0.24 us per
  // observation: the crossover of the mapper's windows is near 1500 observations. At 1500
  // against 3000 on the H200 (docs/benchmarks.md, "The CUDA crossover at 1500 observations"):
  // fr1-rpy all frames 4.65 -> 3.91 s, rotation error 4.02 -> 3.79 deg; tum-fr1-xyz all
  // frames 34.4 -> 33.5 s with ATE 14.39 / 14.40 mm; xyz and fr1-rpy at 4 fps the same models.
  int cudaMinObservations = 1500;
  // ba::Options::cudaOneBlockCholeskyMaxColumns of the CUDA solves (0: cuSOLVER always).
  int cudaOneBlockCholeskyMaxColumns = 0;
  int numThreads = 0;

  // Bounds of a local adjustment (0: none), so that its cost does not grow with the length of
  // the tracks or the density of the features (a video's points are seen by tens of images).
  // - maxPoints: when the variable images observe more points, the refined ones are chosen
  //   spread over each variable image, as COLMAP's and ORB-SLAM's bucketing do: each image is
  //   cut into pointGrid x pointGrid cells, and in each (image, cell) the points are ranked
  //   by the variable images that see them, then the length of their track, then the lower
  //   id. First every point of the first variable image (the mapper's new keyframe: its
  //   new points have only the window to fix them), then rounds over all (image, cell) buckets
  //   in order, each round taking the best point not yet kept of every bucket, until
  //   maxPoints. The others keep their position. (The former rule, the points seen by the most
  //   variable images, kept the longest tracks, clustered where tracking lasts: on the
  //   synthetic orbit ATE 0.77 mm against 0.53 with this rule, at the same cost:
  //   docs/benchmarks.md, "Local BA: which points a bounded window keeps".) Deterministic:
  //   std::map orders, ties by id, no threads.
  // - maxConstantImages: observations by images outside the variable set are added, their
  //   poses held, only from the images sharing the most refined points with the variable set
  //   (ties: the lower id). They anchor the window to the rest of the model; further images
  //   would add observations of the same points from nearly the same places, work rather than
  //   information about the window's poses. (COLMAP adds all of them for short tracks and none
  //   for tracks longer than 15.)
  int maxPoints = 0;
  int maxConstantImages = 0;
  int pointGrid = 8;  // cells per side of an image for maxPoints' selection (1 to 1024)
  // A point whose observations in the problem see it from one place (the largest angle between
  // the ray of its first observation and those of the others below this, degrees) has no depth
  // in the problem: it is held, as a point of one view is (0: none held). Free, it would slide
  // along its rays (a null direction of the problem, where only the damping and round-off
  // move it). In rotation-heavy video, where registration keeps the centre of the keyframe
  // before (registration.h), a local window may hold only keyframes of one centre.
  double minParallaxDeg = 0;
  // An adjustment of all images (variableImages empty) also refines the model's localised
  // frames (Reconstruction::localized(): the frames the keyframe gate dropped, posed by PnP on
  // their keyframe's points) with their inlier observations: their keypoints then weigh on the
  // points and, through them, on the keyframes' poses, as a keyframe's do (docs/benchmarks.md,
  // "The KLT gate's loss: fewer keyframes, and the dropped frames' observations").
  bool withLocalized = false;

  void check() const;                  // throws vidmap::Error naming the bad field and its range
  gpu::Context* gpuContext = nullptr;  // the CUDA backend's context (ba::Options::context)
};

struct BundleReport {
  bool ran = false;
  int images = 0, constantImages = 0, points = 0, observations = 0, iterations = 0;
  int pointsLeftOut = 0;        // points of the variable images beyond maxPoints
  int pointsHeld = 0;           // refined points held for want of parallax (minParallaxDeg)
  int observationsLeftOut = 0;  // of the refined points, by images beyond maxConstantImages
  double initialRmsPx = 0, finalRmsPx = 0;
  bool usable = false;
  double seconds = 0;
  double cpuSeconds = 0;  // of the process (all threads) during the call
  // Where the call's wall time went: ba::solve's preprocessor (structure, backend set-up and
  // uploads) and its minimizer (the LM loop); the rest is the window's selection, the problem's
  // assembly and the write-back here. backend: the one that solved (small windows stay on the CPU).
  double preprocessorSeconds = 0, minimizerSeconds = 0;
  // Their fixed parts (ba::Summary): the backend's construction, the CUDA graphs' capture, the
  // backend's destruction.
  double backendSeconds = 0, graphCaptureSeconds = 0, teardownSeconds = 0;
  const char* backend = "";
};

// The points a window of registered `images` (distinct; the first is served first: the
// mapper's new keyframe) refines under options.maxPoints and pointGrid, sorted by id: all of
// the images' points when they are no more than maxPoints (or it is 0).
std::vector<PointId> selectWindowPoints(const Reconstruction& rec, const std::vector<int>& images,
                                        const BundleOptions& options);

// Refines the poses of `variableImages` (registered keyframe ids; empty: all images; the
// first is served first by maxPoints) and the points they observe. Writes the result back
// when the solver's result is usable.
BundleReport adjustBundle(Reconstruction& rec, const std::vector<int>& variableImages,
                          const BundleOptions& options);

}  // namespace vidmap::sfm
