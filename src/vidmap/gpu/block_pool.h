// BlockPool: device blocks kept by one host thread for reuse, per context.
//
// Why: the mapper runs hundreds of small bundle adjustments, each with about fifty device
// arrays. A cudaMalloc and a cudaFree for each cost more than the solve's iterations, and
// cudaFree waits for the whole device: the mapper's thread then waits for the front end's
// kernels on other streams too (docs/benchmarks.md, "The local BA's device arrays kept").
// A block given back is kept, still counted live in its context's MemoryTracker, and taken
// again by a later request of the same context and a similar size.
//
// Safety: a block is reused only on the context it was made on, and the users (the CUDA
// bundle adjuster) queue all their work on that context's one stream, so a reuse is ordered
// after the block's last use. A pool is used by one thread (ofThisThread); not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "vidmap/gpu/context.h"

namespace vidmap::gpu {

namespace detail {
// allocateTracked and releaseTracked on a state given by pointer (BlockPool's default).
void* poolAllocate(ContextState* s, std::size_t bytes);
void poolRelease(ContextState* s, void* ptr, std::size_t bytes) noexcept;
}  // namespace detail

class BlockPool {
 public:
  struct Block {
    void* ptr = nullptr;
    std::size_t bytes = 0;  // the block's capacity (at least the bytes asked)
  };
  // How blocks are made and freed: by default cudaMalloc / cudaFree with the context's
  // accounting; a test's fakes may be given a null state (see the keyed take below).
  struct Allocator {
    void* (*allocate)(detail::ContextState*, std::size_t) = &detail::poolAllocate;
    void (*release)(detail::ContextState*, void*, std::size_t) noexcept = &detail::poolRelease;
  };

  // Keeps at most maxKeptBytes in blocks given back; beyond it the largest are freed.
  explicit BlockPool(std::size_t maxKeptBytes = std::size_t(256) << 20);
  BlockPool(std::size_t maxKeptBytes, Allocator a);
  ~BlockPool();  // frees the kept blocks
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A block of at least `bytes` on `ctx` (none for 0 bytes): the smallest kept block of `ctx`
  // no larger than twice the request (plus 64 KiB, so that small arrays share small blocks),
  // else a new one, its size rounded up to a quarter of a power of two.
  Block take(const Context& ctx, std::size_t bytes);
  // Keeps `b` (made by take with `ctx`) for a later take.
  void give(const Context& ctx, Block b);
  // The same with any key: blocks are reused within one key only, and `state` goes to the
  // allocator (the tests' fakes take null).
  Block take(const std::shared_ptr<void>& key, detail::ContextState* state, std::size_t bytes);
  void give(const std::shared_ptr<void>& key, detail::ContextState* state, Block b);

  std::size_t keptBytes() const { return keptBytes_; }
  std::size_t keptBlocks() const { return kept_.size(); }
  // The blocks made (not taken from those kept) since construction.
  std::size_t blocksMade() const { return made_; }

  // The size a new block of `bytes` gets: the next of 1, 1.25, 1.5, 1.75 times a power of two,
  // at least 512 bytes.
  static std::size_t roundedSize(std::size_t bytes);

  // The pool of the calling thread (destroyed with the thread).
  static BlockPool& ofThisThread();

 private:
  struct Kept {
    std::shared_ptr<void> key;  // the context's state: alive while a block of it is kept
    detail::ContextState* state;
    Block block;
  };
  void trim();

  std::vector<Kept> kept_;
  std::size_t keptBytes_ = 0, maxKeptBytes_, made_ = 0;
  Allocator alloc_;
};

}  // namespace vidmap::gpu
