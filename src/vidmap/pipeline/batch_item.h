// The state of one batch item, read from its output folder, and the files that record it:
//
//   OUT/                        written whole by `vidmap reconstruct` (OutputFolder), or absent
//   OUT/run.json                the run record: its presence, valid, is the completion marker
//   OUT/failed.json             the last failure, when the last attempt failed (no model then)
//   <parent>/.<name>.lock       held (a POSIX record lock) while a process runs the item; it
//                               names the process (pid, host) for the operator
//
// "Complete" means: run.json parses as a vidmap run record of a `vidmap reconstruct` run, its
// count "models" is at least 1 and equals the number of sparse/N folders, and each sparse/N
// holds cameras, images and points3D (deep: read back by io::readColmapModel). Since
// reconstruct writes OUT as a whole after run.json, a complete folder is never a partial one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vidmap/pipeline/batch_manifest.h"

namespace vidmap::pipeline {

enum class ItemState { kPending, kRunning, kDone, kFailed };
const char* toString(ItemState s);

struct FailureRecord {
  std::string command;  // the child's command line, shell-quoted
  int exitCode = 0;     // 128 + signal when a signal ended it
  std::string message;  // the reconstruct error, or the last lines of its stderr
  std::string time;     // when it ended, ISO 8601 UTC
  double seconds = 0;   // how long the attempt ran
  int attempts = 1;     // failed attempts so far
  std::string host;
};

struct ItemStatus {
  ItemState state = ItemState::kPending;
  std::string detail;  // why not complete, or the failure message, or who runs it
  // From run.json when done:
  double wallSeconds = 0;
  std::int64_t frames = 0, framesPosed = 0, models = 0, landmarks = 0;
  std::string startedAt;
  std::vector<std::string> warnings;
  std::optional<FailureRecord> failure;  // when failed
  int lockPid = 0;                       // when running
};

// Whether `out` holds a complete model (above). `why` gets the first reason it does not.
// deep: read every model back; otherwise check that its files are present and not empty.
bool isCompleteOutput(const std::filesystem::path& out, bool deep, std::string* why = nullptr);

// The item's state: done (complete), running (its lock is held), failed (failed.json), else
// pending. deep as in isCompleteOutput.
ItemStatus inspectItem(const BatchItem& item, bool deep = false);

std::filesystem::path failurePath(const std::filesystem::path& out);
std::filesystem::path lockPath(const std::filesystem::path& out);
// Writes OUT/failed.json atomically (creating OUT).
void writeFailure(const std::filesystem::path& out, const FailureRecord& f);
// Reads OUT/failed.json; nullopt when absent. Throws vidmap::Error when it is unreadable.
std::optional<FailureRecord> readFailure(const std::filesystem::path& out);

// The lock of one item: a POSIX record lock (fcntl) on <parent>/.<name>.lock that the kernel
// releases when the process ends however it ends, so the lock of a dead process is taken
// over by the next one; it works on NFS through its lock manager. The file holds "pid host"
// of the holder for the operator.
class ItemLock {
 public:
  // Tries to take the lock of `out` (creating its parent folder). Never blocks.
  explicit ItemLock(const std::filesystem::path& out);
  ~ItemLock();
  ItemLock(const ItemLock&) = delete;
  ItemLock& operator=(const ItemLock&) = delete;
  bool held() const { return fd_ >= 0; }
  // When not held: the holder's "pid host" as written in the file, and the pid the lock
  // manager reports (0 when unknown).
  const std::string& holder() const { return holder_; }
  int holderPid() const { return holderPid_; }
  // The pid holding the lock of `out`, 0 when nobody does (does not take it).
  static int probe(const std::filesystem::path& out);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::string holder_;
  int holderPid_ = 0;
};

// Removes the temporary folders (.<name>.tmp-*) that a killed reconstruct of `out` left
// beside it. Call with the item's lock held. Returns how many were removed.
int removeStaleTemporaries(const std::filesystem::path& out);

// One row per item for `vidmap batch-summary`.
struct SummaryRow {
  const BatchItem* item = nullptr;
  ItemStatus status;
};
std::vector<SummaryRow> summarize(const BatchManifest& m, bool deep = false);
std::string summaryCsv(const std::vector<SummaryRow>& rows);
std::string summaryJson(const std::vector<SummaryRow>& rows);  // needs nlohmann-json

std::string utcNowIso();

}  // namespace vidmap::pipeline
