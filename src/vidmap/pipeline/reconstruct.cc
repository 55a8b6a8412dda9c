#include "vidmap/pipeline/reconstruct.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <limits>
#include <memory>
#include <sstream>
#include <type_traits>
#include <utility>

#include "vidmap/ba/backend.h"
#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/gpu/context.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/frame_source.h"
#include "vidmap/io/ply.h"
#include "vidmap/io/prefetch_source.h"
#include "vidmap/io/run_warnings.h"
#include "vidmap/io/tum_trajectory.h"
#include "vidmap/pipeline/frontend_worker.h"
#include "vidmap/pipeline/interrupt.h"
#include "vidmap/pipeline/output_folder.h"
#include "vidmap/pipeline/progress.h"
#include "vidmap/pipeline/reconstruct_options_fields.h"
#if defined(VIDMAP_HAVE_REPORT)
#include "vidmap/report/report_html.h"
#endif

namespace vidmap::pipeline {

namespace fs = std::filesystem;

Device parseDevice(const std::string& name) {
  if (name == "auto") return Device::kAuto;
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  throw Error("--device: unknown device '" + name + "' (auto, cpu, cuda)");
}

const char* toString(Device d) {
  switch (d) {
    case Device::kAuto:
      return "auto";
    case Device::kCpu:
      return "cpu";
    case Device::kCuda:
      return "cuda";
  }
  return "?";
}

void ReconstructOptions::check() const {
  checkRange("fps", fps, 1e-3, 120.0);  // the frame sources' range
  checkRange("width", width, kAutoWidth, 16384);
  checkRange("pipeline_depth", pipelineDepth, kAutoPipelineDepth, 64);
  checkRange("pipeline_side_threads", pipelineSideThreads, 0, 1024);
  checkRange("decode_ahead", decodeAhead, kAutoDecodeAhead, 64);
  checkRange("rerun_focal_change", rerunFocalChange, 0.0, 100.0);
  checkRange("rerun_guess_focal_change", rerunGuessFocalChange, 0.0, 100.0);
  checkRange("rerun_reuse_mib", rerunReuseMiB, 0, 1 << 20);
  if (width > 0 && width < 64)
    throw Error("option width = " + std::to_string(width) +
                " is below 64 (0 = native, -1 = automatic)");
  frontend.check();
  focalCheck.check();
  focalSweep.check();
  principalPoint.check();
  mapper.check();
  kltSource.check();
  mvs.check();
}

namespace {
// A flat profile's infinite uncertainty, written as a number into the run record.
constexpr double kUncertaintyCap = 1e3;
}  // namespace

int workingWidth(int width, bool photos, int nativeWidth) {
  if (width == kAutoWidth) width = photos ? kPhotoWidth : kVideoWidth;
  return width == 0 || nativeWidth <= width ? 0 : width;  // never enlarge
}

namespace {

// The GPU contexts of a run's stages (owned here, lent to the stages) and their report.
class StageContexts {
 public:
  explicit StageContexts(bool profile) : profile_(profile) {}
  gpu::Context* add(const char* stage, std::vector<io::RunRecord::KernelRoute> routes = {}) {
    auto ctx = std::make_unique<gpu::Context>(0);
    ctx->profiler().setEnabled(profile_);
    stages_.push_back({stage, std::move(ctx), std::move(routes)});
    return stages_.back().ctx.get();
  }
  void report(io::RunRecord& record) {
    for (Stage& s : stages_) record.addGpuUsage(s.name, *s.ctx, s.routes);
  }

 private:
  struct Stage {
    std::string name;
    std::unique_ptr<gpu::Context> ctx;
    std::vector<io::RunRecord::KernelRoute> routes;
  };
  bool profile_;
  std::vector<Stage> stages_;
};

std::string inputKind(const io::FrameSourceInfo& info) {
  switch (info.kind) {
    case io::SourceKind::kVideo:
      return "video";
    case io::SourceKind::kImageList:
      return "list";
    case io::SourceKind::kImageFolder:
      return info.sequential ? "video frames" : "photos";
  }
  return "?";
}

std::string tumTrajectory(const sfm::Reconstruction& rec) {
  std::vector<io::TumPose> poses;
  auto add = [&](double t, const geometry::Pose& pose) {
    io::TumPose p;
    p.t = t;
    p.position = pose.center();
    p.orientation = Eigen::Quaterniond(Eigen::Matrix3d(pose.R.transpose()));
    p.orientation.normalize();
    poses.push_back(p);
  };
  for (const auto& [id, im] : rec.images()) add(rec.keyframes()[id].timestamp, im.pose);
  for (const sfm::LocalizedFrame& f : rec.localized()) add(f.frame->timestamp, f.pose);
  std::stable_sort(poses.begin(), poses.end(),
                   [](const io::TumPose& a, const io::TumPose& b) { return a.t < b.t; });
  return io::formatTumTrajectory(
      poses,
      "camera poses (keyframes and localised frames), camera to world: timestamp tx ty tz qx qy "
      "qz qw",
      6);
}

// The model the dense stage reads: the keyframes of `rec` (bundle adjusted; the localised
// frames are left out), with the camera scaled from the native size to the working frames'
// size (COLMAP's convention scales exactly: pixel centres at half-integers).
io::ColmapModel denseModelOf(const sfm::Reconstruction& rec, int width, int height) {
  io::ColmapModel m = rec.toColmap();
  for (auto it = m.images.begin(); it != m.images.end();)
    it = rec.images().count(static_cast<int>(it->first) - 1) ? std::next(it) : m.images.erase(it);
  for (auto& [id, p] : m.points3d)
    std::erase_if(p.track,
                  [&](const io::ColmapTrackElement& e) { return !m.images.count(e.image_id); });
  for (auto& [id, c] : m.cameras) {
    const double sx = double(width) / c.width, sy = double(height) / c.height;
    std::vector<double>& q = c.params;
    switch (c.model) {
      case io::CameraModelId::kSimplePinhole:
      case io::CameraModelId::kSimpleRadial:
      case io::CameraModelId::kRadial:
        q[0] *= sx, q[1] *= sx, q[2] *= sy;
        break;
      default:  // fx, fy, cx, cy first (PINHOLE, OPENCV, FULL_OPENCV)
        q[0] *= sx, q[1] *= sy, q[2] *= sx, q[3] *= sy;
    }
    c.width = static_cast<std::uint64_t>(width), c.height = static_cast<std::uint64_t>(height);
  }
  return m;
}

// The frames of the input decoded again, in order, as the dense stage asks for them (one
// frame in memory; a frame before the last one asked opens the source again).
class FrameReplay {
 public:
  FrameReplay(fs::path input, const io::FrameSourceOptions& so)
      : input_(std::move(input)), so_(so) {}
  RgbImage frame(int index) {
    if (!source_ || index <= last_) {
      source_ = io::openFrameSource(input_, so_);
      last_ = -1;
    }
    io::Frame f;
    while (source_->next(f)) {
      last_ = f.index;
      if (f.index == index) return std::move(f.rgb);
      if (f.index > index) break;
    }
    throw Error(input_.string() + ": frame " + std::to_string(index) +
                " could not be decoded again for the dense stage");
  }

