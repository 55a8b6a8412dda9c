// Live and peak device bytes of one gpu::Context. Every DeviceBuffer reports its allocation
// here; the run record reads the peak. Thread-safe: buffers may be freed on any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace vidmap::gpu {

class MemoryTracker {
 public:
  MemoryTracker() = default;
  MemoryTracker(const MemoryTracker&) = delete;
  MemoryTracker& operator=(const MemoryTracker&) = delete;

  void allocated(std::int64_t bytes);
  // Throws vidmap::Error when more is freed than is live (a bookkeeping bug).
  void freed(std::int64_t bytes);

  std::int64_t liveBytes() const { return live_.load(std::memory_order_relaxed); }
  std::int64_t peakBytes() const { return peak_.load(std::memory_order_relaxed); }
  std::int64_t liveAllocations() const { return allocations_.load(std::memory_order_relaxed); }
  // Total number of allocations ever made (a measure of allocator churn).
  std::int64_t totalAllocations() const { return total_.load(std::memory_order_relaxed); }

  // Starts a new peak from the bytes live now (e.g. between pipeline stages).
  void resetPeak() { peak_.store(liveBytes(), std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> live_{0};
  std::atomic<std::int64_t> peak_{0};
  std::atomic<std::int64_t> allocations_{0};
  std::atomic<std::int64_t> total_{0};
};

}  // namespace vidmap::gpu
