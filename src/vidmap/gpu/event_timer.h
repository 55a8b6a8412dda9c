// GPU time of the work queued between start() and stop() on a stream, from a pair of CUDA
// events. Recording does not block; elapsedMs() waits for the stop event.
#pragma once

#include "vidmap/gpu/handles.h"

namespace vidmap::gpu {

class Stream;

class EventTimer {
 public:
  explicit EventTimer(int device);
  ~EventTimer();
  EventTimer(EventTimer&& other) noexcept;
  EventTimer& operator=(EventTimer&& other) noexcept;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start(StreamHandle stream);
  void stop(StreamHandle stream);
  void start(const Stream& stream);
  void stop(const Stream& stream);
  // Milliseconds between start and stop; waits for stop to complete. Throws vidmap::Error
  // when start() and stop() were not both called.
  float elapsedMs();

 private:
  void destroy() noexcept;
  EventHandle start_ = nullptr;
  EventHandle stop_ = nullptr;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace vidmap::gpu