 private:
  fs::path input_;
  io::FrameSourceOptions so_;
  std::unique_ptr<io::FrameSource> source_;
  int last_ = -1;
};

ModelSummary summarize(const sfm::Reconstruction& rec) {
  ModelSummary m;
  m.images = rec.numImages();
  m.points = rec.numPoints();
  m.observations = rec.numObservations();
  m.meanTrackLength = rec.meanTrackLength();
  m.meanReprojErrorPx = rec.meanReprojectionError() / rec.camera().scale();
  m.firstKeyframe = rec.images().begin()->first;
  m.lastKeyframe = rec.images().rbegin()->first;
  m.cameraParams = rec.camera().toColmap(1).params;
  m.cameraParamNames = sfm::cameraParamNames(rec.camera().model());
  m.localized = static_cast<int>(rec.localized().size());
  return m;
}

// The index of the model with the most images, the first of equal size (models not empty):
// the model the dense stage and the second pass take.
template <class Model, class Images>
size_t largestModel(const std::vector<Model>& models, Images images) {
  size_t best = 0;
  for (size_t i = 1; i < models.size(); ++i)
    if (images(models[i]) > images(models[best])) best = i;
  return best;
}
size_t largestModel(const std::vector<const sfm::Reconstruction*>& models) {
  return largestModel(models, [](const sfm::Reconstruction* m) { return m->numImages(); });
}

// The focal length of a first pass moved further from its start than the bound
// (ReconstructOptions::rerunFocalChange).
bool secondPassDue(const ReconstructSummary& s, const ReconstructOptions& o) {
  const double bound = s.startSelfCalibrated ? o.rerunFocalChange : o.rerunGuessFocalChange;
  return bound > 0 && s.startFocalPx > 0 && s.endFocalPx > 0 &&
         std::abs(s.endFocalPx / s.startFocalPx - 1) > bound;
}

// One pass of the pipeline (reconstruct() makes a second with a refined camera). A video's
// front end records what it produced into `recording` when given; with `recorded` (a first
// pass's recording of the same input) the pass reads that instead of the frames.
ReconstructSummary reconstructOnce(const fs::path& input, const fs::path& outDir,
                                   const ReconstructOptions& options0, io::RunRecord& record,
                                   FrontendRecording* recording = nullptr,
                                   FrontendRecording* recorded = nullptr,
                                   const ReconstructSummary* rival = nullptr);

// The observations a pass's models explain (2D-3D within the mapper's bounds).
std::int64_t observations(const ReconstructSummary& s) {
  std::int64_t n = 0;
  for (const ModelSummary& m : s.models) n += m.observations;
  return n;
}
}  // namespace

ReconstructSummary reconstruct(const fs::path& input, const fs::path& outDir,
                               const ReconstructOptions& options, io::RunRecord& record) {
  // A second pass is possible: the first records its front end's output for it.
  std::unique_ptr<FrontendRecording> recording;
  if (!options.camera.known() && !options.klt && options.rerunReuseMiB > 0 &&
      (options.rerunFocalChange > 0 || options.rerunGuessFocalChange > 0)) {
    recording = std::make_unique<FrontendRecording>();
    recording->maxBytes = static_cast<std::size_t>(options.rerunReuseMiB) << 20;
  }
  ReconstructSummary first = reconstructOnce(input, outDir, options, record, recording.get());
  if (first.models.empty() || !secondPassDue(first, options)) return first;
  if (recording && !recording->usable()) recording.reset();
  record.setCount("rerun_reused_frames",
                  recording ? static_cast<std::int64_t>(recording->frames.size()) : 0);
  record.setMetric("rerun_recording_mib",
                   recording ? static_cast<double>(recording->bytes) / (1 << 20) : 0.0);
  const double start = first.startFocalPx, end = first.endFocalPx;
  // The largest model's camera (native pixels, COLMAP's convention), the second pass's start.
  const ModelSummary& largest =
      first.models[largestModel(first.models, [](const ModelSummary& m) { return m.images; })];
  ReconstructOptions again = options;
  again.camera.params = largest.cameraParams;
  again.camera.refine = true;  // a start, refined as an unknown camera is
  again.mapper.selfCalibrateFocal = false;
  again.overwrite = true;  // the first pass's output, replaced
  if (options.progress)
    std::fprintf(stderr,
                 "vidmap: the focal length moved from %.1f to %.1f px (working): reconstructing "
                 "again from the camera %s\n",
                 start, end, again.camera.toString().c_str());
  // The stages of both passes add up in the record; its options and counts are the second's
  // (the first's are kept here for a second pass that is discarded).
  record.setMetric("rerun_focal_px", end);
  const auto firstOptions = record.options();
  const auto firstCounts = record.counts();
  const auto firstMetrics = record.metrics();
  ReconstructSummary second;
  try {
    second = reconstructOnce(input, outDir, again, record, nullptr, recording.get(), &first);
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    // The first pass's output stays in place: it is the result.
    std::fprintf(stderr, "vidmap: warning: the second pass failed (%s); the first pass is kept\n",
                 e.what());
    return first;
  }
  if (second.rerunDiscarded) {
    // The first pass's output stays, and its run.json is written again: its options, counts
    // and metrics, the stages of both passes (the second's time was spent too) and what the
    // second pass found.
    for (const auto& [k, v] : firstOptions) record.setOption(k, v);
    for (const auto& [k, v] : firstCounts) record.setCount(k, v);
    for (const auto& [k, v] : firstMetrics) record.setMetric(k, v);
    record.setCount("rerun_discarded", 1);
    record.setCount("rerun_first_pass_observations", observations(first));
    record.setCount("rerun_second_pass_observations", observations(second));
    record.setMetric("rerun_second_pass_seconds", second.seconds);
    try {
      record.write(outDir / "run.json");
    } catch (const Error& e) {
      std::fprintf(stderr, "vidmap: warning: run.json keeps the first pass alone: %s\n", e.what());
    }
  }
  ReconstructSummary& kept = second.rerunDiscarded ? first : second;
  kept.rerunDiscarded = second.rerunDiscarded;
  kept.firstPassObservations = observations(first);
  kept.secondPassObservations = observations(second);
  kept.startFocalPx = start;
  kept.endFocalPx = end;
  kept.rerunFocalPx = end;
  kept.seconds = first.seconds + second.seconds;
  return kept;
}

namespace {

ReconstructSummary reconstructOnce(const fs::path& input, const fs::path& outDir,
                                   const ReconstructOptions& options0, io::RunRecord& record,
                                   FrontendRecording* recording, FrontendRecording* recorded,
                                   const ReconstructSummary* rival) {
  const auto t0 = std::chrono::steady_clock::now();
  ReconstructOptions options = options0;
  options.check();
  // The output folder is checked before any work, so a wrong OUTDIR fails at once. A TUM
  // list's frames lie beside it: its folder counts as the input.
  std::vector<fs::path> inputs{input};
  if (input.extension() == ".txt") inputs.push_back(input.parent_path());
  OutputFolder out(outDir, options.overwrite, inputs);
  // A signal (Ctrl-C) ends the run at the next frame; `out` then removes its temporary folder.
  const std::string untouched = "; nothing was written (" + out.dir().string() +
                                (fs::exists(out.dir()) ? " is as it was)" : " was not created)");

  // Devices.
  features::Backend fb = features::Backend::kAuto;
  ba::BackendType bb = ba::cudaBackendAvailable() ? ba::BackendType::kCuda : ba::BackendType::kCpu;
  if (options.device == Device::kCpu) {
    fb = features::Backend::kCpu;
    bb = ba::BackendType::kCpu;
  } else if (options.device == Device::kCuda) {
    if (!features::cudaDeviceAvailable())
      throw Error("--device cuda: this build has no CUDA backend or no CUDA device is present");
    fb = features::Backend::kCuda;
    bb = ba::cudaBackendAvailable() ? ba::BackendType::kCuda : ba::BackendType::kCpu;
  }
  options.frontend.sift.backend = fb;
  options.frontend.match.backend = fb;
  options.mapper.backend = bb;
  // One GPU context per stage, so the run record holds each stage's kernels and peak memory.
  StageContexts gpuStages(options.profileKernels);
  const gpu::Context* siftContext = nullptr;
  const gpu::Context* matchContext = nullptr;
  if (fb == features::Backend::kCuda ||
      (fb == features::Backend::kAuto && features::cudaDeviceAvailable())) {
    siftContext = gpuStages.add("sift");
    // Plain and guided matching share the resident descriptors; the guided kernels
    // (match_guided_*) are timed in guided_match, whose host time is theirs.
    matchContext = gpuStages.add("match", {{"match_guided_", "guided_match"}});
  }
  if (bb == ba::BackendType::kCuda) {
    options.mapper.localBaContext = gpuStages.add("mapper.local_ba");
    options.mapper.globalBaContext = gpuStages.add("mapper.global_ba");
  }

  // The start's parts (pipeline.startup.*): where the time before the first frame goes. The
  // first part, from t0: the output folder's checks and the GPU stages' contexts.
  auto lap = t0;
  const auto startupPart = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    record.addStage(name, std::chrono::duration<double, std::milli>(now - lap).count());
    lap = now;
  };
  startupPart("pipeline.startup.devices");

