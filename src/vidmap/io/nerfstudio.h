// A COLMAP model as nerfstudio's `transforms.json` (as nerfstudio's colmap_to_json writes it,
// nerfstudio/process_data/colmap_utils.py): per frame the camera-to-world `transform_matrix`
// in nerfstudio's OpenGL camera convention (x right, y up, looking down -z), intrinsics
// fl_x, fl_y, cx, cy, w, h and OpenCV distortion (k1, k2, p1, p2; k3..k6 for FULL_OPENCV) in
// COLMAP's pixel convention, and the world turned as nerfstudio turns it (z up:
// `applied_transform`, the 3x4 matrix applied to world points). Images of one shared camera
// give top-level intrinsics; several cameras give intrinsics per frame. With a PLY path, the
// points (turned the same way) are written for splatfacto's initialisation (`ply_file_path`).
#pragma once

#include <filesystem>
#include <string>

#include "vidmap/io/colmap_model.h"

namespace vidmap::io {

struct NerfstudioOptions {
  std::string imageDir = "images";        // file_path = imageDir/name, relative to transforms.json
  std::string plyFile = "sparse_pc.ply";  // beside transforms.json; empty: no points
};

// The transforms.json text. Throws vidmap::Error for an empty model or a build without
// nlohmann-json.
std::string nerfstudioTransforms(const ColmapModel& model, const NerfstudioOptions& options);

// Writes transforms.json (and the PLY) atomically; the folder must exist.
void exportNerfstudio(const ColmapModel& model, const std::filesystem::path& transformsPath,
                      const NerfstudioOptions& options);

}  // namespace vidmap::io
