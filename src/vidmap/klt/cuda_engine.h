// The resident KLT state of K independent sequences on one GPU and the operations on it, for
// CudaBackend (K = 1, driven by klt::Tracker) and CudaBatchTracker (K sequences pushed in one
// launch per kernel). No CUDA types: the kernels and CUDA calls are in cuda_engine.cu.
//
// Transfers: the host stages frames and seeds in one pinned buffer and send() copies it to
// the device inbox in one copy; the results come back through one pinned outbox. Every device
// byte is a gpu::DeviceBuffer, so residentBytes() equals the context's live bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/gpu/context.h"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/gpu/event_timer.h"
#include "vidmap/gpu/handles.h"
#include "vidmap/gpu/stream.h"
#include "vidmap/klt/backend.h"
#include "vidmap/klt/cuda_batch_view.h"

namespace vidmap::klt::cuda {

// kWarpStaged16 / kWarpStaged20: kWarpStaged whose fused kernel (the batched push) is capped
// at 128 / 96 registers for 16 / 20 warps a multiprocessor (21 x 21 windows; other windows and
// the separate forward/backward kernels are kWarpStaged's).
enum class TrackKernel {
  kLane = 0,
  kWarp = 1,
  kWarpShared = 2,
  kWarpStaged = 3,
  kWarpStaged16 = 4,
  kWarpStaged20 = 5
};
}  // namespace vidmap::klt::cuda
namespace vidmap::klt {
enum class CudaTrackKernel;
}
namespace vidmap::klt::cuda {
// The kernel for `tracks` tracks in all with the half window of the options (kAuto resolved by
// measurement).
TrackKernel engineKernel(CudaTrackKernel k, std::int64_t tracks, int halfWindow);
enum class FrameFormat { kNone = 0, kGrayFloat = 1, kRgb8 = 2, kGray8 = 3 };

// Pinned host memory (cudaHostAlloc) owned by RAII.
class PinnedBytes {
 public:
  PinnedBytes() = default;
  explicit PinnedBytes(std::size_t bytes);
  ~PinnedBytes();
  PinnedBytes(PinnedBytes&& o) noexcept;
  PinnedBytes& operator=(PinnedBytes&& o) noexcept;
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;
  std::uint8_t* data() { return data_; }
  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// The inbox of one send(): [frames: K * pixels * 4 B][counts: K ints][seed offsets: K ints]
// [seeds, dense][ages, dense]. Offsets in bytes, each 16-byte aligned.
struct InboxLayout {
  std::size_t frames = 0, counts = 0, offsets = 0, seeds = 0, ages = 0, bytes = 0;
};

// The outbox: [selected: K ints][appended: K ints][checked records, dense in the seed order]
// [picks: K * maxPicks records].
struct OutboxLayout {
  std::size_t selected = 0, appended = 0, checked = 0, picks = 0, bytes = 0;
  int maxPicks = 0;
};

class Engine {
 public:
  // frameSlots: the pyramids a sequence holds, 2 (push) or 3 (the pipelined push: the next
  // frame's pyramid is built while the previous two are tracked).
  Engine(gpu::Context& ctx, int sequences, int width, int height, const Options& options,
         TrackKernel kernel, int frameSlots = 2);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int sequences() const { return view_.sequences; }
  int width() const { return view_.width; }
  int height() const { return view_.height; }
  const Options& options() const { return options_; }
  const Layout& layout() const { return view_.layout; }
  TrackKernel kernel() const { return kernel_; }
  gpu::Context& context() { return ctx_; }
  std::size_t residentBytes() const;

  // Staging on the host (no device work). A frame of each sequence in one format (copied
  // now); seeds of each sequence (count <= capacity) with, for the batch tracker, the age each
  // track will have after this push (read at send(): keep them alive until then).
  void stageGray(int seq, ImageView<const float> gray);
  void stageRgb(int seq, ImageView<const Rgb8> rgb);
  void stageGray8(int seq, ImageView<const std::uint8_t> gray);  // level 0 = v / 255
  void stageSeeds(int seq, const TrackRecord* seeds, int count, const int* ages = nullptr);
  int stagedCount(int seq) const { return counts_[seq]; }
  int stagedTotal() const;

  // One host-to-device copy of what was staged, then its unpacking on the device: the frames
  // (if staged) into level 0 of `slot`, the seeds (if staged) into records[0] and alive[].
  void send(int slot);

