// The CUDA form of triangulateBatch (triangulation_batch.h): one thread a track runs
// triangulation_kernels.h's triangulateTrack over the batch uploaded in one copy per array.
// Two-view tracks: with VIDMAP_CUDA_NO_FMA the results equal the CPU's bit for bit except
// angle_deg, which the device's acos may round differently in the last bit (a status can then
// differ only for an angle within that bit of min_angle_deg); with FMA, points within 1e-4
// relative (far points along nearly parallel rays move most: 1.5e-5 on the H200). Three or more
// views: the DLT's null vector by Jacobi rotations on the device, by Eigen on the host: points
// within about 1e-8 relative (triangulation_kernels.h). Kernel time and memory are accounted in the
// gpu::Context (kernel "geometry.triangulate"). Built only with CUDA; no CUDA types here.
#pragma once

#include <memory>
#include <vector>

#include "vidmap/geometry/triangulation_batch.h"
#include "vidmap/gpu/context.h"

namespace vidmap::geometry {

class CudaTriangulator {
 public:
  explicit CudaTriangulator(gpu::Context& ctx);
  ~CudaTriangulator();
  CudaTriangulator(const CudaTriangulator&) = delete;
  CudaTriangulator& operator=(const CudaTriangulator&) = delete;

  std::vector<TrackTriangulation> triangulate(const TriangulationBatch& batch,
                                              const TriangulationOptions& options = {});
  float lastDeviceMs() const;  // the last call on the device (uploads, kernel, download)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::geometry
