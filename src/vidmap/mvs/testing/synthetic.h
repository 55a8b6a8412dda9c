// Scenes with exact depth for the dense tests and benchmarks: the synth module's facade
// rendered from a row of cameras, a sparse COLMAP model built from the truth (points sampled
// on the true surfaces, tracks where they are visible), and the scores of depth maps and
// fused clouds against the truth (ETH3D-style accuracy, completeness and F1 at a distance).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/ply.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/synth/camera.h"
#include "vidmap/synth/scene3d.h"

namespace vidmap::mvs::testing {

struct SyntheticMvs {
  synth::Scene scene;
  io::ColmapModel model;
  std::map<std::uint32_t, RgbImage> images;  // by image id
  std::vector<Image<float>> depth;           // true camera z, in the model's image order
  std::vector<synth::PinholeCamera> cameras;
  std::vector<synth::Pose> poses;
};

// `views` cameras on a horizontal line `baseline` metres long, 1 m in front of y = -1, all
// looking at the facade (depths about 4 to 8 m).
SyntheticMvs makeFacadeMvs(int width, int height, int views, double baseline,
                           std::uint32_t seed = 7);

// The workspace of a synthetic scene: its sparse model, its images held in memory.
Workspace workspaceOf(const SyntheticMvs& s, const WorkspaceOptions& options = {});

struct DepthScore {
  double completeness = 0;    // truth pixels with an estimate within relTol
  double accuracy = 0;        // estimates within relTol of the truth
  double medianRelError = 0;  // over the estimates
  std::int64_t estimates = 0;
};
DepthScore scoreDepth(const DepthMap& map, const Image<float>& truth, double relTol);

struct CloudScore {
  double accuracy = 0, completeness = 0, f1 = 0;
};
// Accuracy: fused points within tau of the true surface; completeness: truth points (the
// true depth of every `step`-th pixel of every view) within tau of a fused point.
CloudScore scoreCloud(const std::vector<io::PlyPoint>& points, const SyntheticMvs& s, double tau,
                      int step = 4);

}  // namespace vidmap::mvs::testing
