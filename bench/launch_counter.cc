// Counts a process's CUDA kernel launches by kernel name: a CUPTI injection library
// (CUDA_INJECTION64_PATH=liblaunch_counter.so), written to plan compute-sanitizer's launch
// ranges (scripts/device-sanitize.sh, LAUNCH_SPLIT), whose --launch-skip counts the launches of
// a name filter. At exit it writes "launches<TAB>mangled name" lines, most first, to
// $LAUNCH_COUNTER_OUT (default stderr).
// Built by hand, not by CMake (the device machine has CUPTI; the tests do not need it):
//   g++ -std=c++20 -O2 -shared -fPIC -I/usr/local/cuda/include bench/launch_counter.cc
//     -o liblaunch_counter.so -L/usr/local/cuda/lib64 -lcupti
#include <cupti.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

// Kernels are counted from CUPTI's activity records, one per kernel run: those launched
// from a CUDA graph too, which the sanitizer's --launch-skip also counts and a launch callback
// would not see.
std::mutex mu;
std::map<std::string, long>* counts = nullptr;
constexpr size_t kBufferBytes = 8 << 20;

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *maxRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  const std::lock_guard<std::mutex> lock(mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const char* name = reinterpret_cast<const CUpti_ActivityKernel10*>(record)->name;
    ++(*counts)[name ? name : "(unnamed)"];
  }
  std::free(buffer);
}

void dump() {
  cuptiActivityFlushAll(1);
  const std::lock_guard<std::mutex> lock(mu);
  std::vector<std::pair<long, std::string>> rows;
  long total = 0;
  for (const auto& [name, n] : *counts) {
    rows.emplace_back(n, name);
    total += n;
  }
  std::sort(rows.rbegin(), rows.rend());
  const char* path = std::getenv("LAUNCH_COUNTER_OUT");
  FILE* f = path ? std::fopen(path, "w") : stderr;
  if (!f) f = stderr;
  std::fprintf(f, "%ld\t(all kernels run)\n", total);
  for (const auto& [n, name] : rows) std::fprintf(f, "%ld\t%s\n", n, name.c_str());
  if (f != stderr) std::fclose(f);
}

}  // namespace

// CUDA calls this once when the driver loads the library named by CUDA_INJECTION64_PATH.
extern "C" int InitializeInjection() {
  counts = new std::map<std::string, long>();
  if (cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted) != CUPTI_SUCCESS) return 0;
  if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) return 0;
  std::atexit(dump);
  return 1;
}
