// Outputs are written to a temporary name in the destination folder and renamed into place,
// so a failure never leaves a half-written file under the final name.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace vidmap::io {

// Calls write(tmpPath), then renames tmpPath to path. On any exception the temporary file
// is removed and the exception propagates. Throws vidmap::Error when the folder is missing.
void writeAtomically(const std::filesystem::path& path,
                     const std::function<void(const std::filesystem::path& tmp)>& write);

// Writes text to path atomically.
void writeTextAtomically(const std::filesystem::path& path, const std::string& text);

// Writes text to `tmp`, a temporary file standing for `path`: a failure (a full disk) is a
// vidmap::Error naming `path`'s folder and the system's reason, not the hidden temporary.
void writeTextFile(const std::filesystem::path& tmp, const std::filesystem::path& path,
                   const std::string& text);

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
  friend class AtomicFileGroup;
  std::filesystem::path path_, tmp_;
  bool committed_ = false;
};

// Several outputs committed together or not at all (tracks and their run record): each is
// written to its temporary name (add() then write to tmp()); commit() renames them into place
// in order. When a rename fails, the files already renamed are rolled back: a file they
// replaced is restored, a new one removed; the temporaries are removed and the error names
// the file that failed. Until commit() nothing under the final names changes.
class AtomicFileGroup {
 public:
  AtomicFileGroup() = default;
  ~AtomicFileGroup();
  AtomicFileGroup(const AtomicFileGroup&) = delete;
  AtomicFileGroup& operator=(const AtomicFileGroup&) = delete;

  // A new member; throws vidmap::Error when its folder is missing or when `path` is already a
  // member (two outputs under one name would lose one of them).
  AtomicFile& add(const std::filesystem::path& path);
  void commit();
  bool committed() const { return committed_; }

  // Test hook: the rename of member `index` fails as a full disk or a vanished folder would.
  void failRenameForTesting(int index) { failAt_ = index; }

 private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
  bool committed_ = false;
  int failAt_ = -1;
};

}  // namespace vidmap::io
