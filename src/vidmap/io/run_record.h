// The run record: one versioned JSON document per run saying what ran, where, with which
// options, and where the time and memory went (schema below, version kSchemaVersion).
// Stages, the pipeline and benchmarks all report into it (architecture principle 5).
//
//   {"schema": "vidmap.run_record", "schema_version": 1,
//    "tool": {"name", "version", "git_commit"}, "command": "...",
//    "started_at": "2026-01-01T00:00:00Z", "wall_ms": total since the record was created,
//    "build": {"type", "compiler", "cuda", "cuda_architectures", "cuda_no_fma", "ffmpeg",
//              "openmp"},
//    "machine": {"hostname", "os", "cpu_model", "cpu_cores", "memory_bytes"},
//    "cuda": {"runtime_version", "driver_version", "no_device_reason"},
//    "devices": [{"index", "name", "compute_capability", "multiprocessors", "memory_bytes",
//                 ...}],
//    "options": {free-form, nested by the dots of setOption's paths},
//    "stages": {"<name>": {"wall_ms", "gpu_ms", "calls",               (in first-seen order)
//                          "device_bytes", "kernels": {"<name>": {"launches", "gpu_ms"}}}},
//    "kernels": {"<name>": {"launches", "gpu_ms"}},                   (all stages together)
//    "counts": {"<name>": integer},
//    "metrics": {"<name>": number},                  (results that are not counts)
//    "lists": {"<name>": [{"<field>": value, ...}, ...]},   (rows of a result, e.g. the
//                                                    keyframes no model holds and why)
//    "peak_memory": {"host_rss_bytes", "device_bytes"}}
//
// GPU fields never stand for what was not measured: a stage that ran no timed GPU work has
// "gpu_ms": null and neither "device_bytes" nor "kernels"; "peak_memory.device_bytes" is null
// when no GPU memory was reported. A stage's "gpu_ms" is the GPU time of its timed kernels
// (or of its stream between start and stop, for a stage timed with a stream), its "wall_ms"
// the host's; "device_bytes" is the peak of the stage's GPU context. Kernel rows are capped
// (kMaxKernelRows per stage, kMaxRunKernelRows in all) by GPU time; the rest are summed in
// one row "(N others)".
//
// The record itself needs no JSON library; toJson() and write() need nlohmann-json and throw
// vidmap::Error in a build without it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "vidmap/gpu/device.h"
#include "vidmap/gpu/event_timer.h"
#include "vidmap/gpu/kernel_profiler.h"

namespace vidmap::gpu {
class Context;
class Stream;
}  // namespace vidmap::gpu

namespace vidmap::io {

struct MachineInfo {
  std::string hostname;
  std::string os;        // "Linux 6.1.0-..."
  std::string cpuModel;  // /proc/cpuinfo "model name", or "unknown"
  int cpuCores = 0;      // logical processors online
  std::int64_t memoryBytes = 0;

  static MachineInfo current();
};

// The peak resident set size of this process so far (getrusage), in bytes.
std::int64_t hostPeakRssBytes();

struct StageStat {
  std::string name;
  double wallMs = 0;
  double gpuMs = 0;
  std::int64_t calls = 0;
  bool gpu = false;  // GPU time was measured (gpuMs, and deviceBytes/kernels when a context)
  std::int64_t deviceBytes = 0;            // peak of the stage's GPU context
  std::vector<gpu::KernelStat> kernels{};  // the stage's kernels, by name
};

using OptionValue = std::variant<bool, std::int64_t, double, std::string>;

class RunRecord;

// Times one call of a stage: wall time on the host, and GPU time on a stream when one is
// given (a pair of events; stopping then waits for the stream so wall time includes the GPU
// work). Adds to the record when stopped or destroyed.
class ScopedStage {
 public:
  ScopedStage(RunRecord& record, std::string name, const gpu::Stream* stream = nullptr);
  ScopedStage(ScopedStage&&) = delete;
  ~ScopedStage();
  // Ends the stage now (idempotent); throws vidmap::Error when the GPU timing fails.
  void stop();

 private:
  RunRecord* record_;
  std::string name_;
  const gpu::Stream* stream_;
  std::optional<gpu::EventTimer> timer_;
  std::chrono::steady_clock::time_point start_;
  bool stopped_ = false;
};

class RunRecord {
 public:
  static constexpr int kSchemaVersion = 1;
  static constexpr int kMaxKernelRows = 24;     // per stage
  static constexpr int kMaxRunKernelRows = 64;  // in the run's "kernels"

  // Fills the tool, build, machine and devices (querying CUDA when built with it) and starts
  // the run's clock.
  RunRecord();

  void setCommand(std::string command);

