// A FrameSource that decodes ahead on a thread of its own: the frames of the source it wraps, in
// the same order and with the same pixels, up to `depth` frames before the consumer asks for
// them. Decoding (PNG, JPEG, FFmpeg, resizing) depends on nothing the pipeline computes, so on
// a machine with a core to spare it leaves the front end's thread: on the H200 the 150 JPEG
// frames of TUM fr1-rpy took 418 ms of the front end's 1.1 s, and on a 2-core CPU decoding its
// PNGs was a seventh of the run's wall (docs/benchmarks.md, "The H200's fr1-rpy: decoding
// ahead ..." and "CPU path: the serial wall of fr1-rpy at all frames ...").
//
// Errors: an exception of the wrapped source's next() is carried to the consumer and thrown by
// the next() call that reaches it, after the frames decoded before it, so a bad frame fails
// where it would have without the thread. Ending: the destructor stops the thread after the
// frame it is decoding and joins it; nothing outlives the object. report() is the wrapped
// source's report as of the last frame handed out (complete once next() has returned false).
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "vidmap/io/frame_source.h"
#include "vidmap/io/run_record.h"

namespace vidmap::io {

class PrefetchSource final : public FrameSource {
 public:
  // depth >= 1: frames decoded ahead at most. `record` (optional, outliving this object) gets
  // the decoding thread's time as stage "decode.ahead", one call a frame.
  PrefetchSource(std::unique_ptr<FrameSource> source, int depth, RunRecord* record = nullptr);
  ~PrefetchSource() override;
  PrefetchSource(const PrefetchSource&) = delete;
  PrefetchSource& operator=(const PrefetchSource&) = delete;

  const FrameSourceInfo& info() const override { return info_; }
  bool next(Frame& frame) override;
  SourceReport report() const override;

 private:
  struct Slot {
    Frame frame;
    SourceReport report;  // the wrapped source's, after this frame
  };
  void run();

  std::unique_ptr<FrameSource> source_;
  const FrameSourceInfo info_;
  const int depth_;
  RunRecord* record_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Slot> ready_;    // decoded, in order
  std::deque<Frame> free_;    // buffers handed back by the consumer, reused by the decoder
  bool ended_ = false;        // the wrapped source returned false or threw
  std::exception_ptr error_;  // what it threw, after ready_
  bool stop_ = false;         // the destructor asks the thread to end
  SourceReport report_;       // as of the last frame handed out
  SourceReport endReport_;    // the wrapped source's at its end
  std::thread thread_;        // last: started once the rest is built
};

}  // namespace vidmap::io
