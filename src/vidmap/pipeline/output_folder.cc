#include "vidmap/pipeline/output_folder.h"

#include <unistd.h>

#include <atomic>
#include <string>
#include <system_error>

#include "vidmap/core/error.h"

namespace vidmap::pipeline {

namespace fs = std::filesystem;

namespace {

bool existsNonEmpty(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return false;
  if (!fs::is_directory(p, ec)) return true;
  return !fs::is_empty(p, ec);
}

}  // namespace

OutputFolder::OutputFolder(const fs::path& dir, bool overwrite) : overwrite_(overwrite) {
  require(!dir.empty(), "the output folder is empty");
  dir_ = fs::absolute(dir).lexically_normal();
  if (dir_.filename().empty()) dir_ = dir_.parent_path();
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    throw Error("the output " + dir_.string() + " exists and is not a folder");
  if (existsNonEmpty(dir_) && !overwrite_)
    throw Error("the output folder " + dir_.string() +
                " is not empty (choose another, or --overwrite to replace it)");
  fs::create_directories(dir_.parent_path(), ec);
  if (ec) throw Error("cannot create " + dir_.parent_path().string() + ": " + ec.message());
  static std::atomic<int> counter{0};
  tmp_ = dir_.parent_path() / ("." + dir_.filename().string() + ".tmp-" + std::to_string(getpid()) +
                               "-" + std::to_string(counter++));
  fs::remove_all(tmp_, ec);
  fs::create_directory(tmp_, ec);
  if (ec) throw Error("cannot create the temporary folder " + tmp_.string() + ": " + ec.message());
}

OutputFolder::~OutputFolder() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
}

void OutputFolder::commit() {
  require(!committed_, "output folder committed twice");
  std::error_code ec;
  fs::path old;
  if (fs::exists(dir_, ec)) {
    if (existsNonEmpty(dir_) && !overwrite_)
      throw Error("the output folder " + dir_.string() + " was filled while vidmap ran");
    old = tmp_;
    old += ".old";
    fs::rename(dir_, old, ec);
    if (ec) throw Error("cannot move the old " + dir_.string() + " aside: " + ec.message());
  }
  fs::rename(tmp_, dir_, ec);
  if (ec) {
    std::error_code ec2;
    if (!old.empty()) fs::rename(old, dir_, ec2);
    throw Error("cannot rename " + tmp_.string() + " to " + dir_.string() + ": " + ec.message());
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

}  // namespace vidmap::pipeline
