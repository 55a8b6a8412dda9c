// Reading and writing the text format of "Bundle Adjustment in the Large" (Agarwal, Snavely,
// Seitz, Szeliski, ECCV 2010, grail.cs.washington.edu/projects/bal): a header
// "cameras points observations", one line "camera point x y" per observation, then 9 values per
// camera (Rodrigues rotation, translation, f, k1, k2) and 3 per point. Files ending in .bz2 are
// read through libbzip2 when the build has it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "vidmap/ba/problem.h"

namespace vidmap::ba {

// A BAL problem: model BAL, angle-axis rotations, one intrinsics block per image. Throws
// vidmap::Error naming the file and what is wrong (missing, truncated, an index out of range,
// a value that is not a number, .bz2 without bzip2 support).
Problem readBal(const std::filesystem::path& path);
Problem parseBal(const std::string& text, const std::string& name = "<text>");

// Writes the problem (model BAL, angle-axis) in BAL text with 17 significant digits, to a
// temporary name first and renamed.
void writeBal(const std::filesystem::path& path, const Problem& problem);

// True when this build can read .bz2 files.
bool balBzip2Supported();

// dir / rel when it is readable by this build, else the decompressed sibling (rel without
// ".bz2") when it exists, else nullopt. For data folders carried with decompressed copies.
std::optional<std::filesystem::path> findBal(const std::filesystem::path& dir,
                                             const std::string& rel);

}  // namespace vidmap::ba
