// K independent sequences (cameras or videos) tracked on one GPU, each push of all K frames
// in one launch per kernel, so that a large GPU fills (issue 4: K up to at least 16). Each
// sequence behaves exactly as a klt::Tracker on the CUDA backend (the same kernels on the
// same data give the same bits), with its own host table. A push is one upload (frames,
// seeds and ages of all sequences staged in one pinned buffer), one CUDA graph (conversion,
// pyramid, forward, backward, check, and on keyframes the compaction of the alive tracks and
// the selection on the device) and one read (checked records, counts and picks).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vidmap/gpu/context.h"
#include "vidmap/klt/cuda_backend.h"
#include "vidmap/klt/tracker.h"

namespace vidmap::klt {

namespace cuda {
class Engine;
}

class CudaBatchTracker {
 public:
  // Throws vidmap::Error on bad options, a frame too small for the window, sequences
  // outside [1, 4095], or no CUDA device.
  CudaBatchTracker(gpu::Context& ctx, int sequences, int width, int height, const Options& options,
                   const CudaBackendOptions& cuda = {});
  ~CudaBatchTracker();
  CudaBatchTracker(const CudaBatchTracker&) = delete;
  CudaBatchTracker& operator=(const CudaBatchTracker&) = delete;

  // A frame of every sequence (frames.size() == sequences()). keyframes is empty or has one
  // flag per sequence; the first push and keyframes select new points. One report for each
  // sequence (the stage times are those of the whole batch).
  std::vector<StepReport> push(std::span<const ImageView<const float>> frames,
                               std::span<const bool> keyframes = {});
  std::vector<StepReport> push(std::span<const ImageView<const Rgb8>> frames,
                               std::span<const bool> keyframes = {});
  // 8-bit gray frames (level 0 = v / 255): a quarter of the bytes of float frames to upload.
  std::vector<StepReport> push(std::span<const ImageView<const std::uint8_t>> frames,
                               std::span<const bool> keyframes = {});

  // The pipelined push of a video front end (needs CudaBackendOptions::pipelined): the frames
  // of this push are staged into a pinned buffer while the GPU tracks the previous push, then
  // uploaded and made into pyramids on a second stream, and its tracking is queued on the
  // device's own copy of the tables before the call waits for the previous push's results: in
  // a steady stream the time per call is the larger of the host's and the GPU's, not their
  // sum. Returns the reports of the previous push (none on the first call); its tables and
  // ended() are those of the previous push until the next call or flush(). The tables equal
  // push()'s bit for bit, one call later.
  std::vector<StepReport> pushPipelined(std::span<const ImageView<const float>> frames,
                                        std::span<const bool> keyframes = {});
  std::vector<StepReport> pushPipelined(std::span<const ImageView<const Rgb8>> frames,
                                        std::span<const bool> keyframes = {});
  std::vector<StepReport> pushPipelined(std::span<const ImageView<const std::uint8_t>> frames,
                                        std::span<const bool> keyframes = {});
  // The reports of the last pipelined push (none when none is pending); the tables are then
  // up to date.
  std::vector<StepReport> flush();

  int sequences() const;
  int width() const;
  int height() const;
  int frames() const { return frame_; }
  const Options& options() const;
  const TrackTable& tracks(int seq) const { return tables_.at(seq); }
  const std::vector<EndedTrack>& ended(int seq) const { return ended_.at(seq); }
  std::size_t residentBytes() const;

  // Replay each push shape as a CUDA graph (default) or launch the kernels one by one.
  void setUseGraph(bool on) { useGraph_ = on; }
  // Time each kernel with the context's profiler (needs setUseGraph(false)).
  void setProfiling(bool on);

 private:
  template <class Stage>
  std::vector<StepReport> pushImpl(Stage stage, std::size_t count, std::span<const bool> keyframes);
  template <class Stage>
  std::vector<StepReport> pushPipelinedImpl(Stage stage, std::size_t count,
                                            std::span<const bool> keyframes);
  void checkFrames(std::size_t count, std::span<const bool> keyframes) const;
  // Which sequences select in this push (the first push and keyframes), and whether any does.
  std::vector<bool> selections(std::span<const bool> keyframes, bool* any) const;
  // The seeds (the tables with their ages after the push) of every sequence.
  void stageTables();
  // The tables after the results of push `frame`.
  std::vector<StepReport> applyResults(int frame, bool track, const std::vector<bool>& selects);
  struct Pending {
    int frame = 0;
    bool track = false;
    std::vector<bool> selects;
  };

  std::unique_ptr<cuda::Engine> engine_;
  std::vector<TrackTable> tables_;
  std::vector<std::vector<EndedTrack>> ended_;
  std::vector<std::vector<TrackRecord>> seeds_;
  std::vector<std::vector<int>> ages_;
  std::vector<std::int64_t> nextId_;
  int frame_ = 0;
  int prevSlot_ = 0;
  bool useGraph_ = true;
  bool pending_ = false;   // a pipelined push whose results are not applied yet
  bool resident_ = false;  // the device holds the tables after the last pipelined push
  Pending pendingPush_;
};

}  // namespace vidmap::klt
