// The loop that feeds the mapper: decode -> front end -> mapper, frame by frame, either in one
// thread (depth 0) or pipelined: a producer thread decodes, extracts and matches the next
// frames while the mapper (on the calling thread) works on the current keyframe, through a
// queue that holds at most `depth` keyframes (issue 13: "while the mapper works on keyframe k
// the front end decodes, extracts and matches k+1").
//
// Same model as serial, bit for bit. The state that crosses from the mapper back to the front
// end, and why the pipelined run still computes what the serial one does:
//   - the mapper's camera (focal length and distortion, refined as the video goes on): the
//     keyframe gate measures motion on raw keypoints and plain matching reads descriptors only,
//     so what the producer decides (keyframe or not, the active keyframes, the matches) does
//     not depend on it. The guided matching does (Frontend::produce, GuidedInput): the producer
//     makes it with the camera the mapper last published, and the mapper's thread checks the
//     parameters against its camera of the moment, which is the camera a serial run would have
//     used; when they differ it makes the guided matching again (Frontend::finishKeyframe).
//     The result is a function of the parameters alone, so either way it is the serial one.
//   - the outliers of pair verification, which end KLT tracks (Mapper::setOutlierSink): with a
//     source that reads them (`outliersFeedBack`), the producer decodes the next frame, then
//     waits until the mapper has verified every keyframe it produced but the last
//     `outlierLag` (Mapper::setVerifiedSink) before the tracker advances. The source applies
//     the outliers of keyframe k at the first frame after keyframe k + outlierLag, on either
//     path (KltSourceOptions::outlierLag), so the tracks are the serial run's. At lag 0 the
//     registration, triangulation and bundle adjustment of a keyframe overlap the front end's
//     next frames; at lag 1 its verification does too.
//   - nothing else: the active keyframe set, the gate and the sources' state are the front
//     end's own.
// Verifying ahead (FrontendLoopOptions::verifyAhead): a producer that waits (the queue is full,
// or the tracker waits for the outliers) verifies the pairs of queued keyframes with the
// camera the mapper last published (sfm::Mapper::verifyAhead, on all the caller's threads: the
// mapper is in its bundle adjustments meanwhile); the mapper takes such a keyframe once that is
// done, and keeps each pair's geometry when its own inputs are the same, bit for bit (else it
// estimates the pair, as without): the verification leaves the mapper's path without changing
// the model (docs/benchmarks.md, "Pairs verified while the front end waits").
// Frames reach the mapper in order, one item per frame (keyframes, dropped frames).
//
// Cores: both sides use OpenMP (SIFT and matching on the CPU, the mapper), each thread with a
// team of its own. The side the other has waited on more so far (the bottleneck: the front end
// on a CPU, the mapper with CUDA SIFT) runs its parallel regions on all the threads the caller
// had but the other side's, the other side on a quarter of them (at least one; sideThreads),
// decided at each frame; so at most one thread more than the cores computes at once, and
// OMP_WAIT_POLICY=passive keeps the waiting ones off the cores. On 2 cores: 2 and 1. (An even
// split starves the bottleneck: docs/benchmarks.md, "Pipelined front end"; one thread for the
// other side left a keyframe's guides serial on 16 cores: "The local BA's device arrays
// kept".) The model does not depend on the threads.
//
// Ending: an exception in either thread ends the run with that exception (the producer's is
// carried to the calling thread and thrown there, once); the producer is stopped and joined
// before run() returns or throws, so nothing outlives it. Ctrl-C: the producer stops at its
// next frame, the calling thread's checkpoint throws Interrupted.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "vidmap/io/frame_source.h"
#include "vidmap/io/run_record.h"
#include "vidmap/pipeline/frontend.h"
#include "vidmap/sfm/mapper.h"

