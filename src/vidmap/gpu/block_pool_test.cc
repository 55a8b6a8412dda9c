#include "vidmap/gpu/block_pool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>

namespace vidmap::gpu {
namespace {

// Host memory stands in for the device: every block made and freed is recorded.
std::map<void*, std::size_t>& liveFakes() {
  static std::map<void*, std::size_t> m;
  return m;
}
void* fakeAllocate(detail::ContextState*, std::size_t n) {
  void* p = std::malloc(n);
  liveFakes()[p] = n;
  return p;
}
void fakeRelease(detail::ContextState*, void* p, std::size_t n) noexcept {
  auto it = liveFakes().find(p);
  if (it == liveFakes().end() || it->second != n) std::abort();  // a block freed twice or resized
  liveFakes().erase(it);
  std::free(p);
}
BlockPool::Allocator fakes() { return {&fakeAllocate, &fakeRelease}; }

std::shared_ptr<void> key() { return std::make_shared<int>(0); }

TEST(BlockPool, NewBlocksAreRoundedToAQuarterOfAPowerOfTwo) {
  EXPECT_EQ(BlockPool::roundedSize(1), 512u);
  EXPECT_EQ(BlockPool::roundedSize(512), 512u);
  EXPECT_EQ(BlockPool::roundedSize(513), 640u);
  EXPECT_EQ(BlockPool::roundedSize(1000), 1024u);
  EXPECT_EQ(BlockPool::roundedSize(1025), 1280u);
  EXPECT_EQ(BlockPool::roundedSize(3000), 3072u);
  EXPECT_EQ(BlockPool::roundedSize(3073), 3584u);
  for (std::size_t n = 1; n < 100000; n = n * 3 + 1) {
    EXPECT_GE(BlockPool::roundedSize(n), n);
    EXPECT_LE(BlockPool::roundedSize(n), std::max<std::size_t>(512, n + n / 4));
  }
}

TEST(BlockPool, AGivenBlockIsTakenAgainInsteadOfANewOne) {
  const auto k = key();
  {
    BlockPool pool(1 << 20, fakes());
    const BlockPool::Block a = pool.take(k, nullptr, 1000);
    ASSERT_NE(a.ptr, nullptr);
    EXPECT_EQ(a.bytes, 1024u);
    pool.give(k, nullptr, a);
    EXPECT_EQ(pool.keptBytes(), 1024u);
    const BlockPool::Block b = pool.take(k, nullptr, 900);
    EXPECT_EQ(b.ptr, a.ptr);
    EXPECT_EQ(pool.blocksMade(), 1u);
    EXPECT_EQ(pool.keptBytes(), 0u);
    pool.give(k, nullptr, b);
    EXPECT_EQ(pool.take(k, nullptr, 0).ptr, nullptr);  // nothing for nothing
    EXPECT_EQ(liveFakes().size(), 1u);
  }
  EXPECT_TRUE(liveFakes().empty()) << "the pool's destructor frees what it keeps";
}

TEST(BlockPool, TheSmallestFittingBlockIsTakenAndAMuchLargerOneIsNot) {
  const auto k = key();
  BlockPool pool(1 << 30, fakes());
  const auto big = pool.take(k, nullptr, 1 << 20);
  const auto mid = pool.take(k, nullptr, 4096);
  const auto small = pool.take(k, nullptr, 2048);
  pool.give(k, nullptr, big);
  pool.give(k, nullptr, mid);
  pool.give(k, nullptr, small);
  EXPECT_EQ(pool.take(k, nullptr, 1500).ptr, small.ptr);
  EXPECT_EQ(pool.take(k, nullptr, 1500).ptr, mid.ptr);
  // 1 MiB is more than twice 1500 bytes plus 64 KiB: a new block, the large one stays kept.
  const auto fresh = pool.take(k, nullptr, 1500);
  EXPECT_NE(fresh.ptr, big.ptr);
  EXPECT_EQ(pool.keptBlocks(), 1u);
  EXPECT_EQ(pool.take(k, nullptr, 600 << 10).ptr, big.ptr);
  EXPECT_EQ(pool.blocksMade(), 4u);
  for (const auto& b : {big, mid, small, fresh}) pool.give(k, nullptr, b);
}

TEST(BlockPool, BlocksAreReusedWithinTheirKeyOnly) {
  const auto k1 = key(), k2 = key();
  BlockPool pool(1 << 20, fakes());
  const auto a = pool.take(k1, nullptr, 4096);
  pool.give(k1, nullptr, a);
  const auto b = pool.take(k2, nullptr, 4096);
  EXPECT_NE(b.ptr, a.ptr);
  EXPECT_EQ(pool.take(k1, nullptr, 4096).ptr, a.ptr);
  pool.give(k1, nullptr, a);
  pool.give(k2, nullptr, b);
}

TEST(BlockPool, BeyondItsBoundTheLargestKeptBlocksAreFreed) {
  const auto k = key();
  BlockPool pool(6000, fakes());
  const auto a = pool.take(k, nullptr, 4096), b = pool.take(k, nullptr, 2048),
             c = pool.take(k, nullptr, 1024);
  pool.give(k, nullptr, a);
  pool.give(k, nullptr, b);
  EXPECT_EQ(pool.keptBytes(), 2048u) << "4096 + 2048 > 6000: the 4096 block is freed";
  pool.give(k, nullptr, c);
  EXPECT_EQ(pool.keptBytes(), 3072u);
  EXPECT_EQ(liveFakes().size(), 2u);
  const auto d = pool.take(k, nullptr, 4096);
  EXPECT_NE(d.ptr, nullptr);
  EXPECT_EQ(pool.blocksMade(), 4u);
  pool.give(k, nullptr, d);
}

}  // namespace
}  // namespace vidmap::gpu
