#include "vidmap/io/prefetch_source.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "vidmap/core/error.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace vidmap::io {

namespace {

class PrefetchSource final : public FrameSource {
 public:
  explicit PrefetchSource(std::unique_ptr<FrameSource> inner) : inner_(std::move(inner)) {
    require(inner_ != nullptr, "prefetchFrames: no source");
    info_ = inner_->info();
    wanted_ = true;
    thread_ = std::thread([this] { loop(); });
  }

  ~PrefetchSource() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  const FrameSourceInfo& info() const override { return info_; }

  bool next(Frame& frame) override {
    std::unique_lock lock(mutex_);
    if (ended_) return false;
    changed_.wait(lock, [&] { return !wanted_; });
    if (error_) {
      // As the inner source would: this call throws, the next one reads on.
      const std::exception_ptr e = std::exchange(error_, nullptr);
      wanted_ = true;
      lock.unlock();
      changed_.notify_all();
      std::rethrow_exception(e);
    }
    if (!more_) {
      ended_ = true;
      return false;
    }
    // The caller's frame, whose contents it gives up by calling next(), becomes the buffers of
    // the next decode.
    std::swap(frame, spare_);
    wanted_ = true;
    lock.unlock();
    changed_.notify_all();
    return true;
  }

  SourceReport report() const override {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !wanted_ || stop_; });
    return inner_->report();
  }

 private:
  void loop() {
#if defined(_OPENMP)
    omp_set_num_threads(1);  // the caller's threads are busy with its own loops
#endif
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return wanted_ || stop_; });
      if (stop_) return;
      lock.unlock();
      bool more = false;
      std::exception_ptr error;
      try {
        more = inner_->next(spare_);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      more_ = more;
      error_ = error;
      wanted_ = false;
      changed_.notify_all();
      if (!more && !error) return;  // the end: nothing more to read
    }
  }

  std::unique_ptr<FrameSource> inner_;
  FrameSourceInfo info_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  Frame spare_;          // the frame decoded ahead (the decoding thread's while wanted_)
  bool wanted_ = false;  // a decode is asked for or in flight
  bool more_ = false, ended_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<FrameSource> prefetchFrames(std::unique_ptr<FrameSource> source) {
  return std::make_unique<PrefetchSource>(std::move(source));
}

}  // namespace vidmap::io
