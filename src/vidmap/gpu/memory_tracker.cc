#include "vidmap/gpu/memory_tracker.h"

#include <string>

#include "vidmap/core/error.h"

namespace vidmap::gpu {

void MemoryTracker::allocated(std::int64_t bytes) {
  if (bytes < 0) throw Error("MemoryTracker: negative allocation of " + std::to_string(bytes));
  std::int64_t now = live_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  allocations_.fetch_add(1, std::memory_order_relaxed);
  total_.fetch_add(1, std::memory_order_relaxed);
  std::int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void MemoryTracker::freed(std::int64_t bytes) {
  std::int64_t before = live_.fetch_sub(bytes, std::memory_order_relaxed);
  if (bytes < 0 || before < bytes) {
    live_.fetch_add(bytes, std::memory_order_relaxed);
    throw Error("MemoryTracker: freeing " + std::to_string(bytes) + " bytes but only " +
                std::to_string(before) + " are live");
  }
  allocations_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace vidmap::gpu