  void buildPyramid(int slot);
  void track(bool backward, int prevSlot, int curSlot, int begin, int end, bool useAlive);
  void check(int begin, int end, bool useAlive);
  // Forward, backward and check in one launch (warp kernels; the batched push uses it).
  void trackFused(int prevSlot, int curSlot, int begin, int end, bool useAlive);
  // The alive tracks after the check (alive, age <= maxAge) become seeds[0, alive) of each
  // sequence, in order (the host table does the same); resident: their ages move with them.
  void compactAlive(bool resident = false);
  void eigenMap(int slot);
  // Selection on the last eigen map with seeds[0, alive[seq]) as the alive tracks.
  void select();
  // Sets alive[0] (K = 1) when the host asks for a selection with another count.
  void setAlive(int seq, int alive);

  // The outbox: counts, checked records of the staged tracks, picks; one device-to-host copy.
  // wait = false: the copy is queued, not waited for (the pipelined push's finish() waits).
  void receive(bool checked, bool picks, gpu::EventTimer* stopTimer = nullptr, bool wait = true);
  int selected(int seq) const;
  int appended(int seq) const;
  const TrackRecord* checked(int seq) const;  // stagedCount(seq) records
  const TrackRecord* picks(int seq) const;    // appended(seq) records

  // Direct reads for tests and the Backend interface (synchronous).
  void readRecords(int which, int seq, int begin, int count, TrackRecord* out);
  void readLevel(int seq, int slot, int level, float* gray, float* grad);
  void readEigenMap(int seq, float* out);
  float eigenMax(int seq);
  int aliveCount(int seq);  // alive[seq]: the size of the resident table after the last push
  void synchronize();

  // A whole batched push as one CUDA graph (captured on first use for each shape): send,
  // pyramid, forward, backward, check, and with `selectOnDevice` compaction and selection,
  // then receive. useGraph = false runs the same launches directly (per-kernel profiling).
  void push(int prevSlot, int curSlot, bool track, bool selectOnDevice, bool useGraph);

  // The pipelined push, as a video front end uses it: the frame of push k + 1 is staged,
  // uploaded and its pyramid built on a second stream while push k tracks, and the results of
  // push k are read at the next call. Per frame, in this order:
  //   stage the frame(s); sendFrame(slot)   upload, conversion, pyramid, Scharr into `slot` on
  //                                         the frame stream (after the tracks that read it);
  //                                         frames are staged into two pinned buffers in turn
  //   [stage the seeds]; trackAsync(prev, cur, track, select, resident)   seeds, tracking
  //                                         (after the frame of `cur` is built), [selection],
  //                                         pack, read; no wait
  //   finish()                              waits for the oldest trackAsync() not finished:
  //                                         its checked(), selected() and picks() hold until
  //                                         the next finish() or push(), and its outbox until
  //                                         the second trackAsync() after it
  // Two trackAsync() may be in flight (their results go to two outboxes in turn), so a call
  // can queue push k + 1 before it waits for push k. resident = true keeps the track table on
  // the device: the seeds of a push without staged seeds are the survivors of the last
  // resident push in order, then the picks of the sequences in `keepPicks` (all when null),
  // with their ages; the host needs no round trip between pushes (a staged table starts it).
  // With 3 frame slots the frame stream never waits for the tracking of the previous push;
  // with 2 it waits for it (the slot it writes is the one that push reads). Results are bit
  // for bit those of push(): the same kernels on the same data.
  void sendFrame(int slot);
  void trackAsync(int prevSlot, int curSlot, bool track, bool selectOnDevice, bool resident = false,
                  const std::vector<bool>* keepPicks = nullptr);
  void finish();
  int inFlight() const { return inFlight_; }
  int frameSlots() const { return view_.slots; }

  // Per-kernel GPU times of direct launches (KernelProfiler names "klt_*").
  void setProfiling(bool on) { profiling_ = on; }
  // GPU times of each push() by events: the whole push (upload, kernels, read) and the
  // kernels alone, in ms (0 while timing is off). For the pipelined push, lastPushMs() is the
  // GPU time from the end of the previous push's read to the end of this one's (the GPU time
  // per push in a steady stream of frames, idle gaps included; 0 for the first) and
  // lastKernelsMs() is 0.
  void setTiming(bool on);
  double lastPushMs() const { return lastPushMs_; }
  double lastKernelsMs() const { return lastKernelsMs_; }

