#include "vidmap/io/run_record.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <exception>
#include <fstream>

#include "vidmap/core/build_info.h"
#include "vidmap/core/error.h"
#include "vidmap/gpu/context.h"
#include "vidmap/gpu/stream.h"
#include "vidmap/io/atomic_file.h"

#if defined(VIDMAP_HAVE_JSON)
#include <nlohmann/json.hpp>
#endif

namespace vidmap::io {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string readCpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  // x86 says "model name"; some ARM kernels say "Model" or only "CPU part".
  for (const char* key : {"model name", "Model", "Hardware"}) {
    f.clear();
    f.seekg(0);
    while (std::getline(f, line)) {
      auto colon = line.find(':');
      if (colon != std::string::npos && trim(line.substr(0, colon)) == key) {
        std::string v = trim(line.substr(colon + 1));
        if (!v.empty()) return v;
      }
    }
  }
  return "unknown";
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Splits "a.b.c" into keys; every key must be non-empty.
std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = path.find('.', start);
    std::string key =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) throw Error("run record option \"" + path + "\": empty key in the path");
    keys.push_back(key);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return keys;
}

bool isPrefixPath(const std::string& prefix, const std::string& path) {
  return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
         path[prefix.size()] == '.';
}

}  // namespace

MachineInfo MachineInfo::current() {
  MachineInfo m;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  utsname u{};
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  m.cpuModel = readCpuModel();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  m.cpuCores = cores > 0 ? static_cast<int>(cores) : 0;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0) m.memoryBytes = std::int64_t(pages) * pageSize;
  return m;
}

std::int64_t hostPeakRssBytes() {
  rusage r{};
  if (getrusage(RUSAGE_SELF, &r) != 0) return 0;
  return std::int64_t(r.ru_maxrss) * 1024;  // Linux reports kilobytes
}

// ---------------------------------------------------------------------------------------------

ScopedStage::ScopedStage(RunRecord& record, std::string name, const gpu::Stream* stream)
    : record_(&record), name_(std::move(name)), stream_(stream) {
  if (stream_) {
    timer_.emplace(stream_->device());
    timer_->start(*stream_);
  }
  start_ = std::chrono::steady_clock::now();
}

ScopedStage::~ScopedStage() {
  try {
    stop();
  } catch (...) {
    // The stage's wall time is recorded; a GPU timing failure surfaces at the next checked
    // CUDA call of the caller, and a destructor must not throw.
  }
}

void ScopedStage::stop() {
  if (stopped_) return;
  stopped_ = true;
  double gpuMs = 0;
  std::exception_ptr error;
  if (timer_) {
    try {
      timer_->stop(*stream_);
      gpuMs = timer_->elapsedMs();  // waits for the stream, so wall time includes the GPU
    } catch (...) {
      error = std::current_exception();
    }
  }
  double wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  record_->addStage(name_, wallMs, gpuMs, 1, timer_.has_value());
  if (error) std::rethrow_exception(error);
}

// ---------------------------------------------------------------------------------------------

RunRecord::RunRecord()
    : startedAt_(utcNow()),
      start_(std::chrono::steady_clock::now()),
      machine_(MachineInfo::current()),
      devices_(gpu::listDevices()),
      noDeviceReason_(devices_.empty() ? gpu::noDeviceReason() : "") {}

void RunRecord::setCommand(std::string command) {
  std::lock_guard lock(mutex_);
  command_ = std::move(command);
}

void RunRecord::setOption(const std::string& path, OptionValue value) {
  splitPath(path);  // validates
  std::lock_guard lock(mutex_);
  for (auto& [key, v] : options_) {
    if (key == path) {
      v = std::move(value);
      return;
    }
    if (isPrefixPath(key, path) || isPrefixPath(path, key))
      throw Error("run record option \"" + path + "\" conflicts with option \"" + key +
                  "\" (a value cannot also hold fields)");
  }
  options_.emplace_back(path, std::move(value));
}

void RunRecord::addStage(const std::string& name, double wallMs, double gpuMs, std::int64_t calls,
                         bool gpuMeasured) {
  std::lock_guard lock(mutex_);
  StageStat* s = nullptr;
  for (StageStat& t : stages_)
    if (t.name == name) s = &t;
  if (!s) {
    stages_.push_back(StageStat{name});
    s = &stages_.back();
  }
  s->wallMs += wallMs;
  s->gpuMs += gpuMs;
  s->calls += calls;
  s->gpu = s->gpu || gpuMeasured || gpuMs > 0;
}

ScopedStage RunRecord::stage(std::string name, const gpu::Stream* stream) {
  return ScopedStage(*this, std::move(name), stream);
}

