// A fresh folder for one test (or one tool run), unique per process and call (mkdtemp), and
// removed with everything in it when the object goes out of scope: concurrent test runs never
// collide on a fixed name in /tmp, and nothing is left there afterwards.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "vidmap/core/error.h"

namespace vidmap {

class TempDir {
 public:
  // `tag` becomes part of the name (letters, digits, '_'), to tell the folders apart.
  explicit TempDir(const std::string& tag = "tmp") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("vidmap_" + tag + "_XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw Error("cannot create a temporary folder " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A fresh, empty folder `name` for a test, under one folder per process that is removed when
// the program exits: helpers that hand out paths never share a fixed name in /tmp.
inline std::filesystem::path testFolder(const std::string& name) {
  static TempDir root("test");
  const std::filesystem::path d = root / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace vidmap
