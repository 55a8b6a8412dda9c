#include "vidmap/gpu/memory_tracker.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "vidmap/core/error.h"

namespace vidmap::gpu {
namespace {

TEST(MemoryTracker, CountsLiveAndPeakBytes) {
  MemoryTracker m;
  m.allocated(100);
  m.allocated(50);
  EXPECT_EQ(m.liveBytes(), 150);
  EXPECT_EQ(m.liveAllocations(), 2);
  m.freed(100);
  EXPECT_EQ(m.liveBytes(), 50);
  EXPECT_EQ(m.peakBytes(), 150);
  m.allocated(20);
  EXPECT_EQ(m.peakBytes(), 150);
  m.resetPeak();
  EXPECT_EQ(m.peakBytes(), 70);
  m.freed(50);
  m.freed(20);
  EXPECT_EQ(m.liveBytes(), 0);
  EXPECT_EQ(m.liveAllocations(), 0);
  EXPECT_EQ(m.totalAllocations(), 3);
}

TEST(MemoryTracker, FreeingMoreThanIsLiveIsAnErrorAndChangesNothing) {
  MemoryTracker m;
  m.allocated(10);
  EXPECT_THROW(m.freed(11), Error);
  EXPECT_EQ(m.liveBytes(), 10);
  EXPECT_THROW(m.allocated(-1), Error);
}

TEST(MemoryTracker, ConcurrentBuffersBalance) {
  MemoryTracker m;
  constexpr int kThreads = 4, kIters = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&m, t] {
      for (int i = 0; i < kIters; ++i) {
        m.allocated(t + 1);
        m.freed(t + 1);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(m.liveBytes(), 0);
  EXPECT_EQ(m.liveAllocations(), 0);
  EXPECT_EQ(m.totalAllocations(), kThreads * kIters);
  // At most every thread's one allocation at a time, and at least the largest one.
  EXPECT_LE(m.peakBytes(), 1 + 2 + 3 + 4);
  EXPECT_GE(m.peakBytes(), 1);
}

}  // namespace
}  // namespace vidmap::gpu
