#include "vidmap/gpu/kernel_profiler.h"

#include <algorithm>
#include <utility>

#include "vidmap/core/error.h"
#include "vidmap/gpu/runtime.h"
#include "vidmap/gpu/stream.h"

namespace vidmap::gpu {

KernelProfiler::KernelProfiler(int device) : device_(device) {}

KernelProfiler::~KernelProfiler() {
  // Destroying an event whose work is still in flight is allowed: CUDA frees it on completion.
  for (const Pending& p : pending_) {
    rt::destroyEvent(p.start);
    rt::destroyEvent(p.stop);
  }
  for (EventHandle e : pool_) rt::destroyEvent(e);
}

EventHandle KernelProfiler::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!pool_.empty()) {
      EventHandle e = pool_.back();
      pool_.pop_back();
      return e;
    }
  }
  return rt::createEvent(device_);
}

void KernelProfiler::recycle(EventHandle e) noexcept {
  if (!e) return;
  std::lock_guard lock(mutex_);
  try {
    pool_.push_back(e);
  } catch (...) {
    rt::destroyEvent(e);
  }
}

KernelProfiler::Scope KernelProfiler::time(std::string_view name, StreamHandle stream) {
  if (!enabled()) return Scope(nullptr, 0, nullptr, stream);
  std::size_t kernel;
  {
    std::lock_guard lock(mutex_);
    auto it = index_.find(name);
    if (it == index_.end()) {
      it = index_.emplace(std::string(name), totals_.size()).first;
      totals_.push_back(KernelStat{std::string(name), 0, 0.0});
    }
    kernel = it->second;
  }
  EventHandle start = acquire();
  try {
    rt::record(start, stream);
  } catch (...) {
    recycle(start);
    throw;
  }
  return Scope(this, kernel, start, stream);
}

KernelProfiler::Scope KernelProfiler::time(std::string_view name, const Stream& stream) {
  return time(name, stream.handle());
}

void KernelProfiler::finish(std::size_t kernel, EventHandle start, EventHandle stop) {
  std::lock_guard lock(mutex_);
  pending_.push_back(Pending{kernel, start, stop});
  totals_[kernel].launches += 1;
  if (pending_.size() >= drainAt_) {
    drainCompletedLocked();
    drainAt_ = std::max<std::size_t>(1024, 2 * pending_.size());
  }
}

void KernelProfiler::resolveLocked(const Pending& p) {
  rt::synchronize(p.stop);
  totals_[p.kernel].gpuMs += rt::elapsedMs(p.start, p.stop);
  pool_.push_back(p.start);
  pool_.push_back(p.stop);
}

void KernelProfiler::drainCompletedLocked() {
  std::vector<Pending> keep;
  for (const Pending& p : pending_) {
    if (rt::ready(p.stop))
      resolveLocked(p);
    else
      keep.push_back(p);
  }
  pending_.swap(keep);
}

void KernelProfiler::noteError(const std::string& message) noexcept {
  std::lock_guard lock(mutex_);
  if (error_.empty()) {
    try {
      error_ = message;
    } catch (...) {
    }
  }
}

std::vector<KernelStat> KernelProfiler::stats() {
  std::lock_guard lock(mutex_);
  if (!error_.empty()) {
    std::string e = std::exchange(error_, std::string());
    throw Error("kernel profiler: a timed launch failed: " + e);
  }
  // Resolve in order; on a CUDA error the unresolved pairs stay pending.
  std::size_t done = 0;
  try {
    for (; done < pending_.size(); ++done) resolveLocked(pending_[done]);
  } catch (...) {
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
    throw;
  }
  pending_.clear();
  std::vector<KernelStat> out = totals_;
  std::sort(out.begin(), out.end(),
            [](const KernelStat& a, const KernelStat& b) { return a.name < b.name; });
  return out;
}

void KernelProfiler::reset() {
  std::lock_guard lock(mutex_);
  for (const Pending& p : pending_) {
    pool_.push_back(p.start);
    pool_.push_back(p.stop);
  }
  pending_.clear();
  index_.clear();
  totals_.clear();
  error_.clear();
}

std::size_t KernelProfiler::pending() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

KernelProfiler::Scope::Scope(Scope&& o) noexcept
    : profiler_(std::exchange(o.profiler_, nullptr)),
      kernel_(o.kernel_),
      start_(std::exchange(o.start_, nullptr)),
      stream_(o.stream_) {}

void KernelProfiler::Scope::stop() {
  KernelProfiler* p = std::exchange(profiler_, nullptr);
  if (!p) return;
  EventHandle start = std::exchange(start_, nullptr);
  EventHandle stop = nullptr;
  try {
    stop = p->acquire();
    rt::record(stop, stream_);
  } catch (...) {
    p->recycle(start);
    p->recycle(stop);
    throw;
  }
  p->finish(kernel_, start, stop);
}

KernelProfiler::Scope::~Scope() {
  KernelProfiler* p = profiler_;
  try {
    stop();
  } catch (const std::exception& e) {
    if (p) p->noteError(e.what());
  } catch (...) {
    if (p) p->noteError("unknown error");
  }
}

}  // namespace vidmap::gpu