  // Options as a path of dot-separated keys ("klt.window_size") to a value; written nested.
  // Throws vidmap::Error on an empty key or a path that would make a value an object
  // ("klt" set while "klt.window_size" exists, or the reverse). Setting a path again
  // replaces its value.
  void setOption(const std::string& path, OptionValue value);
  void setOption(const std::string& path, const char* value) {
    setOption(path, OptionValue(std::string(value)));
  }
  template <class T>
  requires std::is_arithmetic_v<T>
  void setOption(const std::string& path, T value) {
    if constexpr (std::is_same_v<T, bool>)
      setOption(path, OptionValue(value));
    else if constexpr (std::is_integral_v<T>)
      setOption(path, OptionValue(static_cast<std::int64_t>(value)));
    else
      setOption(path, OptionValue(static_cast<double>(value)));
  }

  // Adds one call (or `calls`) of a stage; stages keep the order they first appear in. GPU
  // time counts as measured when gpuMeasured or gpuMs > 0.
  void addStage(const std::string& name, double wallMs, double gpuMs = 0, std::int64_t calls = 1,
                bool gpuMeasured = false);
  // Times the enclosing scope as one call of `name` (see ScopedStage).
  //   { auto t = record.stage("klt", &ctx.stream()); ... }
  [[nodiscard]] ScopedStage stage(std::string name, const gpu::Stream* stream = nullptr);

  // Adds launches and GPU ms per kernel name.
  void addKernels(const std::vector<gpu::KernelStat>& kernels);
  // Adds a GPU context's kernels (from its profiler; waits for the launches in flight) and
  // its peak device bytes. Call once per context, at the end of its work.
  void addGpuUsage(gpu::Context& ctx);
  // Adds the GPU work of a context that served one stage: its kernels (to the stage's rows,
  // whose sum becomes part of the stage's gpu_ms, and to the run's), and its peak device
  // bytes (the stage's; the run's peak is the sum over the stages' contexts, which live
  // together: an upper bound on the bytes held at once). Waits for the launches in flight.
  // Call once per context, at the end of its work; the stage is created when new (no calls).
  // `routes`: kernels whose names start with a route's prefix are another stage's work done
  // in this context (the matcher's context runs plain and guided matching, whose host times
  // are two stages); they go to that stage's rows and gpu_ms, the peak bytes stay with `stage`.
  struct KernelRoute {
    std::string prefix, stage;
  };
  void addGpuUsage(const std::string& stage, gpu::Context& ctx,
                   const std::vector<KernelRoute>& routes = {});
  // The largest device peak seen is kept.
  void noteDevicePeakBytes(std::int64_t bytes);

  void setCount(const std::string& name, std::int64_t value);
  void addCount(const std::string& name, std::int64_t delta = 1);
  // A result that is not a count (a mean error, a ratio); setting it again replaces it.
  void setMetric(const std::string& name, double value);
  // Appends a row (fields in order) to the list `name`.
  using ListItem = std::vector<std::pair<std::string, OptionValue>>;
  void addListItem(const std::string& name, ListItem item);

  const std::vector<StageStat>& stages() const { return stages_; }
  const std::map<std::string, gpu::KernelStat>& kernels() const { return kernels_; }
  const std::map<std::string, std::int64_t>& counts() const { return counts_; }
  const std::map<std::string, double>& metrics() const { return metrics_; }
  const std::map<std::string, std::vector<ListItem>>& lists() const { return lists_; }
  const std::vector<std::pair<std::string, OptionValue>>& options() const { return options_; }
  const MachineInfo& machine() const { return machine_; }
  const std::vector<gpu::DeviceInfo>& devices() const { return devices_; }
  std::int64_t devicePeakBytes() const { return devicePeakBytes_; }

  // The JSON document (host peak RSS and wall_ms read now). Throws vidmap::Error when vidmap
  // was built without nlohmann-json.
  std::string toJson() const;
  // Writes toJson() to `path` atomically (temporary name, then rename). Throws vidmap::Error
  // when the folder does not exist or the write fails; nothing is left behind then.
  void write(const std::filesystem::path& path) const;

 private:
  mutable std::mutex mutex_;
  std::string command_;
  std::string startedAt_;
  std::chrono::steady_clock::time_point start_;
  MachineInfo machine_;
  std::vector<gpu::DeviceInfo> devices_;
  std::string noDeviceReason_;
  std::vector<std::pair<std::string, OptionValue>> options_;
  std::vector<StageStat> stages_;
  std::map<std::string, gpu::KernelStat> kernels_;
  std::map<std::string, std::int64_t> counts_;
  std::map<std::string, double> metrics_;
  std::map<std::string, std::vector<ListItem>> lists_;
  std::int64_t devicePeakBytes_ = 0;
  std::int64_t stageContextBytes_ = 0;  // sum of the stages' context peaks
  bool deviceReported_ = false;
};

}  // namespace vidmap::io
