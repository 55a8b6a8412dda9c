// Between a COLMAP sparse model (io/colmap_model.h, vidmap's written reconstruction) and a
// bundle adjustment problem: images become quaternion poses (world to camera, as COLMAP stores
// them), cameras become intrinsics blocks shared by their images, 3D points and their track
// elements become points and observations.
#pragma once

#include <cstdint>
#include <vector>

#include "vidmap/ba/problem.h"
#include "vidmap/io/colmap_model.h"

namespace vidmap::ba {

struct ColmapProblem {
  Problem problem;
  std::vector<std::uint32_t> imageIds;   // COLMAP id of problem.images[i]
  std::vector<std::uint32_t> cameraIds;  // of problem.cameras[c]
  std::vector<std::uint64_t> pointIds;   // of problem.points[j]
};

// Throws vidmap::Error for a model the solver cannot take: cameras of different models, or a
// model other than SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL; an invalid model.
ColmapProblem problemFromColmap(const io::ColmapModel& model);

// Writes the problem's poses, intrinsics and points back into the model.
void updateColmap(const ColmapProblem& solved, io::ColmapModel& model);

}  // namespace vidmap::ba
