#include "vidmap/gpu/block_pool.h"

#include <algorithm>
#include <bit>

namespace vidmap::gpu {

namespace detail {
void* poolAllocate(ContextState* s, std::size_t bytes) { return allocateTracked(*s, bytes); }
void poolRelease(ContextState* s, void* ptr, std::size_t bytes) noexcept {
  releaseTracked(*s, ptr, bytes);
}
}  // namespace detail

BlockPool::BlockPool(std::size_t maxKeptBytes) : BlockPool(maxKeptBytes, Allocator{}) {}

BlockPool::BlockPool(std::size_t maxKeptBytes, Allocator a)
    : maxKeptBytes_(maxKeptBytes), alloc_(a) {}

BlockPool::~BlockPool() {
  for (Kept& k : kept_) alloc_.release(k.state, k.block.ptr, k.block.bytes);
}

std::size_t BlockPool::roundedSize(std::size_t bytes) {
  if (bytes <= 512) return 512;
  // The power of two at or below, then the first quarter step at or above.
  const std::size_t p = std::bit_floor(bytes);
  const std::size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

BlockPool::Block BlockPool::take(const Context& ctx, std::size_t bytes) {
  return take(ctx.state(), ctx.state().get(), bytes);
}

void BlockPool::give(const Context& ctx, Block b) { give(ctx.state(), ctx.state().get(), b); }

BlockPool::Block BlockPool::take(const std::shared_ptr<void>& key, detail::ContextState* state,
                                 std::size_t bytes) {
  if (bytes == 0) return {};
  const std::size_t most = 2 * bytes + (std::size_t(64) << 10);
  size_t best = kept_.size();
  for (size_t i = 0; i < kept_.size(); ++i) {
    const Kept& k = kept_[i];
    if (k.key != key || k.block.bytes < bytes || k.block.bytes > most) continue;
    if (best == kept_.size() || k.block.bytes < kept_[best].block.bytes) best = i;
  }
  if (best < kept_.size()) {
    const Block b = kept_[best].block;
    keptBytes_ -= b.bytes;
    kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(best));
    return b;
  }
  const std::size_t size = roundedSize(bytes);
  Block b{alloc_.allocate(state, size), size};
  ++made_;
  return b;
}

void BlockPool::give(const std::shared_ptr<void>& key, detail::ContextState* state, Block b) {
  if (!b.ptr) return;
  kept_.push_back(Kept{key, state, b});
  keptBytes_ += b.bytes;
  trim();
}

void BlockPool::trim() {
  while (keptBytes_ > maxKeptBytes_ && !kept_.empty()) {
    const auto largest = std::max_element(
        kept_.begin(), kept_.end(),
        [](const Kept& a, const Kept& b) { return a.block.bytes < b.block.bytes; });
    alloc_.release(largest->state, largest->block.ptr, largest->block.bytes);
    keptBytes_ -= largest->block.bytes;
    kept_.erase(largest);
  }
}

BlockPool& BlockPool::ofThisThread() {
  thread_local BlockPool pool;
  return pool;
}

}  // namespace vidmap::gpu