  // Frames.
  io::FrameSourceOptions so;
  so.fps = options.fps;
  so.allFrames = options.allFrames;
  so.width = options.width == kAutoWidth ? kVideoWidth : options.width;
  so.skipBadFrames = options.skipBadFrames;
  so.folder = options.folder;
  so.folderFrameRate = options.folderFrameRate;
  std::unique_ptr<io::FrameSource> source;
  {
    auto t = record.stage("decode");
    source = io::openFrameSource(input, so);
    const io::FrameSourceInfo& first = source->info();
    const bool photos = first.kind == io::SourceKind::kImageFolder && !first.sequential;
    const int width = workingWidth(options.width, photos, first.nativeWidth);
    if (width != so.width) {
      so.width = width;
      source = io::openFrameSource(input, so);
    }
  }
  const io::FrameSourceInfo info = source->info();
  startupPart("pipeline.startup.input");
  options.frontend.photos = info.kind == io::SourceKind::kImageFolder && !info.sequential;
  options.mapper.photos = options.frontend.photos;
  // Frames sampled densely in time (a video or list at 10 per second or more: --all-frames).
  const bool denseInTime = sampledDensely(info);
  const bool kltAuto = options.kltAuto && !options.klt;
  if (kltAuto) {
    // KLT tracks follow a dense sequence from frame to frame, and their gate keeps the
    // keyframes that move: on TUM fr1-rpy at all frames 0.62x of the CPU time of descriptors
    // alone, with the rotation error 1.59 against 2.06 deg. Sampled sparser (the default 4 fps)
    // the gate keeps nearly every frame and adds the tracking (docs/benchmarks.md, "The KLT
    // gate's turn bound on every input" and "KLT by default on dense samples").
    options.klt = denseInTime;
    options.kltSource.matches = false;
  }
  // The self-calibration's calibrated profile (sfm::profileFocal) with the KLT tracks only,
  // whose gate keeps keyframes far apart in angle. On the descriptor gate's keyframes of a slow
  // pan (2-4 degrees a pair) the focal length trades against the translation, and the profile
  // broke a held-out pan that the homographies' estimate holds (docs/benchmarks.md, "The
  // self-calibration's bias on a pan walked sideways, at its source").
  if (options.klt && options.mapper.selfCalibrationProfileRange == 0)
    options.mapper.selfCalibrationProfileRange = kKltSelfCalibrationProfileRange;
  options.frontend.verbose = options.mapper.verbose;
  if (options.autoFirstOctave) {
    // Frames sampled densely in time (10 per second or more) share most of their view with
    // their neighbours, and the features of the frame at its own size suffice (a third of
    // them, a third of the time). Sparser samples (the default 4 fps) and small frames take
    // the doubled image, as COLMAP does. A folder of video frames is a video. Photos take it up
    // to their default width (kPhotoWidth): a photo set's few wide-baseline views are as
    // accurate as their keypoints, and at 1280 px the doubled image halves the fountain's
    // camera error once the principal point is refined, at twice the SIFT time
    // (docs/benchmarks.md, "Photo sets: fountain every second and the dino ring").
    const int doubledUpTo = denseInTime ? 639 : options.frontend.photos ? kPhotoWidth : 1000;
    options.frontend.sift.firstOctave = info.width <= doubledUpTo ? -1 : 0;
  }
  const sfm::Camera camera0 = sfm::Camera::fromSpec(options.camera, info.nativeWidth,
                                                    info.nativeHeight, info.width, info.height);

