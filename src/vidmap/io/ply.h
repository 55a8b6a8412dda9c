// PLY point clouds (binary little-endian, float x y z and uchar red green blue, optional
// float nx ny nz), the format MeshLab, CloudCompare and Gaussian-splatting loaders read.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace vidmap::io {

struct PlyPoint {
  std::array<float, 3> xyz{0, 0, 0};
  std::array<std::uint8_t, 3> rgb{0, 0, 0};
  std::array<float, 3> normal{0, 0, 0};
};

// Writes the points atomically; non-finite coordinates are a vidmap::Error (a PLY with NaN
// breaks most viewers).
void writePly(const std::filesystem::path& path, const std::vector<PlyPoint>& points,
              bool withNormals = false);

// Reads a PLY written by writePly (binary little-endian or ASCII, vertex x y z with optional
// colour and normals). Other layouts and truncated files are a vidmap::Error.
std::vector<PlyPoint> readPly(const std::filesystem::path& path);

}  // namespace vidmap::io
