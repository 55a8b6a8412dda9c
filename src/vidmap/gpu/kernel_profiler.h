// GPU time per kernel name. A scope records a CUDA event before and after a launch on its
// stream; the pair is resolved only when stats() is read (or, to bound memory, when enough
// pairs have completed), so timing does not serialize the host with the device.
//
//   {
//     auto t = ctx.profiler().time("klt_track", ctx.stream());
//     trackKernel<<<grid, block, 0, ctx.stream().handle()>>>(...);
//   }
//   for (const auto& k : ctx.profiler().stats()) ...  // waits for the launches in flight
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "vidmap/gpu/handles.h"

namespace vidmap::gpu {

class Stream;

struct KernelStat {
  std::string name;
  std::int64_t launches = 0;
  double gpuMs = 0;  // total over the launches
};

class KernelProfiler {
 public:
  // Ends the timing of one launch when it is destroyed (or at stop()).
  class Scope {
   public:
    Scope(Scope&& other) noexcept;
    Scope& operator=(Scope&&) = delete;
    Scope(const Scope&) = delete;
    ~Scope();
    // Records the stop event now; throws vidmap::Error when CUDA fails. The destructor does
    // the same but keeps a failure for stats() to report, since it must not throw.
    void stop();

   private:
    friend class KernelProfiler;
    Scope(KernelProfiler* p, std::size_t kernel, EventHandle start, StreamHandle stream)
        : profiler_(p), kernel_(kernel), start_(start), stream_(stream) {}
    KernelProfiler* profiler_ = nullptr;
    std::size_t kernel_ = 0;
    EventHandle start_ = nullptr;
    StreamHandle stream_ = nullptr;
  };

  explicit KernelProfiler(int device);
  ~KernelProfiler();
  KernelProfiler(const KernelProfiler&) = delete;
  KernelProfiler& operator=(const KernelProfiler&) = delete;

  // Times the work queued on `stream` until the returned scope ends, under `name`.
  [[nodiscard]] Scope time(std::string_view name, StreamHandle stream);
  [[nodiscard]] Scope time(std::string_view name, const Stream& stream);

  // Launches and total GPU ms per kernel name, sorted by name. Waits for the timed launches
  // still in flight. Throws vidmap::Error if a timed launch could not be recorded.
  std::vector<KernelStat> stats();

  // Forgets all totals (pending launches are dropped).
  void reset();

  int device() const { return device_; }
  // A disabled profiler hands out scopes that record nothing (no events): the run's cost of
  // profiling is measured by turning it off (docs/benchmarks.md). Enabled by default.
  void setEnabled(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // Timed launches whose events are not resolved yet.
  std::size_t pending() const;

 private:
  struct Pending {
    std::size_t kernel;
    EventHandle start;
    EventHandle stop;
  };
  EventHandle acquire();                 // from the pool, or a new event
  void recycle(EventHandle e) noexcept;  // back to the pool
  void finish(std::size_t kernel, EventHandle start, EventHandle stop);
  void resolveLocked(const Pending& p);
  void drainCompletedLocked();
  void noteError(const std::string& message) noexcept;

  int device_;
  mutable std::mutex mutex_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::vector<KernelStat> totals_;
  std::vector<Pending> pending_;
  std::vector<EventHandle> pool_;
  std::size_t drainAt_ = 1024;
  std::string error_;
  std::atomic<bool> enabled_{true};
};

}  // namespace vidmap::gpu
