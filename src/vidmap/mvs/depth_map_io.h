// COLMAP's dense array files (depth_maps/NAME.{photometric,geometric}.bin, normal_maps/...):
// the text header "width&height&channels&" then float32 little-endian samples, channel
// planes one after the other, each row-major (x fastest), as COLMAP's mvs/mat.h and its
// scripts/python/read_write_dense.py read them.
#pragma once

#include <filesystem>
#include <vector>

namespace vidmap::mvs {

struct DenseArray {
  int width = 0, height = 0, channels = 0;
  std::vector<float> data;  // channels planes of width * height
};

// Written atomically; a size that does not match the data is a vidmap::Error.
void writeDenseArray(const std::filesystem::path& path, const DenseArray& a);
// Throws vidmap::Error naming the file for a bad header or a truncated body.
DenseArray readDenseArray(const std::filesystem::path& path);

}  // namespace vidmap::mvs
