// Where the real benchmark data lives: $VIDMAP_DATA, else the `shared/data` folder beside the
// checkout (VIDMAP_DATA_DEFAULT, set by ctest). Tests and benchmarks skip when it is absent;
// the data is read in place and never copied into the repository.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace vidmap {

inline std::optional<std::filesystem::path> dataDir() {
  for (const char* var : {"VIDMAP_DATA", "VIDMAP_DATA_DEFAULT"}) {
    const char* v = std::getenv(var);
    if (v && *v && std::filesystem::is_directory(v)) return std::filesystem::path(v);
  }
  // Fallback for benchmarks run by hand from a build folder inside the checkout.
  for (const char* rel : {"../shared/data", "../../shared/data", "../../../shared/data"}) {
    if (std::filesystem::is_directory(rel)) return std::filesystem::absolute(rel);
  }
  return std::nullopt;
}

// The path of a data subfolder (e.g. "middlebury-flow"), or nullopt when it is absent.
inline std::optional<std::filesystem::path> dataPath(const std::string& sub) {
  auto d = dataDir();
  if (!d) return std::nullopt;
  auto p = *d / sub;
  if (!std::filesystem::exists(p)) return std::nullopt;
  return p;
}

}  // namespace vidmap
