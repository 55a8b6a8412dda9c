// A fresh folder for one test (or one tool run), unique per process and call (mkdtemp), and
// removed with everything in it when the object goes out of scope: concurrent test runs never
// collide on a fixed name in /tmp, and nothing is left there afterwards.
#pragma once

#include <stdlib.h>
#include <unistd.h>

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
  // Only the process that made the folder removes it: a forked child that exits normally (a
  // test's helper process) runs static destructors too and must not take the parent's files.
  ~TempDir() {
    if (::getpid() != owner_) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
  pid_t owner_ = ::getpid();
};

namespace detail {
// One folder per test process, removed when the program exits.
inline const TempDir& testRoot() {
  static const TempDir root("test");
  return root;
}
}  // namespace detail

// A fresh, empty folder `name` for a test, under one folder per process that is removed when
// the program exits: helpers that hand out paths never share a fixed name in /tmp.
inline std::filesystem::path testFolder(const std::string& name) {
  const std::filesystem::path d = detail::testRoot() / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// The folder `name` under the same per-process root, made on the first call and kept (not
// emptied) by later ones: for what a test binary renders once and several tests reuse, such
// as a synthetic sequence. Each test file passes its own name, so files linked into one
// binary never share cached inputs by accident.
inline std::filesystem::path testCacheFolder(const std::string& name) {
  const std::filesystem::path d = detail::testRoot() / name;
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace vidmap
