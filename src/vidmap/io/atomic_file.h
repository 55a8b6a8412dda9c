// Outputs are written to a temporary name in the destination folder and renamed into place,
// so a failure never leaves a half-written file under the final name.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace vidmap::io {

// Calls write(tmpPath), then renames tmpPath to path. On any exception the temporary file
// is removed and the exception propagates. Throws vidmap::Error when the folder is missing.
void writeAtomically(const std::filesystem::path& path,
                     const std::function<void(const std::filesystem::path& tmp)>& write);

// Writes text to path atomically.
void writeTextAtomically(const std::filesystem::path& path, const std::string& text);

// The same protocol for writers that stream into a file over time (video): write to tmp(),
// then commit() renames it to path. Destroying an uncommitted AtomicFile removes tmp().
class AtomicFile {
 public:
  // Throws vidmap::Error when the folder of path is missing.
  explicit AtomicFile(const std::filesystem::path& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& tmp() const { return tmp_; }
  bool committed() const { return committed_; }
  void commit();   // renames tmp() to path(); throws vidmap::Error on failure
  void discard();  // removes tmp() now

 private:
  std::filesystem::path path_, tmp_;
  bool committed_ = false;
};

}  // namespace vidmap::io
