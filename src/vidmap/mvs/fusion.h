// Fusion of depth maps into one point cloud, after COLMAP's stereo_fusion: a pixel of a
// reference starts a cluster; each source whose depth at the projected pixel agrees (relative
// depth difference, forward-backward reprojection error, normal angle) adds its point; a
// cluster of at least minPixels pixels becomes one point with the mean position, colour and
// normal, and its pixels are used up. Deterministic (views and pixels in a fixed order).
// The per-pixel phase (fusion_kernels.h) runs on CUDA when a device is present, within a
// memory budget, with the CPU's result bit for bit; the clustering runs on the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vidmap/gpu/kernel_profiler.h"

#include "vidmap/io/ply.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/mvs/workspace.h"

namespace vidmap::mvs {

struct FusionOptions {
  int minPixels = 3;                // pixels per point, the reference's included (COLMAP: 5)
  double maxReprojectionError = 2;  // pixels (COLMAP: 2)
  double maxDepthError = 0.01;      // relative (COLMAP: 0.01)
  double maxNormalErrorDeg = 10;    // degrees (COLMAP: 10)
  // The clustering (phase 2) runs in parallel from this many threads up, else in one pass in
  // pixel order: the same points in the same order; on one thread the two take about the
  // same time (docs/benchmarks.md). 0: always in one pass.
  int parallelClusteringThreads = 2;
  // The per-pixel phase on CUDA (kAuto: when a device is present) or on the CPU: the same
  // points either way. The maps of a reference and its sources live on the device within
  // maxGpuMemory bytes (0: 80 percent of the device's memory), streamed in reference order.
  Backend backend = Backend::kAuto;
  std::int64_t maxGpuMemory = 0;
  int device = 0;

  void check() const;
};

struct FusionStats {
  std::int64_t points = 0;
  std::int64_t fusedPixels = 0;          // pixels used by the points
  std::int64_t validPixels = 0;          // pixels with a depth in the maps
  double matchMs = 0;                    // wall: phase 1, the agreeing source pixels (parallel)
  double clusterMs = 0;                  // wall: phase 2, the clusters
  std::int64_t records = 0;              // phase 2's pixels with enough agreeing sources
  std::int64_t dependentRecords = 0;     // parallel phase 2: those decided in order
  double totalMs = 0;                    // wall: all of fusion
  std::string backend;                   // of phase 1: "cpu" or "cuda"
  std::int64_t planPeakBytes = 0;        // CUDA only: the residency plan's peak
  std::int64_t devicePeakBytes = 0;      // CUDA only: measured by the context
  std::int64_t uploads = 0;              // CUDA only: maps uploaded
  std::vector<gpu::KernelStat> kernels;  // CUDA only: mvs_fusion_match, mvs_fusion_compact
};

// maps[v] is view v's depth map (empty for views that are not references).
std::vector<io::PlyPoint> fuseDepthMaps(const Workspace& ws, const std::vector<DepthMap>& maps,
                                        const FusionOptions& options, FusionStats* stats = nullptr);

}  // namespace vidmap::mvs
