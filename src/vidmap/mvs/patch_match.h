// PatchMatch multi-view stereo over a Workspace: per reference view a depth and normal per
// pixel, a photometric pass and then (optionally) a geometric-consistency pass that uses the
// sources' photometric depths (the arithmetic is in patch_match_kernels.h). Runs on the CPU
// (the oracle, usable for small inputs) or on CUDA within a memory budget (residency.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vidmap/gpu/kernel_profiler.h"
#include "vidmap/mvs/patch_match_kernels.h"
#include "vidmap/mvs/residency.h"
#include "vidmap/mvs/workspace.h"

namespace vidmap::mvs {

enum class Backend { kAuto, kCpu, kCuda };

struct PatchMatchOptions {
  int photometricIterations = 6;     // one iteration = the red then the black half
  int geometricIterations = 3;       // 0: no geometric pass
  int topK = 3;                      // sources averaged per hypothesis (the best ones)
  float sigmaColor = 0.2f;           // bilateral weights, intensities in [0, 1] (COLMAP)
  float sigmaSpatial = 5.0f;         // pixels (COLMAP: the window radius)
  float initialPerturbation = 0.2f;  // relative; halves every iteration down to 0.005
  float geomRegularizer = 0.3f;      // COLMAP's geom_consistency_regularizer
  float geomMaxCost = 3.0f;          // pixels (COLMAP's geom_consistency_max_cost)
  float maxCost = 0.4f;              // output depth is 0 (invalid) where the cost exceeds this
  // Coarse to fine: the photometric pass first at half resolution (photometricIterations),
  // its planes upsampled as the full-resolution start, then fineIterations there (the
  // perturbation schedule restarts, as in the geometric pass). Measured in docs/benchmarks.md.
  bool multiResolution = false;
  int fineIterations = 3;
  // Source images through CUDA textures (hardware bilinear, design item 7): bilinear weights
  // with 8 fractional bits, which the CPU twin then models (PmGray::hwFilter); false: exact
  // float weights on both backends (the bit-equality oracle). Measured in docs/benchmarks.md.
  bool textures = true;
  std::uint32_t seed = 1;
  Backend backend = Backend::kAuto;  // kAuto: CUDA when a device is present
  std::int64_t maxGpuMemory = 0;     // bytes; 0: 80 percent of the device's memory
  int device = 0;

  void check() const;
};

// One view's result, planar float arrays of width * height: depth (camera z, 0 = invalid),
// normal (nx plane, ny plane, nz plane; reference camera frame) and cost.
struct DepthMap {
  int width = 0, height = 0;
  std::vector<float> depth, normal, cost;
  bool empty() const { return depth.empty(); }
  void resize(int w, int h);
};

struct PatchMatchStats {
  std::string backend;                        // "cpu" or "cuda"
  double photometricMs = 0, geometricMs = 0;  // wall time per pass
  std::vector<gpu::KernelStat> kernels;       // CUDA only
  std::int64_t planPeakBytes = 0;             // CUDA only: the residency plan's peak
  std::int64_t devicePeakBytes = 0;           // CUDA only: measured by the context
  std::int64_t uploads = 0;
  int references = 0;
  double coarseMs = 0;  // multiResolution: the half-resolution pass (part of photometricMs)
};

struct PatchMatchResult {
  std::vector<DepthMap> photometric;  // per view; empty for views that are not references
  std::vector<DepthMap> geometric;    // empty when geometricIterations == 0
  PatchMatchStats stats;
  const std::vector<DepthMap>& final() const { return geometric.empty() ? photometric : geometric; }
};

PatchMatchResult runPatchMatch(const Workspace& ws, const PatchMatchOptions& options);

// ---- pieces shared by the backends (and tests) -------------------------------------------

// The kernel parameters of reference `ref` with the gray images and (geometric pass) the
// sources' depth maps at the given addresses (host or device).
PmParams makeParams(const Workspace& ws, int ref, bool geometric, const PatchMatchOptions& o,
                    const std::vector<const std::uint8_t*>& grayOf,
                    const std::vector<const float*>& depthOf);

// The relative perturbation of iteration `it`.
float perturbationAt(const PatchMatchOptions& o, int it);

// Runs one pass of one reference on the CPU: initialise (random) or rescore the hypotheses
// in `state`, then `iterations` red-black iterations.
void runReferenceCpu(const PmParams& P, bool initialise, int iterations, const PatchMatchOptions& o,
                     DepthMap* state);

// The workspace at half the size (views, intrinsics and gray images scaled as
// WorkspaceOptions::maxImageSize does; sources, ranges and references kept).
Workspace halfWorkspace(const Workspace& ws);

// A map upsampled to width x height by nearest neighbour (depth, normal and cost copied).
DepthMap upsampleNearest(const DepthMap& coarse, int width, int height);

// Sets depth 0 where the cost exceeds maxCost.
void filterByCost(DepthMap* map, float maxCost);

// Device bytes of one view in a pass (gray 8 bit in rows of grayPitch bytes; plus its float
// depth in the geometric one) and of the working buffers of a reference with `pixels` pixels.
int grayPitch(int width, int pitchAlign);
std::int64_t viewBytes(const View& v, bool geometric, int pitchAlign = 1);
std::int64_t workingBytes(std::int64_t pixels);

// The residency plan of one pass of runPatchMatch (exposed for tests and the run record).
ResidencyPlan planPass(const Workspace& ws, bool geometric, std::int64_t budgetBytes,
                       int pitchAlign = 1);

}  // namespace vidmap::mvs
