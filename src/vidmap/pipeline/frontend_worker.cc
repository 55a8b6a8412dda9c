#include "vidmap/pipeline/frontend_worker.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "vidmap/core/error.h"
#include "vidmap/pipeline/interrupt.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace vidmap::pipeline {

namespace {

int maxThreads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// The calling thread's OpenMP team size for its next parallel regions (a per-thread setting).
void setThreads(int n) {
#if defined(_OPENMP)
  omp_set_num_threads(std::max(1, n));
#else
  (void)n;
#endif
}

// The teams of the two sides (frontend_worker.h, "Cores"): the side that is not the
// bottleneck gets `side` threads (0: a quarter, at least one), the bottleneck the rest and one
// more. Both at least one.
struct Teams {
  int bottleneck = 1, side = 1;
};
Teams teams(int threads, int side) {
  Teams t;
  t.side = std::clamp(side > 0 ? side : threads / 4, 1, std::max(1, threads));
  t.bottleneck = std::max(1, threads - t.side + 1);
  return t;
}

// One sampled frame on its way to the mapper.
struct Item {
  FrameOutcome outcome = FrameOutcome::kSkipped;
  KeyframeOutput keyframe;
  sfm::TrackedFrame tracked;
  // Pipelined: the producer is making its guide again or verifying its pairs ahead (under
  // mutex); the mapper takes the item once it is not.
  bool busy = false;
  // Pipelined, a keyframe: its pairs verified by the producer while it waited (null: not, or
  // not yet), and the camera (empty: not tried) and focal state of its last try (under mutex
  // while queued).
  std::shared_ptr<const sfm::VerifiedAhead> ahead;
  std::vector<double> aheadCamera;
  sfm::FocalLength aheadFocal = sfm::FocalLength::kUnknown;
};

// The mapper's side of one frame: the guided matching checked against its camera (made with it,
// for a recorded frame of a second pass), then the keyframe (or the dropped frame) into the
// mapper.
void mapItem(Item& it, Frontend& frontend, sfm::Mapper& mapper, io::RunRecord& record,
             bool recorded = false) {
  if (it.outcome == FrameOutcome::kKeyframe) {
    if (recorded)
      frontend.finishRecordedKeyframe(&it.keyframe, mapper.camera());
    else
      frontend.finishKeyframe(&it.keyframe, mapper.camera());
    auto t = record.stage("mapper");
    mapper.addKeyframe(std::move(it.keyframe.keyframe), it.keyframe.pairs, it.ahead.get());
  } else if (it.outcome == FrameOutcome::kDropped) {
    mapper.addTrackedFrame(std::move(it.tracked));
  }
}

template <class T>
std::size_t bytesOf(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

int runSerial(io::FrameSource& source, Frontend& frontend, sfm::Mapper& mapper,
              io::RunRecord& record, FrontendRecording* recording,
              const std::function<void(int)>& checkpoint,
              const std::function<void(int, int)>& afterFrame) {
  int frames = 0, keyframes = 0;
  io::Frame frame;
  Item it;
  for (;;) {
    checkpoint(frames);
    bool more;
    {
      auto t = record.stage("decode");
      more = source.next(frame);
    }
    if (!more) break;
    ++frames;
    it.outcome = frontend.produce(frame, mapper.camera(), &it.keyframe, &it.tracked);
    if (recording) recording->add(it.outcome, it.keyframe, it.tracked);
    if (it.outcome == FrameOutcome::kKeyframe) ++keyframes;
    mapItem(it, frontend, mapper, record);
    afterFrame(frames, keyframes);
  }
  return frames;
}

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// What the two threads share, under `mutex`.
struct Shared {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::shared_ptr<Item>> queue;
  int queuedKeyframes = 0;
  int verified = 0;  // keyframes the mapper has verified (their outliers delivered)
  bool done = false, stop = false;
  std::exception_ptr error;
  std::shared_ptr<const sfm::Camera> camera;            // the mapper's, as last published
  sfm::FocalLength focal = sfm::FocalLength::kUnknown;  // its focal state, published with it
  double mapperWaitMs = 0, producerWaitMs = 0;
  std::int64_t mapperWaits = 0, producerWaits = 0;

  // The threads of the two sides' parallel regions: the side the other has waited on more so
  // far (the bottleneck) takes all of them, the other one; the producer's end gives the mapper
  // all. At most one thread more than the cores compute at once.
  bool frontendBound() const { return !done && mapperWaitMs >= producerWaitMs; }
};

class Producer {
 public:
  // Frames from `source`, or (source null) the frames of `replay`, a first pass's recording.
  Producer(Shared& s, io::FrameSource* source, FrontendRecording* replay, Frontend& frontend,
           const sfm::Mapper& mapper, io::RunRecord& record, const FrontendLoopOptions& o,
           Teams teams)
      : s_(s),
        source_(source),
        replay_(replay),
        frontend_(frontend),
        mapper_(mapper),
        record_(record),
        o_(o),
        teams_(teams) {}

  void operator()() {
    try {
      loop();
    } catch (...) {
      std::lock_guard lock(s_.mutex);
      s_.error = std::current_exception();
    }
    {
      std::lock_guard lock(s_.mutex);
      s_.done = true;
    }
    s_.changed.notify_all();
  }

 private:
  // A queued keyframe whose guide was made with an older camera than the mapper's last.
  std::shared_ptr<Item> stale() const {
    for (const std::shared_ptr<Item>& it : s_.queue) {
      const GuidedResult& r = it->keyframe.result;
      if (it->outcome == FrameOutcome::kKeyframe && !it->busy && r.dependsOnCamera &&
          r.cameraParams != s_.camera->params())
        return it;
    }
    return nullptr;
  }

  // A queued keyframe whose guide holds for the mapper's last camera and whose pairs were not
  // yet verified ahead with that camera and focal state.
  std::shared_ptr<Item> unverified() const {
    for (const std::shared_ptr<Item>& it : s_.queue) {
      const GuidedResult& r = it->keyframe.result;
      if (it->outcome != FrameOutcome::kKeyframe || it->busy ||
          (r.dependsOnCamera && r.cameraParams != s_.camera->params()))
        continue;
      if (it->aheadCamera != s_.camera->params() || it->aheadFocal != s_.focal) return it;
    }
    return nullptr;
  }

  // The pairs of `it` verified with the mapper's last camera (Mapper::verifyAhead reads only
  // the mapper's options), without the mutex; the item is busy meanwhile, so the mapper waits
  // for the result rather than verifying the pairs again (it reads `ahead` once it has taken
  // the item off the queue).
  void verifyAheadOf(const std::shared_ptr<Item>& it, std::unique_lock<std::mutex>& lock) {
    it->busy = true;
    it->aheadCamera = s_.camera->params();
    it->aheadFocal = s_.focal;
    it->ahead.reset();
    const std::shared_ptr<const sfm::Camera> camera = s_.camera;
    const sfm::FocalLength focal = s_.focal;
    const std::vector<sfm::PairMatches> pairs = Frontend::finishedPairs(it->keyframe);
    lock.unlock();
    std::shared_ptr<const sfm::VerifiedAhead> ahead;
    std::exception_ptr error;
    try {
      auto t = record_.stage("verify_ahead");
      // All the threads: the mapper waits for this item, and until it takes it, works on the
      // one before (its bundle adjustments on one thread or the GPU). produce sets them again.
      setThreads(teams_.bottleneck);
      ahead = mapper_.verifyAhead(*camera, focal, pairs,
                                  [this](int id) -> const std::vector<sfm::Vec2>* {
                                    const auto k = keypoints_.find(id);
                                    return k == keypoints_.end() ? nullptr : k->second.get();
                                  });
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    it->busy = false;
    s_.changed.notify_all();
    if (error) std::rethrow_exception(error);
    it->ahead = std::move(ahead);  // still queued: the mapper waits while it is busy
  }

  // Waits (counted) until `ready`; false when the run is stopping. While it waits, the guides
  // of queued keyframes made with an older camera are made again with the mapper's last one
  // (off the mapper's path; the mapper checks them all the same, Frontend::finishKeyframe),
  // then the pairs of queued keyframes are verified ahead (FrontendLoopOptions::verifyAhead).
  template <class Ready>
  bool wait(std::unique_lock<std::mutex>& lock, Ready ready) {
    if (s_.stop || ready()) return !s_.stop;
    const auto t0 = Clock::now();
    while (!s_.stop && !ready()) {
      if (const std::shared_ptr<Item> it = stale()) {
        it->busy = true;
        const std::shared_ptr<const sfm::Camera> camera = s_.camera;
        lock.unlock();
        GuidedResult r;
        std::exception_ptr error;
        try {
          r = replay_ ? frontend_.guideRecorded(it->keyframe, *camera)
                      : frontend_.refreshGuide(it->keyframe, *camera);
        } catch (...) {
          error = std::current_exception();
        }
        lock.lock();
        if (!error) {
          it->keyframe.result = std::move(r);
          it->ahead.reset();  // its pairs changed with the guide
          it->aheadCamera.clear();
        }
        it->busy = false;
        s_.changed.notify_all();
        if (error) std::rethrow_exception(error);
        continue;
      }
      if (o_.verifyAhead) {
        if (const std::shared_ptr<Item> it = unverified()) {
          verifyAheadOf(it, lock);
          continue;
        }
      }
      s_.changed.wait(lock);
    }
    s_.producerWaitMs += msSince(t0);
    ++s_.producerWaits;
    return !s_.stop;
  }

  void loop() {
    io::Frame frame;
    int produced = 0;  // keyframes
    for (;;) {
      {
        std::lock_guard lock(s_.mutex);
        if (s_.stop) return;
      }
      if (interruptSignal() != 0) return;  // the mapper's checkpoint says so
      bool more;
      if (replay_) {
        more = next_ < replay_->frames.size();
      } else {
        auto t = record_.stage("decode");
        more = source_->next(frame);
      }
      if (!more) return;
      std::shared_ptr<const sfm::Camera> camera;
      {
        std::unique_lock lock(s_.mutex);
        // The tracker may advance once the mapper has ended the tracks its outliers name.
        if (o_.outliersFeedBack &&
            !wait(lock, [&] { return s_.verified >= produced - o_.outlierLag; }))
          return;
        if (s_.stop) return;
        camera = s_.camera;
        setThreads(s_.frontendBound() ? teams_.bottleneck : teams_.side);
      }
      auto it = std::make_shared<Item>();
      if (replay_) {
        FrontendRecording::Frame& f = replay_->frames[next_++];
        it->outcome = f.outcome;
        if (f.outcome == FrameOutcome::kKeyframe) {
          it->keyframe.keyframe = std::move(f.keyframe);
          it->keyframe.guided = std::move(f.guided);
          it->keyframe.result = frontend_.guideRecorded(it->keyframe, *camera);
        } else if (f.outcome == FrameOutcome::kDropped) {
          it->tracked = std::move(f.tracked);
        }
      } else {
        it->outcome = frontend_.produce(frame, *camera, &it->keyframe, &it->tracked);
      }
      if (o_.recording) o_.recording->add(it->outcome, it->keyframe, it->tracked);
      const bool keyframe = it->outcome == FrameOutcome::kKeyframe;
      produced += keyframe;
      if (keyframe && o_.verifyAhead) {
        // The keypoints later pairs name, as the mapper receives them; the oldest let go.
        const int id = it->keyframe.keyframe.id;
        keypoints_[id] =
            std::make_shared<const std::vector<sfm::Vec2>>(it->keyframe.keyframe.keypoints);
        keypoints_.erase(keypoints_.begin(), keypoints_.lower_bound(id - kKeypointsKept));
      }
      {
        std::unique_lock lock(s_.mutex);
        if (keyframe && !wait(lock, [&] { return s_.queuedKeyframes < o_.depth; })) return;
        s_.queue.push_back(std::move(it));
        s_.queuedKeyframes += keyframe;
      }
      s_.changed.notify_all();
    }
  }

  // Keyframes whose keypoints the producer keeps for verifying ahead (a pair naming an older
  // one is left to the mapper).
  static constexpr int kKeypointsKept = 256;

  Shared& s_;
  io::FrameSource* source_;
  FrontendRecording* replay_;
  std::size_t next_ = 0;  // replay_'s next frame
  Frontend& frontend_;
  const sfm::Mapper& mapper_;
  std::map<int, std::shared_ptr<const std::vector<sfm::Vec2>>> keypoints_;  // by keyframe id
  io::RunRecord& record_;
  const FrontendLoopOptions& o_;
  Teams teams_;
};

// Stops and joins the producer however the mapper's side ends, and puts back what the loop
// changed on the calling thread and the mapper.
class Joiner {
 public:
  Joiner(Shared& s, sfm::Mapper& mapper, int threads) : s_(s), mapper_(mapper), threads_(threads) {}
  ~Joiner() {
    {
      std::lock_guard lock(s_.mutex);
      s_.stop = true;
    }
    s_.changed.notify_all();
    if (thread.joinable()) thread.join();
    mapper_.setVerifiedSink({});
    mapper_.setCameraSink({});
    setThreads(threads_);
  }
  std::thread thread;

 private:
  Shared& s_;
  sfm::Mapper& mapper_;
  int threads_;
};

int runPipelined(io::FrameSource* source, FrontendRecording* replay, Frontend& frontend,
                 sfm::Mapper& mapper, io::RunRecord& record, const FrontendLoopOptions& o,
                 const std::function<void(int)>& checkpoint,
                 const std::function<void(int, int)>& afterFrame) {
  const int threads = maxThreads();
  const Teams team = teams(threads, o.sideThreads);
  Shared s;
  s.camera = std::make_shared<const sfm::Camera>(mapper.camera());
  s.focal = mapper.focalState();
  Producer producer(s, source, replay, frontend, mapper, record, o, team);
  Joiner joiner(s, mapper, threads);  // declared last: joins before the rest goes
  if (o.outliersFeedBack)
    mapper.setVerifiedSink([&s](int id) {
      {
        std::lock_guard lock(s.mutex);
        s.verified = std::max(s.verified, id + 1);
      }
      s.changed.notify_all();
    });
  // A camera the mapper changes mid-keyframe (a global BA) reaches the producer at once: the
  // guides and verifications it makes while it waits use it (the mapper checks them anyway).
  // Only the mapper's thread writes s.camera and s.focal.
  const auto publish = [&s, &mapper] {
    auto camera = std::make_shared<const sfm::Camera>(mapper.camera());
    {
      std::lock_guard lock(s.mutex);
      s.camera = std::move(camera);
      s.focal = mapper.focalState();
    }
    s.changed.notify_all();  // the producer refreshes the queued guides
  };
  mapper.setCameraSink(publish);
  joiner.thread = std::thread(std::ref(producer));

  int frames = 0, keyframes = 0;
  for (;;) {
    std::shared_ptr<Item> it;
    {
      std::unique_lock lock(s.mutex);
      // The next frame, once there and not being refreshed.
      const auto ready = [&] { return (!s.queue.empty() && !s.queue.front()->busy) || s.done; };
      if (!ready()) {
        const auto t0 = Clock::now();
        s.changed.wait(lock, ready);
        const double ms = msSince(t0);
        s.mapperWaitMs += ms;
        ++s.mapperWaits;
        // The first frame's wait is the front end's start (its GPU contexts' first work).
        if (frames == 0) record.addStage("pipeline.first_frame_wait", ms);
      }
      if (s.error) {
        const std::exception_ptr e = s.error;
        lock.unlock();
        std::rethrow_exception(e);  // the Joiner joins the (finished) producer
      }
      if (s.queue.empty()) break;                                    // done
      s.changed.wait(lock, [&] { return !s.queue.front()->busy; });  // once done
      it = std::move(s.queue.front());
      s.queue.pop_front();
      s.queuedKeyframes -= it->outcome == FrameOutcome::kKeyframe;
      setThreads(s.frontendBound() ? team.side : team.bottleneck);
    }
    s.changed.notify_all();
    checkpoint(frames);
    ++frames;
    const bool keyframe = it->outcome == FrameOutcome::kKeyframe;
    keyframes += keyframe;
    mapItem(*it, frontend, mapper, record);
    // The focal state may change without the camera (a self-calibration that found none).
    if (keyframe &&
        (mapper.camera().params() != s.camera->params() || mapper.focalState() != s.focal))
      publish();
    afterFrame(frames, keyframes);
  }
  record.addStage("pipeline.mapper_wait", s.mapperWaitMs, 0, s.mapperWaits);
  record.addStage("pipeline.frontend_wait", s.producerWaitMs, 0, s.producerWaits);
  return frames;
}

}  // namespace

void FrontendRecording::add(FrameOutcome outcome, const KeyframeOutput& kf,
                            const sfm::TrackedFrame& tracked) {
  if (overflowed) return;
  Frame f;
  f.outcome = outcome;
  if (outcome == FrameOutcome::kKeyframe) {
    f.keyframe = kf.keyframe;
    f.guided = kf.guided;
    // The query's features (later keyframes' candidates share them: counted once; the first
    // keyframe has no guided input, so its features go uncounted) and the keyframe's own.
    if (f.guided.query)
      bytes += bytesOf(f.guided.query->keypoints) + bytesOf(f.guided.query->descriptors) +
               bytesOf(*f.guided.queryRaw);
    bytes += bytesOf(f.keyframe.keypoints) + bytesOf(f.keyframe.colors);
    for (const auto& p : f.guided.plain) bytes += bytesOf(p);
  } else if (outcome == FrameOutcome::kDropped) {
    f.tracked = tracked;
    bytes += bytesOf(f.tracked.keypoints) + bytesOf(f.tracked.keyframeKeypoint);
  }
  bytes += sizeof(Frame);
  frames.push_back(std::move(f));
  if (bytes > maxBytes) {
    // Let the memory go now: the second pass, if any, starts from the frames.
    overflowed = true;
    frames = {};
  }
}

int runFrontendLoop(io::FrameSource& source, Frontend& frontend, sfm::Mapper& mapper,
                    io::RunRecord& record, const FrontendLoopOptions& options,
                    const std::function<void(int)>& checkpoint,
                    const std::function<void(int, int)>& afterFrame) {
  require(options.depth >= 0, "pipeline depth " + std::to_string(options.depth) + " < 0");
  const int frames = options.depth == 0 ? runSerial(source, frontend, mapper, record,
                                                    options.recording, checkpoint, afterFrame)
                                        : runPipelined(&source, nullptr, frontend, mapper, record,
                                                       options, checkpoint, afterFrame);
  if (options.recording) {
    options.recording->stats = frontend.stats();
    options.recording->input = source.report();
  }
  return frames;
}

int runRecordedLoop(FrontendRecording& recording, Frontend& frontend, sfm::Mapper& mapper,
                    io::RunRecord& record, const std::function<void(int)>& checkpoint,
                    const std::function<void(int, int)>& afterFrame,
                    const FrontendLoopOptions& options) {
  require(recording.usable(), "a second pass over a recording that holds no frames");
  require(options.depth >= 0, "pipeline depth " + std::to_string(options.depth) + " < 0");
  require(!options.outliersFeedBack && !options.recording,
          "a second pass over a recording reads no outliers and records nothing");
  frontend.resumeStats(recording.stats);
  if (options.depth > 0) {
    const int frames = runPipelined(nullptr, &recording, frontend, mapper, record, options,
                                    checkpoint, afterFrame);
    recording.frames = {};
    return frames;
  }
  int frames = 0, keyframes = 0;
  Item it;
  for (FrontendRecording::Frame& f : recording.frames) {
    checkpoint(frames);
    ++frames;
    it.outcome = f.outcome;
    if (f.outcome == FrameOutcome::kKeyframe) {
      ++keyframes;
      it.keyframe.keyframe = std::move(f.keyframe);
      it.keyframe.guided = std::move(f.guided);
      it.keyframe.sourcePairs.clear();
    } else if (f.outcome == FrameOutcome::kDropped) {
      it.tracked = std::move(f.tracked);
    }
    mapItem(it, frontend, mapper, record, true);
    afterFrame(frames, keyframes);
  }
  recording.frames = {};
  return frames;
}

}  // namespace vidmap::pipeline
