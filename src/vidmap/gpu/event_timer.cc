#include "vidmap/gpu/event_timer.h"

#include <utility>

#include "vidmap/core/error.h"
#include "vidmap/gpu/runtime.h"
#include "vidmap/gpu/stream.h"

namespace vidmap::gpu {

EventTimer::EventTimer(int device) {
  start_ = rt::createEvent(device);
  try {
    stop_ = rt::createEvent(device);
  } catch (...) {
    rt::destroyEvent(start_);
    throw;
  }
}

EventTimer::~EventTimer() { destroy(); }

void EventTimer::destroy() noexcept {
  rt::destroyEvent(start_);
  rt::destroyEvent(stop_);
  start_ = stop_ = nullptr;
}

EventTimer::EventTimer(EventTimer&& o) noexcept
    : start_(std::exchange(o.start_, nullptr)),
      stop_(std::exchange(o.stop_, nullptr)),
      started_(o.started_),
      stopped_(o.stopped_) {}

EventTimer& EventTimer::operator=(EventTimer&& o) noexcept {
  if (this != &o) {
    destroy();
    start_ = std::exchange(o.start_, nullptr);
    stop_ = std::exchange(o.stop_, nullptr);
    started_ = o.started_;
    stopped_ = o.stopped_;
  }
  return *this;
}

void EventTimer::start(StreamHandle stream) {
  rt::record(start_, stream);
  started_ = true;
  stopped_ = false;
}

void EventTimer::stop(StreamHandle stream) {
  if (!started_) throw Error("EventTimer::stop() called before start()");
  rt::record(stop_, stream);
  stopped_ = true;
}

void EventTimer::start(const Stream& s) { start(s.handle()); }
void EventTimer::stop(const Stream& s) { stop(s.handle()); }

float EventTimer::elapsedMs() {
  if (!started_ || !stopped_) throw Error("EventTimer::elapsedMs() needs start() and stop() first");
  rt::synchronize(stop_);
  return rt::elapsedMs(start_, stop_);
}

}  // namespace vidmap::gpu
