// Bundle adjustment of a reconstruction (or a part of it) through the ba module: the images
// to refine, the points they observe, every other image observing those points held constant
// (as COLMAP's local BA), the shared camera's focal length and radial distortion refined when
// it is unknown, and the gauge held when no two constant images fix it.
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
  ba::LossType loss = ba::LossType::kTrivial;
  double lossScale = 1.0;  // pixels
  int maxIterations = 50;
  // Stop when an iteration lowers the cost by less than this fraction (Ceres' default 1e-6;
  // the mapper loosens it for the global adjustments made while the model grows).
  double functionTolerance = 1e-6;
  ba::BackendType backend = ba::BackendType::kCpu;
  int numThreads = 0;
  gpu::Context* gpuContext = nullptr;  // the CUDA backend's context (ba::Options::context)
};

struct BundleReport {
  bool ran = false;
  int images = 0, constantImages = 0, points = 0, observations = 0, iterations = 0;
  double initialRmsPx = 0, finalRmsPx = 0;
  bool usable = false;
  double seconds = 0;
};

// Refines the poses of `variableImages` (registered keyframe ids; empty: all images) and the
// points they observe. Writes the result back when the solver's result is usable.
BundleReport adjustBundle(Reconstruction& rec, const std::vector<int>& variableImages,
                          const BundleOptions& options);

}  // namespace vidmap::sfm
