// Runs batch items: each as a child process `vidmap reconstruct INPUT -o OUTPUT ARGS...`.
//
// A child process rather than a call in this process because: the item's options are parsed
// by the reconstruct command itself (one parser, no second list of options to keep in step);
// a crash, an abort or a leak in one item cannot take down the batch or the other items of
// `--all`; each child's memory (host and GPU) is returned to the system when it ends; and
// CUDA_VISIBLE_DEVICES / OMP_NUM_THREADS are set per child, before CUDA or OpenMP start.
//
// Protocol of one item (runItem):
//   1. take the item's lock (batch_item.h); when another live process holds it: kBusy;
//   2. when OUT is complete: kSkipped (nothing is run or written);
//   3. remove temporaries a killed run left, and a stale OUT/failed.json (kept in memory);
//   4. run the child; its output is forwarded to our stderr and its tail kept; the child gets
//      SIGTERM when this process dies, however it dies, so it never runs without the lock;
//   5. success: OUT is complete (reconstruct commits it whole) -> kDone; failure: OUT/failed.json
//      records the command, exit code, message, time and attempt count -> kFailed;
//      interrupted by requestStop (SIGTERM from scancel): nothing recorded -> kInterrupted, and
//      the item is pending for the next run.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "vidmap/pipeline/batch_manifest.h"

namespace vidmap::pipeline {

struct RunnerOptions {
  std::filesystem::path program;  // the vidmap binary; empty: this process's own executable
  // CUDA_VISIBLE_DEVICES for the child when set (an empty string hides every GPU).
  bool setCudaDevices = false;
  std::string cudaDevices;
  // OMP_NUM_THREADS for the child when > 0 and the environment does not set it.
  int ompThreads = 0;
  bool deepCheck = true;     // read the models back before skipping or calling an item done
  std::string outputPrefix;  // put before each line of the child's output ("[3] ")
};

enum class ItemOutcome { kDone, kSkipped, kFailed, kBusy, kInterrupted };
const char* toString(ItemOutcome o);

struct ItemResult {
  ItemOutcome outcome = ItemOutcome::kFailed;
  int exitCode = 0;
  double seconds = 0;
  std::string message;  // the failure, or who holds the lock
};

// The child's argument vector: program reconstruct INPUT -o OUTPUT ARGS...
std::vector<std::string> reconstructArgv(const BatchItem& item,
                                         const std::filesystem::path& program);

// Runs one item (protocol above). Throws vidmap::Error only when the batch itself cannot work
// (the lock folder cannot be created, the child cannot be started).
ItemResult runItem(const BatchItem& item, const RunnerOptions& options);

struct RunAllOptions {
  RunnerOptions runner;
  int jobs = 1;  // items run at once
  // CUDA_VISIBLE_DEVICES of each worker slot, used round robin (slot w gets gpus[w % size]);
  // empty: the environment is left as it is.
  std::vector<std::string> gpus;
  bool hideGpus = false;  // CUDA_VISIBLE_DEVICES="" for every child (CPU workers)
};

struct RunAllResult {
  int done = 0, skipped = 0, failed = 0, busy = 0, interrupted = 0;
  double seconds = 0;
  std::vector<ItemResult> items;  // by manifest index
};

// Runs every item on `jobs` workers, in manifest order. `onItem` (optional) is called after
// each item, one call at a time.
RunAllResult runAll(const BatchManifest& manifest, const RunAllOptions& options,
                    const std::function<void(const BatchItem&, const ItemResult&)>& onItem = {});

// The GPUs a worker may be given: the entries of CUDA_VISIBLE_DEVICES when it is set, else
// "0".."count-1".
std::vector<std::string> visibleGpus(int deviceCount);

// Stops the batch: no new item starts and `sig` is forwarded to the running children (their
// items end kInterrupted). Async-signal-safe: install it as the SIGTERM/SIGINT handler.
void requestStop(int sig);
bool stopRequested();
// Forgets a stop, for a process that goes on afterwards (tests).
void clearStop();

}  // namespace vidmap::pipeline
