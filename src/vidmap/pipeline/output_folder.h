// An output folder written as a whole: everything goes into a temporary folder beside the
// destination, which is renamed into place by commit(). A failure (an exception, a crash
// before commit) leaves the destination as it was: no partial model.
//
// Nothing a user owns is ever deleted. `overwrite` replaces a folder only when it holds
// nothing but what vidmap writes (kOwnedEntries: `sparse/` with its numbered models,
// `run.json`, ...); a folder that also holds anything else, a symbolic link among those
// entries, or a folder that is or contains one of the run's inputs is refused with a message
// naming what is in the way. Symbolic links on the way to the folder are followed: the real
// folder is checked and written.
//
// A run killed where no handler runs (SIGKILL, a power cut) leaves its temporary folder
// `.NAME.tmp-PID-N` beside NAME, and a kill between the two renames of commit() leaves the old
// output as `.NAME.tmp-PID-N.old` with nothing at NAME. The next run on the same folder
// recovers: a stale temporary folder (its process no longer exists) is removed, and a stale
// `.old` is put back at NAME when NAME is missing (removed otherwise); notes() says what was
// done, for the summary.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace vidmap::pipeline {

// The entries vidmap writes at the top of an output folder (a name ending in '/' is a folder).
inline constexpr const char* kOwnedEntries[] = {"sparse/", "run.json", "points3D.ply",
                                                "trajectory.txt", "report.html"};
// The files vidmap writes in each model folder sparse/N.
inline constexpr const char* kOwnedModelFiles[] = {"cameras.bin",  "images.bin",    "points3D.bin",
                                                   "cameras.txt",  "images.txt",    "points3D.txt",
                                                   "points3D.ply", "trajectory.txt"};

class OutputFolder {
 public:
  // Throws vidmap::Error when `dir` exists and is not a folder; when it is not empty and not
  // `overwrite`; when, with `overwrite`, it holds anything vidmap does not write; when it is,
  // or contains, one of `inputs`; or when its parent folder cannot be created. Stale temporary
  // folders of `dir` are recovered first (see above).
  OutputFolder(const std::filesystem::path& dir, bool overwrite,
               const std::vector<std::filesystem::path>& inputs = {});
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& tmp() const { return tmp_; }
  // Replaces `dir` by the temporary folder. Throws vidmap::Error on failure, or when `dir`
  // was given content vidmap does not write while the run went on.
  void commit();
  bool committed() const { return committed_; }
  // What the recovery of stale temporary folders did, one sentence each.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void recoverStale();

  std::filesystem::path dir_, tmp_;
  bool overwrite_;
  bool committed_ = false;
  std::vector<std::string> notes_;
};

// The entries of `dir` (relative paths, a folder ending in '/') that vidmap does not write,
// at most `limit` of them; empty when `dir` holds only vidmap's outputs (or does not exist).
std::vector<std::string> foreignEntries(const std::filesystem::path& dir, int limit = 5);

}  // namespace vidmap::pipeline
