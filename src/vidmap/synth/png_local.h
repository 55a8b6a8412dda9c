// PNG output for synthetic sequences through libpng. A synth-local stopgap until io's PNG
// writer lands on main (then this file goes; the lead dedupes). Writes exactly the bytes
// libpng produces for the pixels (no time chunk), so output is deterministic.
#pragma once

#include <cstdint>
#include <filesystem>

#include "vidmap/core/image.h"

namespace vidmap::synth {

// 8-bit RGB. Throws vidmap::Error naming the file on failure.
void writePngRgb8(const std::filesystem::path& path, const RgbImage& image);
// 16-bit gray (e.g. depth in units of 1/5000 m, as TUM RGB-D stores it).
void writePngGray16(const std::filesystem::path& path, const Image<std::uint16_t>& image);

}  // namespace vidmap::synth