  // Every user-facing option under its field list's name (the CLI flags and the Python keywords
  // come from the same list, so the record names what the user typed), then what the input
  // resolved: the working size and the first octave chosen by "auto".
  forEachReconstructField(options, [&](const FieldInfo& f, auto&& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, TextField>)
      record.setOption(f.path(), value.get());
    else
      record.setOption(f.path(), value);
  });
  if (kltAuto) record.setOption("klt", "auto");  // what was asked; klt_used: what it chose
  record.setOption("input", input.string());
  record.setOption("input_kind", inputKind(info));
  record.setOption("input_kind_reason", info.reason);
  record.setOption("output", outDir.string());
  record.setOption("working_width", info.width);
  record.setOption("working_height", info.height);
  record.setOption("native_width", info.nativeWidth);
  record.setOption("native_height", info.nativeHeight);
  record.setOption("frontend.sift_first_octave_used", options.frontend.sift.firstOctave);
  record.setOption("frontend.photos", options.frontend.photos);
  // A guided matching made again on the mapper's thread (pipelined, after the camera changed)
  // runs on a context of its own: the front end's thread keeps the match context.
  const int pipelineDepth = options.pipelineDepth != kAutoPipelineDepth ? options.pipelineDepth
                            : siftContext || vidmap::maxThreads() >= 2  ? 2
                                                                        : 0;
  record.setOption("pipeline_depth_used", pipelineDepth);
  const gpu::Context* recheckContext =
      matchContext && pipelineDepth > 0 ? gpuStages.add("match.recheck") : nullptr;
  Frontend frontend(options.frontend, record, siftContext, matchContext, recheckContext);
  sfm::Mapper mapper(camera0, options.mapper);
  std::unique_ptr<KltSource> klt;
  if (options.klt) {
    KltSourceOptions ko = options.kltSource;
    ko.cuda = frontend.siftBackend() == features::Backend::kCuda;
    klt = std::make_unique<KltSource>(ko);
    frontend.addSource(klt.get());
    // The outliers of pair verification end the tracks that gave them (docs/architecture.md, "KLT:
    // checks and ends").
    mapper.setOutlierSink([src = klt.get()](const sfm::PairMatches& o) { src->onOutliers(o); });
    record.setOption("klt_source.join_radius_px", ko.joinRadiusPx);
    record.setOption("klt_source.fill_in", ko.fillIn);
    record.setOption("klt_source.capacity", ko.capacity);
    record.setOption("klt_source.matches", ko.matches);
    record.setOption("klt_source.cuda", ko.cuda);
  }
  startupPart("pipeline.startup.stages");
  ProgressBar bar(info.frameCount, options.progress);
  // A photo set of an unknown camera keeps the mapper's input for a focal sweep (all of it:
  // photo sets are small); so does a video under the KLT gate with the camera unknown, for a
  // sweep near the self-calibrated focal length when the gate kept few keyframes, up to
  // rerunReuseMiB (pipeline/focal_sweep.h).
  std::unique_ptr<MapperInput> replay;
  bool replayFull = false;
  const bool photoReplay = options.frontend.photos && !options.camera.known() &&
                           options.checkFocal && options.focalSweep.enabled;
  const bool videoReplay = !options.frontend.photos && options.klt && !options.camera.known() &&
                           options.focalSweep.enabled && !options.focalSweep.videoFactors.empty() &&
                           options.rerunReuseMiB > 0;
  if (photoReplay || videoReplay) {
    replay = std::make_unique<MapperInput>();
    recordMapperInput(mapper, replay.get(),
                      videoReplay ? static_cast<std::size_t>(options.rerunReuseMiB) << 20
                                  : std::numeric_limits<std::size_t>::max(),
                      &replayFull);
  }