namespace vidmap::pipeline {

// What the front end produced for every sampled frame of a pass, kept for a second pass over
// the same frames with another start camera (pipeline/reconstruct.h, rerunFocalChange): the
// keyframe gate, SIFT and plain matching read no camera (see above), so without a
// PairMatchSource (KLT: its tracks end at the mapper's outliers) a second pass makes the same
// decisions, features and plain matches. Only the guided matching (and the mapper) are made
// again (runRecordedLoop). Memory: the features of every keyframe (0.5 KiB a feature: 80
// keyframes of 3000 features hold 125 MiB; the front end's history keeps the last
// FrontendOptions::historyKeyframes of them anyway), the keyframes' keypoints and colours, the
// plain matches and the dropped frames' matches; a recording that grows beyond maxBytes is
// dropped (`overflowed`) and the second pass decodes and extracts again.
struct FrontendRecording {
  struct Frame {
    FrameOutcome outcome = FrameOutcome::kSkipped;
    sfm::Keyframe keyframe;  // kKeyframe: what produce made, and its guided matching's input
    GuidedInput guided;
    sfm::TrackedFrame tracked;  // kDropped
  };
  std::size_t maxBytes = 0;
  std::size_t bytes = 0;
  bool overflowed = false;
  std::vector<Frame> frames;
  FrontendStats stats;     // the front end's at the end of the pass
  io::SourceReport input;  // the source's damage report

  // Appends a copy of what produce made (nothing once overflowed).
  void add(FrameOutcome outcome, const KeyframeOutput& keyframe, const sfm::TrackedFrame& tracked);
  bool usable() const { return !overflowed && !frames.empty(); }
};

struct FrontendLoopOptions {
  int depth = 2;  // keyframes the front end may run ahead of the mapper; 0: one thread
  // A PairMatchSource reads the mapper's outliers (KLT): the producer waits for the
  // verification of its keyframes before each frame.
  bool outliersFeedBack = false;
  // With outliersFeedBack: the producer may be this many keyframes ahead of the mapper's
  // verification (KltSourceOptions::outlierLag, whose outliers end tracks that much later).
  int outlierLag = 0;
  // Threads of the side that is not the bottleneck (see "Cores" above); 0: a quarter of the
  // caller's, at least one.
  int sideThreads = 0;
  // Pipelined: while the producer waits (the queue is full, or the tracker waits for the
  // mapper's outliers), it verifies the pairs of queued keyframes with the mapper's last
  // camera (sfm::Mapper::verifyAhead); the mapper keeps a pair's geometry when its own inputs
  // are the same and estimates it again otherwise, so the model is the same either way.
  bool verifyAhead = true;
  // Where to record what the front end produces (null: nowhere); only without a PairMatchSource.
  FrontendRecording* recording = nullptr;
};

// Runs the frames of `source` through `frontend` into `mapper` to the end of the source.
// `checkpoint` runs on the calling thread before each frame is mapped (it may throw, e.g.
// Interrupted); `afterFrame(frames, keyframes)` after each. Returns the frames read. Stage
// times go to `record` ("decode", "mapper", and the waits "pipeline.mapper_wait",
// "pipeline.frontend_wait" when pipelined, the first frame's wait also as
// "pipeline.first_frame_wait").
int runFrontendLoop(io::FrameSource& source, Frontend& frontend, sfm::Mapper& mapper,
                    io::RunRecord& record, const FrontendLoopOptions& options,
                    const std::function<void(int frames)>& checkpoint,
                    const std::function<void(int frames, int keyframes)>& afterFrame);

// A second pass over `recording` (its frames consumed): each recorded keyframe's guided matching
// is made with the mapper's camera of the moment, as a serial pass would (the same model, bit
// for bit, as decoding and extracting again: pipeline_test). No decoding, SIFT nor plain
// matching. options.depth 0: one thread; else pipelined as runFrontendLoop, the producer making
// each keyframe's guided matching with the camera the mapper last published (the mapper makes
// it again when its camera differs, Frontend::finishKeyframe) and verifying pairs ahead
// (options.verifyAhead); options.outliersFeedBack and options.recording must be off. Returns
// the frames.
int runRecordedLoop(FrontendRecording& recording, Frontend& frontend, sfm::Mapper& mapper,
                    io::RunRecord& record, const std::function<void(int frames)>& checkpoint,
                    const std::function<void(int frames, int keyframes)>& afterFrame,
                    const FrontendLoopOptions& options = {.depth = 0});

}  // namespace vidmap::pipeline
