// Counts a process's CUDA kernel launches by kernel name: a CUPTI injection library
// (CUDA_INJECTION64_PATH=liblaunch_counter.so), written to plan compute-sanitizer's launch
// ranges (scripts/device-sanitize.sh, LAUNCH_SPLIT), whose --launch-skip counts the launches of
// a name filter. At exit it writes "launches<TAB>mangled name" lines, most first, to
// $LAUNCH_COUNTER_OUT (default stderr), and the graph launches, whose kernels it cannot see.
// Built by hand, not by CMake (the device machine has CUPTI; the tests do not need it):
//   g++ -std=c++20 -O2 -shared -fPIC -I/usr/local/cuda/include bench/launch_counter.cc \
//     -o liblaunch_counter.so -L/usr/local/cuda/lib64 -lcupti
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

std::mutex mu;
std::map<std::string, long>* counts = nullptr;
long graphLaunches = 0;

void CUPTIAPI onDriverCall(void*, CUpti_CallbackDomain, CUpti_CallbackId id, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_ENTER) return;
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel: {
      const std::lock_guard<std::mutex> lock(mu);
      ++(*counts)[info->symbolName ? info->symbolName : "(unnamed)"];
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch: {
      const std::lock_guard<std::mutex> lock(mu);
      ++graphLaunches;
      break;
    }
    default:
      break;
  }
}

void dump() {
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
  std::fprintf(f, "%ld\t(all kernel launches)\n%ld\t(graph launches)\n", total, graphLaunches);
  for (const auto& [n, name] : rows) std::fprintf(f, "%ld\t%s\n", n, name.c_str());
  if (f != stderr) std::fclose(f);
}

}  // namespace

// CUDA calls this once when the driver loads the library named by CUDA_INJECTION64_PATH.
extern "C" int InitializeInjection() {
  counts = new std::map<std::string, long>();
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, onDriverCall, nullptr) != CUPTI_SUCCESS) return 0;
  if (cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS) return 0;
  std::atexit(dump);
  return 1;
}