void RunRecord::addKernels(const std::vector<gpu::KernelStat>& kernels) {
  std::lock_guard lock(mutex_);
  for (const gpu::KernelStat& k : kernels) {
    gpu::KernelStat& t = kernels_[k.name];
    t.name = k.name;
    t.launches += k.launches;
    t.gpuMs += k.gpuMs;
  }
}

void RunRecord::addGpuUsage(gpu::Context& ctx) {
  addKernels(ctx.profiler().stats());
  noteDevicePeakBytes(ctx.memory().peakBytes());
}

void RunRecord::addGpuUsage(const std::string& stage, gpu::Context& ctx,
                            const std::vector<KernelRoute>& routes) {
  const std::vector<gpu::KernelStat> kernels = ctx.profiler().stats();
  const std::int64_t peak = ctx.memory().peakBytes();
  const bool measured = ctx.profiler().enabled();  // off: no GPU time was measured
  addKernels(kernels);
  std::lock_guard lock(mutex_);
  auto row = [&](const std::string& name) -> StageStat& {
    for (StageStat& t : stages_)
      if (t.name == name) return t;
    stages_.push_back(StageStat{name});
    return stages_.back();
  };
  StageStat& own = row(stage);
  own.gpu = own.gpu || measured;
  own.deviceBytes = std::max(own.deviceBytes, peak);
  for (const gpu::KernelStat& k : kernels) {
    std::string to = stage;
    for (const KernelRoute& r : routes)
      if (k.name.rfind(r.prefix, 0) == 0) to = r.stage;
    StageStat& s = row(to);  // after own's use: a new row may move the vector
    s.gpu = s.gpu || measured;
    s.gpuMs += k.gpuMs;
    auto it = std::find_if(s.kernels.begin(), s.kernels.end(),
                           [&](const gpu::KernelStat& r) { return r.name == k.name; });
    if (it == s.kernels.end()) {
      s.kernels.push_back(k);
    } else {
      it->launches += k.launches;
      it->gpuMs += k.gpuMs;
    }
  }
  stageContextBytes_ += peak;
  devicePeakBytes_ = std::max(devicePeakBytes_, stageContextBytes_);
  deviceReported_ = true;
}

void RunRecord::noteDevicePeakBytes(std::int64_t bytes) {
  std::lock_guard lock(mutex_);
  devicePeakBytes_ = std::max(devicePeakBytes_, bytes);
  deviceReported_ = true;
}

void RunRecord::addListItem(const std::string& name, ListItem item) {
  require(!name.empty(), "run record: a list needs a name");
  std::lock_guard<std::mutex> lock(mutex_);
  lists_[name].push_back(std::move(item));
}

void RunRecord::setCount(const std::string& name, std::int64_t value) {
  std::lock_guard lock(mutex_);
  counts_[name] = value;
}

void RunRecord::addCount(const std::string& name, std::int64_t delta) {
  std::lock_guard lock(mutex_);
  counts_[name] += delta;
}

void RunRecord::setMetric(const std::string& name, double value) {
  std::lock_guard lock(mutex_);
  metrics_[name] = value;
}

void RunRecord::write(const std::filesystem::path& path) const {
  std::string text = toJson();
  try {
    writeTextAtomically(path, text);
  } catch (const Error& e) {
    throw Error("cannot write the run record " + path.string() + ": " + e.what());
  }
}

#if defined(VIDMAP_HAVE_JSON)

namespace {

using Json = nlohmann::ordered_json;

// Kernel rows by GPU time (then name), at most `cap`; the rest summed in one row.
Json kernelRows(std::vector<gpu::KernelStat> rows, int cap) {
  std::sort(rows.begin(), rows.end(), [](const gpu::KernelStat& a, const gpu::KernelStat& b) {
    return a.gpuMs != b.gpuMs ? a.gpuMs > b.gpuMs : a.name < b.name;
  });
  Json j = Json::object();
  const std::size_t keep =
      rows.size() > static_cast<std::size_t>(cap) ? static_cast<std::size_t>(cap - 1) : rows.size();
  for (std::size_t i = 0; i < keep; ++i)
    j[rows[i].name] = {{"launches", rows[i].launches}, {"gpu_ms", rows[i].gpuMs}};
  if (keep < rows.size()) {
    gpu::KernelStat rest;
    for (std::size_t i = keep; i < rows.size(); ++i) {
      rest.launches += rows[i].launches;
      rest.gpuMs += rows[i].gpuMs;
    }
    j["(" + std::to_string(rows.size() - keep) + " others)"] = {{"launches", rest.launches},
                                                                {"gpu_ms", rest.gpuMs}};
  }
  return j;
}

Json deviceJson(const gpu::DeviceInfo& d) {
  return Json{
      {"index", d.index},
      {"name", d.name},
      {"pci_bus_id", d.pciBusId},
      {"compute_capability", std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor)},
      {"multiprocessors", d.multiProcessors},
      {"memory_bytes", d.totalMemoryBytes},
      {"l2_cache_bytes", d.l2CacheBytes},
      {"max_threads_per_block", d.maxThreadsPerBlock},
      {"max_threads_per_multiprocessor", d.maxThreadsPerMultiProcessor},
      {"max_blocks_per_multiprocessor", d.maxBlocksPerMultiProcessor},
      {"shared_mem_per_block", d.sharedMemPerBlock},
      {"shared_mem_per_block_optin", d.sharedMemPerBlockOptin},
      {"shared_mem_per_multiprocessor", d.sharedMemPerMultiProcessor},
      {"registers_per_block", d.registersPerBlock},
      {"registers_per_multiprocessor", d.registersPerMultiProcessor},
      {"warp_size", d.warpSize},
      {"clock_khz", d.clockKHz},
      {"memory_clock_khz", d.memoryClockKHz},
      {"memory_bus_bits", d.memoryBusWidthBits},
      {"peak_bandwidth_gbs", d.peakBandwidthGBs()},
      {"ecc", d.eccEnabled}};
}

}  // namespace