  ReconstructSummary sum;
  sum.outDir = out.dir();
  sum.inputKind = inputKind(info);
  sum.inputKindReason = info.reason;
  sum.siftBackend = frontend.siftBackend() == features::Backend::kCuda ? "cuda" : "cpu";
  sum.baBackend = bb == ba::BackendType::kCuda ? "cuda" : "cpu";
  int keyframesMapped = 0;
  auto status = [&] {
    int reg = 0;
    for (const sfm::Reconstruction* m : mapper.models()) reg += m->numImages();
    std::ostringstream s;
    s << keyframesMapped << " keyframes, " << reg << " registered, " << mapper.models().size()
      << " model(s)";
    return s.str();
  };
  // Decode, front end and mapper, the front end running ahead of the mapper by up to
  // pipelineDepth keyframes (pipeline/frontend_worker.h: the same model as serial).
  // A second pass over a first's recording (reconstruct()) reads no frames.
  FrontendLoopOptions lo;
  lo.depth = pipelineDepth;
  lo.sideThreads = options.pipelineSideThreads;
  lo.verifyAhead = options.verifyAhead;
  lo.outliersFeedBack = klt != nullptr;
  lo.outlierLag = options.kltSource.outlierLag;
  lo.recording = options.frontend.photos || klt ? nullptr : recording;
  // A second pass's loop: the same threads and verification ahead, nothing recorded (below).
  FrontendLoopOptions replayLoop = lo;
  replayLoop.outliersFeedBack = false;
  replayLoop.recording = nullptr;
  const auto checkpoint = [&](int frames) {
    throwIfInterrupted("at frame " + std::to_string(frames) + untouched);
  };
  const auto afterFrame = [&](int frames, int keyframes) {
    keyframesMapped = keyframes;
    bar.update(frames, status());
    if (options.onProgress) options.onProgress(frames, info.frameCount, status());
  };
  // A second pass without KLT tracks replays the first's recording and reads no frames.
  const bool replays = recorded && !klt;
  // Decoding depends on nothing the pipeline computes: a thread of its own takes it off the
  // front end's (docs/benchmarks.md, "Decoding ahead"). A replay reads none.
  const int decodeAhead = options.decodeAhead == kAutoDecodeAhead ? 4 : options.decodeAhead;
  record.setOption("decode_ahead_used", replays ? 0 : decodeAhead);
  if (decodeAhead > 0 && !replays)
    source = std::make_unique<io::PrefetchSource>(std::move(source), decodeAhead, &record);
  record.addStage(
      "pipeline.startup",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  sum.frames =
      replays
          ? runRecordedLoop(*recorded, frontend, mapper, record, checkpoint, afterFrame, replayLoop)
          : runFrontendLoop(*source, frontend, mapper, record, lo, checkpoint, afterFrame);
  throwIfInterrupted("after " + std::to_string(sum.frames) + " frames" + untouched);
  {
    auto t = record.stage("mapper");
    mapper.finish();
  }
  throwIfInterrupted("after mapping" + untouched);
  bar.update(sum.frames, status(), true);
  bar.finish();

  // The models' files (sparse/N) into the temporary output folder.
  const auto writeModels = [&](const std::vector<const sfm::Reconstruction*>& models) {
    auto t = record.stage("write");
    for (size_t i = 0; i < models.size(); ++i) {
      const sfm::Reconstruction& rec = *models[i];
      const fs::path dir = out.tmp() / "sparse" / std::to_string(i);
      fs::create_directories(dir);
      const io::ColmapModel cm = rec.toColmap();
      // The text model (the largest part: numbers as text) beside the rest; both read only.
      auto text = std::async(std::launch::async,
                             [&] { io::writeColmapModel(cm, dir, io::ColmapFormat::kText); });
      io::writeColmapModel(cm, dir, io::ColmapFormat::kBinary);
      io::writePly(dir / "points3D.ply", rec.toPly());
      io::writeTextAtomically(dir / "trajectory.txt", tumTrajectory(rec));
      text.get();
    }
  };
  // A video's models are the mapper's whatever the focal check finds (no sweep, no principal
  // point refined): their files are written on a thread of their own while it runs. Both read
  // the models only; the write is joined before the summary (and, on an error, before `out`
  // removes the temporary folder: `written` goes first).
  const bool videoSweep =
      replay && !options.frontend.photos && !replayFull && !mapper.models().empty() &&
      mapper.stats().selfCalibratedFocal > 0 &&
      frontend.stats().keyframes <= options.focalSweep.videoMaxKeyframeFraction * sum.frames;
  const bool refinesModels = (replay != nullptr && (options.frontend.photos || videoSweep)) ||
                             (options.frontend.photos && options.principalPoint.enabled &&
                              options.checkFocal && !options.camera.known());
  std::future<void> written;
  if (!refinesModels) written = std::async(std::launch::async, writeModels, mapper.models());

  // Whether each model determines an unknown focal length (pipeline/focal_check.h); a photo set
  // whose models are suspect, or none, is mapped again from other starting focal lengths and
  // the best run kept (pipeline/focal_sweep.h).
  // A video's unknown camera: where its focal length started and where the largest model
  // ended (reconstruct() decides on a second pass from them).
  if (!options.camera.known() && !options.frontend.photos && !mapper.models().empty()) {
    const std::vector<const sfm::Reconstruction*> ms = mapper.models();
    const sfm::Reconstruction* largest = ms[largestModel(ms)];
    const double selfCalibrated = mapper.stats().selfCalibratedFocal;
    sum.startSelfCalibrated = selfCalibrated > 0;
    sum.startFocalPx = selfCalibrated > 0 ? selfCalibrated : camera0.params()[0];
    sum.endFocalPx = largest->camera().params()[0];
    record.setMetric("start_focal_px", sum.startFocalPx);
    record.setMetric("end_focal_px", sum.endFocalPx);
  }
  FocalCheckOptions fco = options.focalCheck;
  fco.backend = bb;
  std::vector<FocalCheck> focal(mapper.models().size());
  // Also when a second pass is due: its output replaces this one only when it explains more
  // (reconstruct()), and a first pass that is kept carries its own check and warnings.
  if (options.checkFocal && (!options.camera.known() || options.camera.refine)) {
    auto t = record.stage("focal_check");
    for (size_t i = 0; i < focal.size(); ++i) focal[i] = checkFocal(*mapper.models()[i], fco);
  }
  throwIfInterrupted("after the focal length's check" + untouched);
  FocalSweep sweep;
  if (videoSweep) {
    auto t = record.stage("focal_sweep");
    sfm::Camera start = camera0;
    auto& p = start.mutableParams();
    p[0] = mapper.stats().selfCalibratedFocal;
    if (modelNumFocals(start.model()) > 1) p[1] = p[0];
    sweep = sweepFocal(*replay, start, options.mapper, scoreTrial(mapper, focal), fco,
                       options.focalSweep.videoFactors, options.focalSweep.videoNearMost);
    if (sweep.mapper) focal = sweep.focal;
    sum.focalSweep = sweep.trials;
    throwIfInterrupted("after the focal sweep" + untouched);
  } else if (replay && options.frontend.photos &&
             (focal.empty() || std::any_of(focal.begin(), focal.end(),
                                           [](const FocalCheck& c) { return c.suspect; }))) {
    auto t = record.stage("focal_sweep");
    sweep = sweepFocal(*replay, camera0, options.mapper, scoreTrial(mapper, focal), fco,
                       options.focalSweep);
    if (sweep.mapper) focal = sweep.focal;
    sum.focalSweep = sweep.trials;
    throwIfInterrupted("after the focal sweep" + untouched);
  }
  const sfm::Mapper& mapped = sweep.mapper ? *sweep.mapper : mapper;

  const FrontendStats& fst = frontend.stats();
  const sfm::MapperStats& ms = mapped.stats();
  sum.keyframes = fst.keyframes;
  sum.featureless = fst.featureless;
  sum.dropped = fst.dropped;
  sum.pairs = ms.pairsVerified;
  sum.matches = ms.pairMatches;
  sum.verifiedMatches = ms.verifiedMatches;
  sum.camera = options.camera.toString();
  sum.modelsStarted = ms.modelsStarted;
  sum.modelsMerged = ms.modelsMerged;
  sum.imagesAbsorbed = ms.imagesAbsorbed;
  for (const sfm::UnjoinedKeyframe& u : ms.unjoined)
    sum.unjoined.push_back(u.name + " (" + u.reason + ")");

  // Damaged input: reported, or under --strict refused.
  const io::SourceReport damage = replays ? recorded->input : source->report();
  sum.inputDamage = damage.describe();
  record.setCount("input.decode_errors", damage.decodeErrors);
  record.setCount("input.ended_early", damage.endedEarly ? 1 : 0);
  record.setCount("input.frames_skipped", static_cast<std::int64_t>(damage.skipped.size()));
  if (damage.framesExpected > 0) record.setCount("input.frames_expected", damage.framesExpected);
  if (damage.damaged()) record.setOption("input_damage", sum.inputDamage);
  if (info.kind == io::SourceKind::kVideo) {
    record.setCount("input.frames_decoded", damage.framesDecoded);
    record.setMetric("input.seconds_expected", damage.secondsExpected);
    record.setMetric("input.seconds_decoded", damage.secondsDecoded);
  }
  if (damage.damaged() && !options.strict && options.progress)  // before the mapper's verdict
    std::fprintf(stderr, "vidmap: warning: damaged input: %s\n", sum.inputDamage.c_str());
  if (damage.damaged() && options.strict)
    throw Error(input.string() + " is damaged: " + sum.inputDamage +
                " (--strict: nothing written)");

  // Bad input, in the order a user can act on.
  if (sum.frames == 0) throw Error(input.string() + ": no frames");
  if (fst.keyframes == 0)
    throw Error(input.string() + ": no features in any of its " + std::to_string(sum.frames) +
                " sampled frames (a black, blank or textureless video?)");
  if (fst.keyframes < 2)
    throw Error(input.string() + ": only one keyframe in " + std::to_string(sum.frames) +
                " sampled frames; a reconstruction needs at least two views with motion between "
                "them (" +
                (options.frontend.photos
                     ? std::string("a photo set needs at least two photos with features)")
                     : std::string("the video is too short or the camera does not move; try a "
                                   "higher --fps)")));
  std::vector<const sfm::Reconstruction*> models = mapped.models();
  if (models.empty())
    throw Error(input.string() + ": no model could be started from " +
                std::to_string(fst.keyframes) + " keyframes (" + std::to_string(ms.pairsVerified) +
                " verified pairs): no pair of views has enough baseline (a static camera, a "
                "pure rotation, or too little overlap between frames)");

  // A photo set's principal point, refined in the models that determine it
  // (pipeline/principal_point.h): the refined copies replace the mapper's models in the outputs.
  std::vector<PrincipalPointFit> pp(models.size());
  std::vector<std::unique_ptr<sfm::Reconstruction>> refined;
  if (options.frontend.photos && options.principalPoint.enabled && options.checkFocal &&
      !options.camera.known()) {
    auto t = record.stage("principal_point");
    PrincipalPointOptions po = options.principalPoint;
    po.backend = bb;
    for (size_t i = 0; i < models.size(); ++i) {
      auto copy = std::make_unique<sfm::Reconstruction>(*models[i]);
      pp[i] = refinePrincipalPoint(*copy, focal[i], po);
      if (!pp[i].refined) continue;
      models[i] = copy.get();
      refined.push_back(std::move(copy));
    }
  }
  throwIfInterrupted("after the principal point's refinement" + untouched);

  // Outputs. A write failure (a full disk) names the output folder, not the hidden temporary
  // one the files go to first.
  const auto namingOutput = [&](const Error& e) {
    std::string m = e.what();
    const std::string tmp = out.tmp().string(), dir = out.dir().string();
    for (size_t at = m.find(tmp); at != std::string::npos; at = m.find(tmp, at + dir.size()))
      m.replace(at, tmp.size(), dir);
    return Error(m);
  };
  try {
    if (written.valid())
      written.get();
    else
      writeModels(models);
    for (size_t i = 0; i < models.size(); ++i) {
      const sfm::Reconstruction& rec = *models[i];
      sum.models.push_back(summarize(rec));
      sum.models.back().focal = focal[i];
      sum.models.back().principalPoint = pp[i];
      sum.registered += rec.numImages();
      sum.localized += static_cast<int>(rec.localized().size());
    }
  } catch (const Error& e) {
    throw namingOutput(e);
  } catch (const fs::filesystem_error& e) {
    throw namingOutput(Error(e.what()));
  }

  // Dense stereo on the largest model (the first of equal size).
  if (options.dense) {
    throwIfInterrupted("before the dense stage" + untouched);
    const size_t best = largestModel(models);
    const sfm::Reconstruction& rec = *models[best];
    const io::ColmapModel cm = denseModelOf(rec, info.width, info.height);
    DenseOptions d = options.mvs;
    d.patchMatch.backend = options.device == Device::kCpu    ? mvs::Backend::kCpu
                           : options.device == Device::kCuda ? mvs::Backend::kCuda
                                                             : mvs::Backend::kAuto;
    FrameReplay replay(input, so);
    record.setOption("mvs.model", static_cast<std::int64_t>(best));
    record.setOption("mvs.max_image_size", d.workspace.maxImageSize);
    record.setOption("mvs.max_sources", d.workspace.maxSources);
    record.setOption("mvs.photometric_iterations", d.patchMatch.photometricIterations);
    record.setOption("mvs.geometric_iterations", d.patchMatch.geometricIterations);
    record.setOption("mvs.top_k", d.patchMatch.topK);
    record.setOption("mvs.max_gpu_memory", d.patchMatch.maxGpuMemory);
    record.setOption("mvs.multi_resolution", d.patchMatch.multiResolution);
    try {
      sum.denseSummary = runDenseStage(
          cm,
          [&](const io::ColmapImage& im) {
            throwIfInterrupted("in the dense stage" + untouched);
            return replay.frame(rec.keyframes()[static_cast<int>(im.id) - 1].frameIndex);
          },
          d, out.tmp() / "dense", record);
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      throw namingOutput(Error("dense stage on sparse/" + std::to_string(best) + ": " + e.what() +
                               untouched + "; without --dense the sparse model is written"));
    }
    sum.dense = true;
    sum.denseModel = static_cast<int>(best);
  }

  // The run record: stages of the mapper from its own clocks, counts and results.
  ms.writeTo(record);
  fst.writeTo(record);
  sum.siftCalls = fst.siftCalls;
  sum.kltAuto = kltAuto;
  record.setOption("klt_used", kltModeName(options.klt, options.kltSource.matches));
  if (klt) {
    klt->stats().writeTo(record);
    sum.klt = true;
    sum.kltGateOnly = !options.kltSource.matches;
    sum.kltMatches = fst.sourceMatches;
    sum.kltOnlyMatches = fst.sourceOnlyMatches;
    sum.kltMeanTrackKeyframes = klt->stats().meanTrackKeyframes();
  }
  record.setCount("frames", sum.frames);
  record.setCount("models", static_cast<std::int64_t>(models.size()));
  record.setCount("registered_keyframes", sum.registered);
  record.setCount("localized_frames", sum.localized);
  record.setMetric("posed_fraction_of_frames",
                   static_cast<double>(sum.registered + sum.localized) / sum.frames);
  std::int64_t points = 0, obs = 0;
  double errSum = 0;
  for (const ModelSummary& m : sum.models) {
    points += m.points;
    obs += m.observations;
    errSum += m.meanReprojErrorPx * static_cast<double>(m.observations);
  }
  record.setCount("landmarks", points);
  record.setCount("observations", obs);
  record.setMetric("mean_track_length", points ? static_cast<double>(obs) / points : 0.0);
  record.setMetric("mean_reprojection_error_px", obs ? errSum / obs : 0.0);
  record.setMetric("registered_fraction", static_cast<double>(sum.registered) / fst.keyframes);
  for (size_t i = 0; i < sum.models.size(); ++i) {
    const std::string k = "model_" + std::to_string(i) + "_";
    record.setCount(k + "images", sum.models[i].images);
    record.setCount(k + "points", sum.models[i].points);
    record.setMetric(k + "refined_focal_px", sum.models[i].cameraParams.at(0));
    const FocalCheck& fc = sum.models[i].focal;
    if (fc.ran) {
      record.setMetric(k + "focal_rel_uncertainty", std::min(fc.relUncertainty, kUncertaintyCap));
      record.setMetric(k + "turn_deg", fc.turnDeg);
      record.setCount(k + "focal_suspect", fc.suspect ? 1 : 0);
      record.setCount(k + "focal_check_iterations", fc.iterations);
      sum.focalUndetermined = sum.focalUndetermined || fc.undetermined;
      sum.focalRelUncertainty = std::max(sum.focalRelUncertainty, fc.relUncertainty);
      if (fc.suspect) {
        sum.focalSuspectModels.push_back(static_cast<int>(i));
        sum.focalSuspectTurnDeg = std::max(sum.focalSuspectTurnDeg, fc.turnDeg);
      }
    }
    const PrincipalPointFit& pf = sum.models[i].principalPoint;
    if (pf.ran) {
      // Native pixels, as the written cameras; the test's numbers and the verdict.
      const double native = 1 / camera0.scale();
      record.setCount(k + "principal_point_refined", pf.refined ? 1 : 0);
      if (!pf.refined) record.setOption(k + "principal_point_kept_because", pf.reason);
      record.setMetric(k + "principal_point_shift_px", pf.shiftPx * native);
      record.setMetric(k + "principal_point_sigma_px",
                       std::min(pf.sigmaPx * native, kUncertaintyCap));
      record.setMetric(k + "principal_point_delta_chi2", pf.deltaChi2);
    }
  }
  // The focal length as self-calibrated from the first pairs (before any adjustment; 0: the
  // pairs did not determine it) and as refined (model 0's final camera), both in native pixels
  // (COLMAP's convention, as the written cameras); and the one flag the warnings read.
  record.setMetric("self_calibrated_focal_px",
                   mapper.stats().selfCalibratedFocal / camera0.scale());  // the first run's
  record.setMetric("self_calibrated_homography_focal_px",
                   mapper.stats().homographyFocal / camera0.scale());
  record.setCount("self_calibration_profiled", mapper.stats().selfCalibrationProfiled ? 1 : 0);
  record.setMetric("refined_focal_px", sum.models.at(0).cameraParams.at(0));
  record.setCount(io::kFocalUndeterminedCount, sum.focalUndetermined ? 1 : 0);
  for (size_t i = 0; i < sum.focalSweep.size(); ++i) {
    const FocalSweepTrial& t = sum.focalSweep[i];
    const std::string k = "focal_sweep_" + std::to_string(i) + "_";
    record.setMetric(k + "start_focal_px", t.startFocalPx / camera0.scale());
    record.setCount(k + "registered", t.registered);
    record.setCount(k + "observations", t.observations);
    record.setCount(k + "suspect_models", t.suspect);
    record.setCount(k + "chosen", t.chosen ? 1 : 0);
  }
  record.setCount("focal_sweep_runs", static_cast<std::int64_t>(sum.focalSweep.size()));
  record.setCount(io::kFocalSuspectCount, static_cast<std::int64_t>(sum.focalSuspectModels.size()));
  record.setMetric(io::kFocalTurnMetric, sum.focalSuspectTurnDeg);
  if (sum.focalRelUncertainty > 0)
    record.setMetric(io::kFocalRelUncertaintyMetric,
                     std::min(sum.focalRelUncertainty, kUncertaintyCap));
  gpuStages.report(record);
  record.setOption("profile_kernels", options.profileKernels);
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rival) {  // a second pass (written only when kept: below)
    record.setCount("rerun_first_pass_observations", observations(*rival));
    record.setCount("rerun_second_pass_observations", observations(sum));
  }
  try {
    record.write(out.tmp() / "run.json");
  } catch (const Error& e) {
    throw namingOutput(e);
  }
#if defined(VIDMAP_HAVE_REPORT)
  // The report is a view of what is written; a failure to draw it loses no result.
  try {
    report::ReportOptions ro;
    ro.groundTruth = options.groundTruth;
    report::writeReport(out.tmp(), ro);
    sum.report = out.dir() / "report.html";
  } catch (const Error& e) {
    std::fprintf(stderr, "vidmap: warning: no report.html: %s\n", e.what());
  }
#endif
  throwIfInterrupted("before the output was moved into place" + untouched);
  // A second pass replaces the first's output only when its models explain at least as many
  // observations: a start that misleads the first registrations explains fewer of the matches
  // (the rule of pipeline/focal_sweep.h). Its start is the first's refined camera, and yet on
  // fr1-desk at 4 fps from its second frame it built two models with the focal length run
  // away to 9804 and 5904 px where the first's single model was 25 mm from the truth
  // (docs/benchmarks.md, "The second pass kept only when it explains more").
  if (rival && observations(sum) < observations(*rival)) {
    sum.rerunDiscarded = true;
    if (options.progress)
      std::fprintf(stderr,
                   "vidmap: the second pass explains fewer observations (%lld against %lld): "
                   "the first pass's output is kept\n",
                   static_cast<long long>(observations(sum)),
                   static_cast<long long>(observations(*rival)));
    return sum;  // `out` removes its temporary folder
  }
  out.commit();
  sum.notes = out.notes();
  return sum;
}

}  // namespace

