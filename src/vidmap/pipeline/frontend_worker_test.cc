// The pipelined front end (pipeline/frontend_worker.h) against the serial one, on synthetic
// videos rendered by the synth module:
//   - the written model (cameras.bin, images.bin, points3D.bin) is the same bytes for pipeline
//     depths 0 (one thread), 1 and 3 (the latter with one OpenMP thread for both sides) with
//     descriptors only, and 0 and 2 with KLT tracks (whose outliers flow back from the mapper);
//   - the guided matching made with one camera and checked against another
//     (Frontend::produce then finishKeyframe), or made again by the front end
//     (Frontend::refreshGuide), is the one made with the second camera: the paths a pipelined
//     run takes when the mapper refines the camera while the front end runs ahead;
//   - the model does not depend on when either side runs (issue 12: a command run twice on the
//     CPU gives the same model): the front end or the mapper held back at chosen frames, so
//     that guides are made with a camera the mapper then refines, the queue fills or empties
//     and the threads go to either side, against serial runs on 1 and 4 OpenMP threads;
//   - an error in the front end's thread (an unreadable frame mid-run) ends the run with that
//     error, once; an error on the mapper's side (a progress callback that throws) ends it too,
//     and the producer thread is joined in both cases (the test would hang or terminate).
#include "vidmap/pipeline/frontend_worker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/frame_source.h"
#include "vidmap/pipeline/klt_source.h"
#include "vidmap/pipeline/reconstruct.h"
#include "vidmap/synth/sequence.h"