 private:
  struct Graph;
  void launchTrack(bool backward, int prevSlot, int curSlot, int begin, int end, bool useAlive);
  void queuePush(int prevSlot, int curSlot, bool track, bool selectOnDevice);
  void queueTrack(int prevSlot, int curSlot, bool track, bool selectOnDevice, bool resident,
                  bool keepStaged);
  void queueTrackAndSelect(int prevSlot, int curSlot, bool track, bool selectOnDevice,
                           bool resident = false);
  std::uint8_t* frameStage();  // the pinned buffer frames are staged into now
  void unpack(int slot);
  void unpackFrame(int slot);
  void unpackSeeds(bool resident = false);
  void copyInbox();
  void copyFrames(gpu::StreamHandle s);
  gpu::StreamHandle queueStream_ = nullptr;  // where buildPyramid/unpack launch (null: main)
  void copySeeds();
  void writeSeeds();  // the staged seeds into the pinned inbox (host)
  void launchGraph(int key, gpu::StreamHandle s, const std::function<void()>& queue);
  void checkSlot(int slot) const;
  void waitForSeedUpload();
  void ensurePipeline();
  gpu::StreamHandle queueStream() const;
  // The host must not write the pinned staging buffer while a copy from it is in flight.
  void waitForUpload();
  template <class F>
  void timed(const char* name, F&& launch);

  gpu::Context& ctx_;
  Options options_;
  TrackKernel kernel_;
  TrackParams params_;
  int multiProcessors_ = 0;
  BatchView view_;
  InboxLayout in_;
  OutboxLayout out_;

  gpu::DeviceBuffer<float> gray_, grad_, eig_, trackXY_;
  gpu::DeviceBuffer<TrackRecord> records_[4];
  gpu::DeviceBuffer<unsigned> eigMax_;
  gpu::DeviceBuffer<int> alive_, ages_, tableAge_, keep_, cellCount_, trackStart_, trackCell_,
      take_, takePos_, selCounts_, aliveFlag_, alivePos_;
  gpu::DeviceBuffer<Pick> picks_;
  gpu::DeviceBuffer<std::uint64_t> keys_, sorted_;
  gpu::DeviceBuffer<std::uint8_t> inbox_, outbox_[2], cubTemp_;
  std::size_t cubBytes_ = 0;

  PinnedBytes stage_, result_[2];
  PinnedBytes frameStage2_, keepStage_;    // the second frame buffer; keepPicks, two areas
  gpu::EventHandle uploadDone_ = nullptr;  // recorded after the copies out of stage_
  bool uploadPending_ = false;
  // The pipelined push: the frame stream, an event a slot recorded after the last tracking
  // that reads it, one after each slot's frame is built, and the read of the last trackAsync.
  std::unique_ptr<gpu::Stream> frameStream_;
  std::vector<gpu::EventHandle> slotFree_, slotReady_;
  gpu::EventHandle frameUploaded_[2] = {nullptr, nullptr}, resultReady_[2] = {nullptr, nullptr};
  gpu::EventHandle resultTimed_[3] = {nullptr, nullptr, nullptr};  // timing events of the reads
  int resultTimedCount_ = 0;
  bool frameUploadPending_[2] = {false, false};
  int frameBuf_ = 0;  // the frame buffer of the next staging: 0 in stage_, 1 frameStage2_
  // The results: receive() writes outbox outBuf_; the getters read result_[readBuf_] with
  // the offsets and picks flag of the push that wrote it. trackAsync() k writes buffer k % 2.
  int outBuf_ = 0, readBuf_ = 0;
  std::vector<int> resultOffsets_[2];
  bool resultPicks_[2] = {false, false};
  int timedIndex_[2] = {-1, -1};
  int inFlight_ = 0, asyncIssued_ = 0;
  std::vector<int> counts_, offsets_;
  struct Staged {
    const TrackRecord* seeds = nullptr;  // the caller's memory, read at send()
    const int* ages = nullptr;
  };
  std::vector<Staged> staged_;
  FrameFormat stagedFormat_ = FrameFormat::kNone;
  bool seedsStaged_ = false, agesStaged_ = false;
  std::size_t sendBytes_ = 0;
  bool profiling_ = false;
  bool capturing_ = false;
  std::map<int, std::unique_ptr<Graph>> graphs_;
  std::unique_ptr<gpu::EventTimer> pushTimer_, kernelTimer_;
  double lastPushMs_ = 0, lastKernelsMs_ = 0;
};

}  // namespace vidmap::klt::cuda