std::string RunRecord::toJson() const {
  std::lock_guard lock(mutex_);
  Json j;
  j["schema"] = "vidmap.run_record";
  j["schema_version"] = kSchemaVersion;
  j["tool"] = {{"name", "vidmap"}, {"version", build::kVersion}, {"git_commit", build::kGitCommit}};
  j["command"] = command_;
  j["started_at"] = startedAt_;
  j["wall_ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  j["build"] = {{"type", build::kBuildType},
                {"compiler", build::kCompiler},
                {"cuda", build::kCuda},
                {"cuda_architectures", build::kCuda ? build::kCudaArchitectures : ""},
                {"cuda_no_fma", build::kCudaNoFma},
                {"ffmpeg", build::kFfmpeg},
                {"openmp", build::kOpenMp}};
  j["machine"] = {{"hostname", machine_.hostname},
                  {"os", machine_.os},
                  {"cpu_model", machine_.cpuModel},
                  {"cpu_cores", machine_.cpuCores},
                  {"memory_bytes", machine_.memoryBytes}};
  j["cuda"] = {{"runtime_version", gpu::versionString(gpu::runtimeVersion())},
               {"driver_version", gpu::versionString(gpu::driverVersion())},
               {"no_device_reason", noDeviceReason_}};
  j["devices"] = Json::array();
  for (const auto& d : devices_) j["devices"].push_back(deviceJson(d));

  Json options = Json::object();
  for (const auto& [path, value] : options_) {
    Json* node = &options;
    for (const std::string& key : splitPath(path)) node = &(*node)[key];
    std::visit([&](const auto& v) { *node = v; }, value);
  }
  j["options"] = std::move(options);

  j["stages"] = Json::object();
  for (const StageStat& s : stages_) {
    Json st = {
        {"wall_ms", s.wallMs}, {"gpu_ms", s.gpu ? Json(s.gpuMs) : Json()}, {"calls", s.calls}};
    if (!s.kernels.empty() || s.deviceBytes > 0) {
      st["device_bytes"] = s.deviceBytes;
      st["kernels"] = kernelRows(s.kernels, kMaxKernelRows);
    }
    j["stages"][s.name] = std::move(st);
  }
  std::vector<gpu::KernelStat> all;
  for (const auto& [name, k] : kernels_) all.push_back(k);
  j["kernels"] = kernelRows(std::move(all), kMaxRunKernelRows);
  j["counts"] = Json::object();
  for (const auto& [name, c] : counts_) j["counts"][name] = c;
  j["metrics"] = Json::object();
  for (const auto& [name, v] : metrics_) j["metrics"][name] = std::isfinite(v) ? Json(v) : Json();
  j["lists"] = Json::object();
  for (const auto& [name, rows] : lists_) {
    Json a = Json::array();
    for (const ListItem& row : rows) {
      Json o = Json::object();
      for (const auto& [field, value] : row)
        std::visit([&](const auto& v) { o[field] = v; }, value);
      a.push_back(std::move(o));
    }
    j["lists"][name] = std::move(a);
  }
  j["peak_memory"] = {{"host_rss_bytes", hostPeakRssBytes()},
                      {"device_bytes", deviceReported_ ? Json(devicePeakBytes_) : Json()}};
  return j.dump(2) + "\n";
}

#else

std::string RunRecord::toJson() const {
  throw Error("cannot write the run record as JSON: vidmap was built without nlohmann-json");
}

#endif

}  // namespace vidmap::io