std::string formatSummary(const ReconstructSummary& s) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(2);
  o << "reconstructed " << s.registered << " of " << s.keyframes << " keyframes (" << s.frames
    << " sampled frames, " << s.dropped << " dropped by the keyframe gate";
  if (s.featureless) o << ", " << s.featureless << " without features";
  o << ") into " << s.models.size() << (s.models.size() == 1 ? " model" : " models") << " in "
    << s.seconds << " s (SIFT on " << s.siftBackend << ", BA on " << s.baBackend << ")\n";
  if (!s.inputDamage.empty()) o << "  warning: damaged input: " << s.inputDamage << "\n";
  if (!s.unjoined.empty()) {
    o << "  not joined (last refusal; run.json unjoined_keyframes):";
    for (const std::string& u : s.unjoined) o << ' ' << u;
    o << '\n';
  }
  if (s.dropped)
    o << "  " << s.localized << " of the " << s.dropped
      << " dropped frames localised by PnP (poses for " << s.registered + s.localized << " of "
      << s.frames << " frames)\n";
  if (s.modelsMerged)
    o << "  " << s.modelsMerged << (s.modelsMerged == 1 ? " model" : " models")
      << " merged into another (" << s.modelsStarted << " started, " << s.imagesAbsorbed
      << " keyframes absorbed by PnP)\n";
  if (s.inputKind == "video frames" || s.inputKind == "photos")
    o << "  input: a folder read as " << s.inputKind << " (" << s.inputKindReason
      << (s.inputKind == "photos" ? "; --sequential: read as a video"
                                  : "; --photos: read as photos")
      << ")\n";
  o << "  pairs: " << s.pairs << " verified, " << s.verifiedMatches << " of " << s.matches
    << " matches kept\n";
  if (s.kltAuto && !s.klt)
    o << "  klt: off (auto: frames sampled below " << static_cast<int>(kDenseFps)
      << " per second, or photos; --klt gate tracks them)\n";
  if (s.klt && s.kltGateOnly)
    o << "  klt: " << (s.kltAuto ? "auto, frames sampled densely: " : "")
      << "the tracks drove the keyframe gate (no track matches), tracks joined "
      << s.kltMeanTrackKeyframes << " keyframes on average; SIFT on " << s.siftCalls << " of "
      << s.frames << " frames\n";
  else if (s.klt)
    o << "  klt: " << s.kltMatches << " track matches (" << s.kltOnlyMatches
      << " not found by descriptors), tracks joined " << s.kltMeanTrackKeyframes
      << " keyframes on average; SIFT on " << s.siftCalls << " of " << s.frames << " frames\n";
  for (size_t i = 0; i < s.models.size(); ++i) {
    const ModelSummary& m = s.models[i];
    o << "  sparse/" << i << ": " << m.images << " images (keyframes " << m.firstKeyframe << "-"
      << m.lastKeyframe << "), " << m.points << " points, mean track length " << m.meanTrackLength
      << ", mean reprojection error " << m.meanReprojErrorPx << " px\n";
    o << "    camera (COLMAP's convention, native pixels):";
    o.precision(4);
    for (size_t j = 0; j < m.cameraParams.size(); ++j)
      o << ' ' << (j < m.cameraParamNames.size() ? m.cameraParamNames[j] + "=" : "")
        << m.cameraParams[j];
    o.precision(2);
    o << '\n';
  }
  if (s.rerunFocalPx > 0) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "  made twice: the focal length moved from %.1f to %.1f px (working), and the "
                  "second pass started from the first's camera\n",
                  s.startFocalPx, s.rerunFocalPx);
    o << buf;
    std::snprintf(buf, sizeof buf,
                  "    observations explained: first pass %lld, second %lld; the %s is kept\n",
                  static_cast<long long>(s.firstPassObservations),
                  static_cast<long long>(s.secondPassObservations),
                  s.rerunDiscarded ? "first" : "second");
    o << buf;
  }
  if (!s.focalSweep.empty()) {
    o << "  focal sweep (the mapper again from other starting focal lengths, working px):";
    for (const FocalSweepTrial& t : s.focalSweep)
      o << ' ' << t.startFocalPx << (t.chosen ? " (kept)" : "") << ": " << t.registered
        << " images, " << t.observations << " observations, " << t.meanErrorPx << " px, "
        << t.suspect << " suspect;";
    o << '\n';
  }
  if (s.focalUndetermined && !s.models.empty()) {
    o << "  warning: "
      << io::focalUndeterminedWarning(s.focalRelUncertainty, s.focalSuspectTurnDeg);
    if (!s.focalSuspectModels.empty()) {
      o << " (suspect:";
      for (int i : s.focalSuspectModels) o << " sparse/" << i;
      o << ')';
    }
    o << "\n";
  }
  if (s.dense) {
    o << "  sparse/" << s.denseModel << " ";
    o << formatDenseSummary(s.denseSummary, s.outDir / "dense");
  }
  for (const std::string& n : s.notes) o << "  note: " << n << '\n';
  o << "  output: " << s.outDir.string() << " (sparse/N COLMAP models, points3D.ply, run.json)\n";
  if (!s.report.empty()) o << "  report: " << s.report.string() << "\n";
  if (!s.models.empty())
    o << "  in COLMAP: colmap gui --import_path " << (s.outDir / "sparse" / "0").string()
      << " (or File > Import model)\n";
  return o.str();
}

}  // namespace vidmap::pipeline