namespace vidmap::pipeline {
namespace {

namespace fs = std::filesystem;

fs::path tempRoot() { return testCacheFolder("frontend_worker"); }

// A 320 x 240 orbit of the synthetic room (rendered once per test binary).
fs::path orbit(int frames, double fps) {
  const fs::path dir = tempRoot() / ("orbit_" + std::to_string(frames));
  if (fs::exists(dir / "rgb.txt")) return dir;
  synth::SequenceOptions o;
  o.scene = "room";
  o.path = "orbit";
  o.frames = frames;
  o.fps = fps;
  o.width = 320;
  o.height = 240;
  synth::writeSequence(dir, o);
  return dir;
}

std::string fileBytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// A binary model's three files, one after the other.
std::string modelBytes(const fs::path& m) {
  return fileBytes(m / "cameras.bin") + fileBytes(m / "images.bin") + fileBytes(m / "points3D.bin");
}

// The front end on the CPU, defaults otherwise.
FrontendOptions cpuFrontend() {
  FrontendOptions fo;
  fo.sift.backend = features::Backend::kCpu;
  fo.match.backend = features::Backend::kCpu;
  return fo;
}

ReconstructOptions quiet() {
  ReconstructOptions o;
  o.device = Device::kCpu;
  o.progress = false;
  o.checkFocal = false;
  return o;
}

struct Run {
  std::string model;  // the three binary files
  ReconstructSummary summary;
  std::int64_t rechecks = 0, refreshes = 0;
};

Run reconstructWith(const fs::path& seq, ReconstructOptions o, const std::string& name) {
  const fs::path out = tempRoot() / name;
  io::RunRecord record;
  Run r;
  r.summary = reconstruct(seq / "rgb.txt", out, o, record);
  r.model = modelBytes(out / "sparse" / "0");
  r.rechecks = record.counts().at("guide_rechecks");
  r.refreshes = record.counts().at("guide_refreshes");
  return r;
}

void expectSameModels(bool klt) {
  const fs::path seq = orbit(24, 8);
  ReconstructOptions o = quiet();  // unknown camera: refined while the video goes on (4 fps: 12
                                   // frames)
  o.klt = klt;
  const std::string tag = klt ? "klt" : "desc";
  o.pipelineDepth = 0;
  const Run serial = reconstructWith(seq, o, tag + "_serial");
  ASSERT_FALSE(serial.model.empty());
  ASSERT_GE(serial.summary.keyframes, 6);
  EXPECT_EQ(serial.rechecks, 0);  // one thread: the camera is always the mapper's
  // The mapper behind by one keyframe, and by several with one OpenMP thread for both sides.
  for (int depth : klt ? std::vector<int>{2} : std::vector<int>{1, 3}) {
    o.pipelineDepth = depth;
#if defined(_OPENMP)
    const int before = omp_get_max_threads();
    if (depth == 3) omp_set_num_threads(1);
#endif
    const Run piped = reconstructWith(seq, o, tag + "_depth" + std::to_string(depth));
#if defined(_OPENMP)
    omp_set_num_threads(before);
#endif
    EXPECT_TRUE(piped.model == serial.model) << "depth " << depth << ": not the serial model";
    EXPECT_EQ(piped.summary.keyframes, serial.summary.keyframes);
    EXPECT_EQ(piped.summary.pairs, serial.summary.pairs);
    EXPECT_EQ(piped.summary.matches, serial.summary.matches);
    EXPECT_EQ(piped.summary.kltMatches, serial.summary.kltMatches);
    std::printf(
        "  %s, depth %d: %d keyframes, guides made again: %lld by the mapper, %lld by "
        "the front end\n",
        tag.c_str(), depth, piped.summary.keyframes, static_cast<long long>(piped.rechecks),
        static_cast<long long>(piped.refreshes));
  }
}

TEST(FrontendLoop, PipelinedGivesTheSerialModel) { expectSameModels(false); }

TEST(FrontendLoop, PipelinedGivesTheSerialModelWithKltTracks) { expectSameModels(true); }

sfm::Camera camera(const std::string& spec) {
  return sfm::Camera::fromSpec(sfm::CameraSpec::parse(spec), 320, 240, 320, 240);
}

// A first pass recorded by the pipelined front end (on its thread, FrontendRecording) and a
// second pass over the recording, from another camera, give the model of two serial passes
// over the frames (the second from the first's camera, self-calibration off: a 384 px start,
// the truth 277 px), byte for byte.
TEST(FrontendLoop, APipelinedRecordingGivesTheSecondPassOfTheFrames) {
  const fs::path seq = orbit(24, 8);
  ReconstructOptions o = quiet();
  o.mapper.selfCalibrateFocal = false;
  o.rerunGuessFocalChange = 0.1;
  o.pipelineDepth = 0;
  o.rerunReuseMiB = 0;
  const auto serial = reconstructWith(seq, o, "rerun_serial_frames");
  o.pipelineDepth = 2;
  o.rerunReuseMiB = 64;
  const auto piped = reconstructWith(seq, o, "rerun_piped_recorded");
  ASSERT_FALSE(serial.model.empty());
  ASSERT_GT(serial.summary.rerunFocalPx, 0);
  ASSERT_GT(piped.summary.rerunFocalPx, 0);
  EXPECT_TRUE(piped.model == serial.model);
  EXPECT_EQ(piped.summary.keyframes, serial.summary.keyframes);
  EXPECT_EQ(piped.summary.pairs, serial.summary.pairs);
}

// A recording beyond its bound lets its frames go and is not used; a second pass over it is
// refused with a clear error.
TEST(FrontendLoop, ARecordingBeyondItsBoundIsDropped) {
  FrontendRecording r;
  r.maxBytes = 1 << 16;
  KeyframeOutput kf;
  kf.keyframe.keypoints.resize(1000);  // 16 KB
  sfm::TrackedFrame none;
  r.add(FrameOutcome::kKeyframe, kf, none);
  r.add(FrameOutcome::kSkipped, kf, none);
  ASSERT_EQ(r.frames.size(), 2u);
  EXPECT_TRUE(r.usable());
  for (int i = 0; i < 4; ++i) r.add(FrameOutcome::kKeyframe, kf, none);
  EXPECT_TRUE(r.overflowed);
  EXPECT_TRUE(r.frames.empty());
  EXPECT_FALSE(r.usable());
  r.add(FrameOutcome::kKeyframe, kf, none);
  EXPECT_TRUE(r.frames.empty());
  const FrontendOptions fo = cpuFrontend();
  io::RunRecord record;
  Frontend frontend(fo, record);
  sfm::Mapper mapper(camera("SIMPLE_RADIAL 300,160,120,0"), {});
  EXPECT_THROW(runRecordedLoop(
                   r, frontend, mapper, record, [](int) {}, [](int, int) {}),
               Error);
}

// A second pass's loop options it cannot honour are clear errors, before any frame: a negative
// depth, outliers fed back (a recording has no tracker), a recording of its own.
TEST(FrontendLoop, ASecondPassRefusesOptionsItCannotHonour) {
  FrontendRecording r;
  r.maxBytes = 1 << 20;
  r.add(FrameOutcome::kKeyframe, KeyframeOutput{}, sfm::TrackedFrame{});
  ASSERT_TRUE(r.usable());
  io::RunRecord record;
  Frontend frontend(cpuFrontend(), record);
  sfm::Mapper mapper(camera("SIMPLE_RADIAL 300,160,120,0"), {});
  FrontendRecording other;
  const auto refused = [&](const FrontendLoopOptions& o, const std::string& says) {
    try {
      runRecordedLoop(
          r, frontend, mapper, record, [](int) {}, [](int, int) {}, o);
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
    EXPECT_EQ(r.frames.size(), 1u);  // nothing consumed
  };
  FrontendLoopOptions o;
  o.depth = -1;
  refused(o, "pipeline depth -1 < 0");
  o = {};
  o.outliersFeedBack = true;
  refused(o, "reads no outliers");
  o = {};
  o.recording = &other;
  refused(o, "records nothing");
}

// The frames of a sequence, decoded.
std::vector<io::Frame> frames(const fs::path& seq, int n) {
  io::FrameSourceOptions so;
  so.allFrames = true;
  auto src = io::openFrameSource(seq / "rgb.txt", so);
  std::vector<io::Frame> out;
  io::Frame f;
  while (static_cast<int>(out.size()) < n && src->next(f)) out.push_back(f);
  return out;
}

TEST(Frontend, AGuideMadeWithAnOldCameraIsMadeAgainWithTheNewOne) {
  const fs::path seq = orbit(24, 8);
  std::vector<io::Frame> fr = frames(seq, 24);
  ASSERT_EQ(fr.size(), 24u);
  for (size_t i = 0; i < 12; ++i) fr[i] = fr[2 * i];  // 4 fps
  fr.resize(12);
  // Two cameras as a mapper would have them before and after a refinement: a different focal
  // length and distortion (the guide's E and band, and the undistorted keypoints, change).
  const sfm::Camera before = camera("SIMPLE_RADIAL 300,160,120,0");
  const sfm::Camera after = camera("SIMPLE_RADIAL 280,160,120,-0.08");
  const FrontendOptions fo = cpuFrontend();
  io::RunRecord r1, r2, r3, r4;
  Frontend serialAfter(fo, r1), serialBefore(fo, r2), rechecked(fo, r3), refreshed(fo, r4);
  int keyframes = 0, differ = 0;
  for (const io::Frame& f : fr) {
    KeyframeOutput a, b, c, d;
    sfm::TrackedFrame ta, tb, tc, td;
    const FrameOutcome oa = serialAfter.process(f, after, &a, &ta);
    const FrameOutcome ob = serialBefore.process(f, before, &b, &tb);
    const FrameOutcome oc = rechecked.produce(f, before, &c, &tc);
    const FrameOutcome od = refreshed.produce(f, before, &d, &td);
    // The gate and the plain matches do not depend on the camera.
    ASSERT_EQ(oa, ob);
    ASSERT_EQ(oa, oc);
    ASSERT_EQ(oa, od);
    if (oa != FrameOutcome::kKeyframe) continue;
    rechecked.finishKeyframe(&c, after);
    // The front end's own refresh (the keypoints of its history undistorted in place), then
    // the mapper's check, which finds the camera it has.
    if (d.result.dependsOnCamera) d.result = refreshed.refreshGuide(d, after);
    refreshed.finishKeyframe(&d, after);
    ++keyframes;
    ASSERT_EQ(a.pairs.size(), c.pairs.size());
    for (size_t p = 0; p < a.pairs.size(); ++p) {
      EXPECT_EQ(a.pairs[p].image1, c.pairs[p].image1);
      EXPECT_EQ(a.pairs[p].matches, c.pairs[p].matches);
      EXPECT_EQ(a.pairs[p].essential, c.pairs[p].essential);
    }
    ASSERT_EQ(a.pairs.size(), d.pairs.size());
    for (size_t p = 0; p < a.pairs.size(); ++p) {
      EXPECT_EQ(a.pairs[p].matches, d.pairs[p].matches);
      EXPECT_EQ(a.pairs[p].essential, d.pairs[p].essential);
    }
    bool same = a.pairs.size() == b.pairs.size();
    for (size_t p = 0; same && p < a.pairs.size(); ++p)
      same =
          a.pairs[p].matches == b.pairs[p].matches && a.pairs[p].essential == b.pairs[p].essential;
    differ += !same;
  }
  EXPECT_GE(keyframes, 4);
  // The camera matters (else the check above would hold trivially).
  EXPECT_GT(differ, 0);
  EXPECT_EQ(rechecked.stats().guideRechecks, keyframes - 1);  // the first has no pairs
  EXPECT_EQ(rechecked.stats().guidedMatches, serialAfter.stats().guidedMatches);
  EXPECT_EQ(refreshed.stats().guideRefreshes, keyframes - 1);
  EXPECT_EQ(refreshed.stats().guideRechecks, 0);
  EXPECT_EQ(refreshed.stats().guidedMatches, serialAfter.stats().guidedMatches);
}

// The frames of a source, with an error at frame `failAt`.
class FailingSource : public io::FrameSource {
 public:
  FailingSource(std::unique_ptr<io::FrameSource> inner, int failAt)
      : inner_(std::move(inner)), failAt_(failAt) {}
  const io::FrameSourceInfo& info() const override { return inner_->info(); }
  bool next(io::Frame& f) override {
    if (read_++ == failAt_) throw Error("frame " + std::to_string(failAt_) + ": unreadable (test)");
    return inner_->next(f);
  }

 private:
  std::unique_ptr<io::FrameSource> inner_;
  int failAt_;
  int read_ = 0;
};

// The frames of a source, the front end's thread held back before those `slow` names.
class SlowSource : public io::FrameSource {
 public:
  SlowSource(std::unique_ptr<io::FrameSource> inner, std::function<bool(int)> slow)
      : inner_(std::move(inner)), slow_(std::move(slow)) {}
  const io::FrameSourceInfo& info() const override { return inner_->info(); }
  bool next(io::Frame& f) override {
    if (slow_(read_++)) std::this_thread::sleep_for(std::chrono::milliseconds(40));
    return inner_->next(f);
  }

 private:
  std::unique_ptr<io::FrameSource> inner_;
  std::function<bool(int)> slow_;
  int read_ = 0;
};

// When each side of the loop runs: the frames before which the front end is held back, the
// frames after which the mapper is (40 ms each: longer than a frame's work at 320 px).
struct Timing {
  std::string name;
  int depth = 0;
  int threads = 1;  // the caller's OpenMP threads
  std::function<bool(int)> slowFrontend = [](int) { return false; };
  std::function<bool(int)> slowMapper = [](int) { return false; };
};

struct LoopRun {
  std::string model;  // every model's cameras.bin, images.bin, points3D.bin
  FrontendStats stats;
  int verifiedAhead = 0,
      aheadDiffered = 0;  // the mapper's pairs from FrontendLoopOptions::verifyAhead
};

// Every model of a finished mapper, written in COLMAP's binary form under tempRoot() / `dir`,
// as bytes (cameras, images, points of each model in turn).
std::string modelsBytes(const sfm::Mapper& mapper, const std::string& dir) {
  std::string bytes;
  const std::vector<const sfm::Reconstruction*> models = mapper.models();
  for (size_t i = 0; i < models.size(); ++i) {
    const fs::path d = tempRoot() / dir / std::to_string(i);
    fs::remove_all(d);
    fs::create_directories(d);
    io::writeColmapModel(models[i]->toColmap(), d, io::ColmapFormat::kBinary);
    bytes += modelBytes(d);
  }
  return bytes;
}

// The loop over every frame of the orbit, the camera unknown (self-calibrated and refined as
// the frames come), wired as reconstruct() wires it; with `klt`, KLT tracks give matches and
// the mapper's outliers end them (--klt on).
LoopRun runTimed(bool klt, const Timing& t, int outlierLag = 0) {
  const fs::path seq = orbit(24, 8);
  io::FrameSourceOptions so;
  so.allFrames = true;
  const FrontendOptions fo = cpuFrontend();
  io::RunRecord record;
  Frontend frontend(fo, record);
  sfm::Mapper mapper(camera("SIMPLE_RADIAL"), sfm::MapperOptions{});
  std::unique_ptr<KltSource> tracks;
  if (klt) {
    KltSourceOptions ko;
    ko.outlierLag = outlierLag;
    tracks = std::make_unique<KltSource>(ko);
    frontend.addSource(tracks.get());
    mapper.setOutlierSink([src = tracks.get()](const sfm::PairMatches& o) { src->onOutliers(o); });
  }
  SlowSource src(io::openFrameSource(seq / "rgb.txt", so), t.slowFrontend);
  FrontendLoopOptions lo;
  lo.depth = t.depth;
  lo.outliersFeedBack = klt;
  lo.outlierLag = outlierLag;
#if defined(_OPENMP)
  const int before = omp_get_max_threads();
  omp_set_num_threads(t.threads);
#endif
  runFrontendLoop(
      src, frontend, mapper, record, lo, [](int) {},
      [&](int frames, int) {
        if (t.slowMapper(frames - 1)) std::this_thread::sleep_for(std::chrono::milliseconds(40));
      });
  mapper.finish();
#if defined(_OPENMP)
  omp_set_num_threads(before);
#endif
  LoopRun r;
  r.stats = frontend.stats();
  r.verifiedAhead = mapper.stats().pairsVerifiedAhead;
  r.aheadDiffered = mapper.stats().pairsAheadDiffered;
  r.model = modelsBytes(mapper, "timed");
  return r;
}

void expectTheModelOfEveryTiming(bool klt, int outlierLag = 0) {
  const auto every = [](int) { return true; };
  const std::vector<Timing> timings{
      {"serial, 1 thread", 0, 1},
      {"serial, 4 threads", 0, 4},
      // The front end runs ahead to its depth: its guides wait in the queue while the mapper
      // refines the camera (made again by the front end as it waits, or by the mapper), and
      // the front end, waited on less, computes on one thread.
      {"depth 2, the mapper held back", 2, 2, [](int) { return false; }, every},
      // The mapper waits for each frame and the front end gets the threads.
      {"depth 2, the front end held back", 2, 4, every},
      // Either side behind by turns, the queue filling and emptying.
      {"depth 3, by turns, 1 thread", 3, 1, [](int f) { return f / 3 % 2 == 0; },
       [](int f) { return f / 3 % 2 == 1; }},
  };
  const LoopRun first = runTimed(klt, timings[0], outlierLag);
  ASSERT_FALSE(first.model.empty());
  ASSERT_GE(first.stats.keyframes, 5);
  std::int64_t madeAgain = 0, ahead = 0;
  EXPECT_EQ(first.verifiedAhead + first.aheadDiffered, 0);  // serial: none
  for (size_t k = 1; k < timings.size(); ++k) {
    const LoopRun r = runTimed(klt, timings[k], outlierLag);
    EXPECT_TRUE(r.model == first.model) << timings[k].name << ": not the serial model";
    EXPECT_EQ(r.stats.keyframes, first.stats.keyframes) << timings[k].name;
    EXPECT_EQ(r.stats.dropped, first.stats.dropped) << timings[k].name;
    EXPECT_EQ(r.stats.guidedMatches, first.stats.guidedMatches) << timings[k].name;
    madeAgain += r.stats.guideRechecks + r.stats.guideRefreshes;
    ahead += r.verifiedAhead;
    std::printf(
        "  %s: %d keyframes, %d dropped, guides made again: %d by the mapper, %d by the "
        "front end; pairs verified ahead: %d taken, %d estimated again\n",
        timings[k].name.c_str(), r.stats.keyframes, r.stats.dropped, r.stats.guideRechecks,
        r.stats.guideRefreshes, r.verifiedAhead, r.aheadDiffered);
  }
  // The timings took the paths where the camera crosses between the threads. How many pairs
  // the front end verified while it waited depends on how long each side takes (none under
  // ASan, where the front end is slower than the mapper held back): printed, not required
  // here; APipelinedSecondPassGivesTheSerialOne requires them (its producer only matches).
  EXPECT_GT(madeAgain, 0);
  std::printf("  pairs verified ahead over the pipelined timings: %lld\n",
              static_cast<long long>(ahead));
}

TEST(FrontendLoop, TheModelDoesNotDependOnTheTiming) { expectTheModelOfEveryTiming(false); }

TEST(FrontendLoop, TheModelDoesNotDependOnTheTimingWithKltTracks) {
  expectTheModelOfEveryTiming(true);
}

// The front end a keyframe ahead of the verification (KltSourceOptions::outlierLag 1): the
// outliers still end their tracks at the same frame, whichever thread is behind.
TEST(FrontendLoop, TheModelDoesNotDependOnTheTimingWithKltTracksAtOutlierLagOne) {
  expectTheModelOfEveryTiming(true, 1);
}

// A second pass over a recording, pipelined (the producer makes each keyframe's guided matching
// with the camera the mapper last published and verifies the pairs ahead while it waits), gives
// the serial second pass's model byte for byte, with the mapper held back and by turns.
TEST(FrontendLoop, APipelinedSecondPassGivesTheSerialOne) {
  const fs::path seq = orbit(24, 8);
  FrontendRecording recording;
  recording.maxBytes = std::size_t{256} << 20;
  {
    io::FrameSourceOptions so;
    so.allFrames = true;
    io::RunRecord record;
    Frontend frontend(cpuFrontend(), record);
    sfm::Mapper mapper(camera("SIMPLE_RADIAL"), sfm::MapperOptions{});
    auto src = io::openFrameSource(seq / "rgb.txt", so);
    FrontendLoopOptions lo;
    lo.recording = &recording;
    runFrontendLoop(
        *src, frontend, mapper, record, lo, [](int) {}, [](int, int) {});
  }
  ASSERT_TRUE(recording.usable());
  const auto replay = [&](int depth, int threads, const std::function<bool(int)>& slowMapper) {
    FrontendRecording copy = recording;
    io::RunRecord record;
    Frontend frontend(cpuFrontend(), record);
    // Another start than the first pass's (a second pass's reason to be).
    sfm::Mapper mapper(camera("SIMPLE_RADIAL 300,160,120,0"), sfm::MapperOptions{});
    FrontendLoopOptions lo;
    lo.depth = depth;
#if defined(_OPENMP)
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
#endif
    runRecordedLoop(
        copy, frontend, mapper, record, [](int) {},
        [&](int frames, int) {
          if (slowMapper(frames - 1)) std::this_thread::sleep_for(std::chrono::milliseconds(40));
        },
        lo);
    mapper.finish();
#if defined(_OPENMP)
    omp_set_num_threads(before);
#endif
    EXPECT_TRUE(copy.frames.empty());  // consumed
    LoopRun r;
    r.stats = frontend.stats();
    r.verifiedAhead = mapper.stats().pairsVerifiedAhead;
    r.model = modelsBytes(mapper, "replayed");
    return r;
  };
  const auto never = [](int) { return false; };
  const LoopRun serial = replay(0, 2, never);
  ASSERT_FALSE(serial.model.empty());
  EXPECT_EQ(serial.verifiedAhead, 0);
  const LoopRun held = replay(2, 2, [](int) { return true; });
  EXPECT_TRUE(held.model == serial.model) << "the mapper held back: not the serial model";
  EXPECT_GT(held.verifiedAhead, 0);
  EXPECT_EQ(held.stats.guidedMatches, serial.stats.guidedMatches);
  const LoopRun turns = replay(3, 1, [](int f) { return f / 3 % 2 == 1; });
  EXPECT_TRUE(turns.model == serial.model) << "by turns: not the serial model";
  std::printf(
      "  pairs verified ahead: %d (mapper held back), %d (by turns); guides made again by "
      "the mapper: %d, %d\n",
      held.verifiedAhead, turns.verifiedAhead, held.stats.guideRechecks, turns.stats.guideRechecks);
}

TEST(FrontendLoop, AnErrorInEitherThreadEndsTheRunOnce) {
  const fs::path seq = orbit(24, 8);
  io::FrameSourceOptions so;
  so.allFrames = true;
  const FrontendOptions fo = cpuFrontend();
  const sfm::Camera cam = camera("SIMPLE_RADIAL");
  for (int depth : {0, 2}) {
    // The front end's thread: the source fails at frame 10.
    {
      io::RunRecord record;
      Frontend frontend(fo, record);
      sfm::MapperOptions mo;
      sfm::Mapper mapper(cam, mo);
      FailingSource src(io::openFrameSource(seq / "rgb.txt", so), 10);
      FrontendLoopOptions lo;
      lo.depth = depth;
      int mapped = 0;
      try {
        runFrontendLoop(
            src, frontend, mapper, record, lo, [](int) {},
            [&](int frames, int) { mapped = frames; });
        ADD_FAILURE() << "depth " << depth << ": no error";
      } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "frame 10: unreadable (test)") << "depth " << depth;
      }
      EXPECT_LE(mapped, 10);
    }
    // The mapper's side: the progress callback throws at frame 5.
    {
      io::RunRecord record;
      Frontend frontend(fo, record);
      sfm::MapperOptions mo;
      sfm::Mapper mapper(cam, mo);
      auto src = io::openFrameSource(seq / "rgb.txt", so);
      FrontendLoopOptions lo;
      lo.depth = depth;
      EXPECT_THROW(runFrontendLoop(
                       *src, frontend, mapper, record, lo, [](int) {},
                       [](int frames, int) {
                         if (frames == 5) throw Error("stop at 5");
                       }),
                   Error);
    }
  }
}

}  // namespace
}  // namespace vidmap::pipeline
