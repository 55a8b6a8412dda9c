#include "vidmap/io/prefetch_source.h"

#include <chrono>
#include <string>
#include <utility>

#include "vidmap/core/error.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace vidmap::io {

PrefetchSource::PrefetchSource(std::unique_ptr<FrameSource> source, int depth, RunRecord* record)
    : source_(std::move(source)),
      info_(source_ ? source_->info() : FrameSourceInfo{}),
      depth_(depth),
      record_(record) {
  if (!source_) throw Error("prefetch: no frame source");
  if (depth_ < 1) throw Error("prefetch: depth must be at least 1, got " + std::to_string(depth_));
  thread_ = std::thread([this] { run(); });
}

PrefetchSource::~PrefetchSource() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void PrefetchSource::run() {
#if defined(_OPENMP)
  // A resize's parallel regions would make a team of every core beside the pipeline's own:
  // this thread decodes one frame at a time.
  omp_set_num_threads(1);
#endif
  for (;;) {
    Frame frame;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || static_cast<int>(ready_.size()) < depth_; });
      if (stop_) return;
      if (!free_.empty()) {
        frame = std::move(free_.front());
        free_.pop_front();
      }
    }
    bool more = false;
    std::exception_ptr error;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      more = source_->next(frame);
    } catch (...) {
      error = std::current_exception();
    }
    if (record_ && (more || error))
      record_->addStage(
          "decode.ahead",
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    SourceReport report = source_->report();
    {
      std::lock_guard lock(mutex_);
      if (more) {
        ready_.push_back(Slot{std::move(frame), std::move(report)});
      } else {
        ended_ = true;
        error_ = error;
        endReport_ = std::move(report);
      }
    }
    changed_.notify_all();
    if (!more) return;
  }
}

bool PrefetchSource::next(Frame& frame) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || ended_; });
  if (ready_.empty()) {
    report_ = endReport_;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return false;
  }
  Slot slot = std::move(ready_.front());
  ready_.pop_front();
  free_.push_back(std::move(frame));  // the caller's buffers, for a later frame
  frame = std::move(slot.frame);
  report_ = std::move(slot.report);
  lock.unlock();
  changed_.notify_all();
  return true;
}

SourceReport PrefetchSource::report() const {
  std::lock_guard lock(mutex_);
  return report_;
}

}  // namespace vidmap::io
