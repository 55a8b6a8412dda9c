// `vidmap track INPUT --out tracks.csv|json`: KLT tracks of a video or an image sequence
// (klt::Tracker; docs/architecture.md). Writes every track at every frame (id, frame,
// x, y, status: "alive" or the end reason at the frame where it ended), prints a progress bar
// and a summary (alive per frame, ends by reason, track lengths), and writes the run record.
//
// Keyframes (selection of new points): the first frame, every --keyframe-every frames, and
// any frame after which fewer than --refill-below x capacity tracks are alive.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"
#include "vidmap/gpu/device.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/run_record.h"
#include "vidmap/klt/tracker.h"
#include "vidmap/pipeline/progress.h"

#if __has_include("vidmap/io/frame_source.h")
#include "vidmap/io/frame_source.h"
#define VIDMAP_TRACK_HAS_FRAME_SOURCE 1
#endif
#if defined(VIDMAP_HAVE_CUDA) && __has_include("vidmap/klt/cuda_backend.h")
#include "vidmap/gpu/context.h"
#include "vidmap/klt/cuda_backend.h"
#define VIDMAP_TRACK_HAS_CUDA 1
#endif

namespace vidmap::cli {

namespace {

namespace fs = std::filesystem;

struct Args {
  std::string input, out, record, device = "auto";
  double fps = 4;
  bool fpsGiven = false, allFrames = false, backendGiven = false;
  int width = 0;
  int keyframeEvery = 4;
  double refillBelow = 0.5;
  int maxFrames = 0;
  bool quiet = false, overwrite = false, strict = false, skipBadFrames = false;
  klt::Options klt;  // values given on the command line (applied over optionsFor(width))
  std::vector<std::pair<std::string, CLI::Option*>> kltSet;
};

// One row of the output: a track at a frame.
struct Observation {
  std::int64_t id;
  int frame;
  float x, y;
  int status;  // 0 alive, else the end reason
};

void addKltOptions(CLI::App* cmd, Args& a) {
  auto opt = [&](const char* name, auto* field, const char* help) {
    a.kltSet.emplace_back(name, cmd->add_option(std::string("--klt.") + name, *field, help));
  };
  opt("levels", &a.klt.levels, "pyramid levels (default 5, 6 from 960 px)");
  opt("halfWindow", &a.klt.halfWindow, "window half size (default 7: 15 x 15; 10 from 960 px)");
  opt("maxIterations", &a.klt.maxIterations, "iterations per level (20)");
  opt("epsilonPx", &a.klt.epsilonPx, "convergence step in px (0.03)");
  opt("minEigThreshold", &a.klt.minEigThreshold, "lambda_min per window pixel (1e-6)");
  opt("fbThresholdPx", &a.klt.fbThresholdPx, "forward-backward bound in px (0.5 at 640 px)");
  opt("nccThreshold", &a.klt.nccThreshold, "NCC bound (0.8)");
  opt("photometric", &a.klt.photometric, "0 SSD, 1 mean removed, 2 mean and variance (2)");
  opt("blockSize", &a.klt.blockSize, "lambda_min block of the selection (3)");
  opt("qualityLevel", &a.klt.qualityLevel, "selection quality (0.01)");
  opt("minDistancePx", &a.klt.minDistancePx, "spacing of tracks in px (8 at 640 px)");
  opt("maxAgeFrames", &a.klt.maxAgeFrames, "oldest track in frames (16)");
  opt("capacity", &a.klt.capacity, "most tracks (1024, at most 8192)");
  opt("chunkTracks", &a.klt.chunkTracks, "tracks per backend call (0: all)");
}

klt::Options resolveOptions(const Args& a, int width) {
  klt::Options o = klt::optionsFor(width);
  for (const auto& [name, option] : a.kltSet) {
    if (option->count() == 0) continue;
#define VIDMAP_TAKE(field) \
  if (name == #field) o.field = a.klt.field;
    VIDMAP_TAKE(levels)
    VIDMAP_TAKE(halfWindow)
    VIDMAP_TAKE(maxIterations)
    VIDMAP_TAKE(epsilonPx)
    VIDMAP_TAKE(minEigThreshold)
    VIDMAP_TAKE(fbThresholdPx)
    VIDMAP_TAKE(nccThreshold)
    VIDMAP_TAKE(photometric)
    VIDMAP_TAKE(blockSize)
    VIDMAP_TAKE(qualityLevel)
    VIDMAP_TAKE(minDistancePx)
    VIDMAP_TAKE(maxAgeFrames)
    VIDMAP_TAKE(capacity)
    VIDMAP_TAKE(chunkTracks)
#undef VIDMAP_TAKE
  }
  o.check();
  return o;
}

void recordOptions(io::RunRecord& rec, const Args& a, const klt::Options& o) {
  rec.setOption("input", a.input);
  rec.setOption("out", a.out);
  rec.setOption("fps", a.fps);
  rec.setOption("all_frames", a.allFrames);
  rec.setOption("width", a.width);
  rec.setOption("device", a.device);
  rec.setOption("keyframe_every", a.keyframeEvery);
  rec.setOption("refill_below", a.refillBelow);
  rec.setOption("klt.levels", o.levels);
  rec.setOption("klt.halfWindow", o.halfWindow);
  rec.setOption("klt.maxIterations", o.maxIterations);
  rec.setOption("klt.epsilonPx", o.epsilonPx);
  rec.setOption("klt.minEigThreshold", o.minEigThreshold);
  rec.setOption("klt.fbThresholdPx", o.fbThresholdPx);
  rec.setOption("klt.nccThreshold", o.nccThreshold);
  rec.setOption("klt.photometric", o.photometric);
  rec.setOption("klt.blockSize", o.blockSize);
  rec.setOption("klt.qualityLevel", o.qualityLevel);
  rec.setOption("klt.minDistancePx", o.minDistancePx);
  rec.setOption("klt.maxAgeFrames", o.maxAgeFrames);
  rec.setOption("klt.capacity", o.capacity);
  rec.setOption("klt.chunkTracks", o.chunkTracks);
}

std::string statusName(int status) { return klt::endReasonName(status); }

std::string toCsv(const std::vector<Observation>& obs) {
  std::ostringstream s;
  s << "id,frame,x,y,status\n";
  char line[128];
  for (const auto& o : obs) {
    std::snprintf(line, sizeof line, "%lld,%d,%.4f,%.4f,%s\n", static_cast<long long>(o.id),
                  o.frame, o.x, o.y, statusName(o.status).c_str());
    s << line;
  }
  return s.str();
}

std::string toJson(const std::vector<Observation>& obs, int frames, const std::string& input) {
  std::ostringstream s;
  s << "{\"format\": \"vidmap.tracks\", \"version\": 1, \"frames\": " << frames
    << ", \"columns\": [\"id\", \"frame\", \"x\", \"y\", \"status\"],\n \"observations\": [\n";
  char line[128];
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const auto& o = obs[i];
    std::snprintf(line, sizeof line, "  [%lld, %d, %.4f, %.4f, \"%s\"]%s\n",
                  static_cast<long long>(o.id), o.frame, o.x, o.y, statusName(o.status).c_str(),
                  i + 1 < obs.size() ? "," : "");
    s << line;
  }
  s << " ]}\n";
  return s.str();
}

// The length of each track in frames, in buckets 1, 2, 3-4, 5-8, 9-16, 17-32, 33+.
std::array<int, 7> lengthHistogram(const std::map<std::int64_t, int>& lengths) {
  std::array<int, 7> h{};
  for (const auto& [id, len] : lengths) {
    int b = 0;
    while (b < 6 && len > (1 << b)) ++b;
    ++h[b];
  }
  return h;
}

#if defined(VIDMAP_TRACK_HAS_FRAME_SOURCE)
// Two paths naming one file (after links, "..", a relative path).
bool sameFile(const fs::path& p, const fs::path& q) {
  std::error_code e1, e2;
  if (fs::exists(p, e1) && fs::exists(q, e2)) return fs::equivalent(p, q, e1);
  return fs::weakly_canonical(fs::absolute(p), e1) == fs::weakly_canonical(fs::absolute(q), e2);
}

// The outputs' rules, checked before any work (those of `vidmap reconstruct`): never an input
// file, --out and --record two different files, an existing file replaced only with
// --overwrite, and never a folder.
void checkOutputs(const Args& a, const fs::path& out, const fs::path& recordPath) {
  require(!sameFile(out, recordPath), "vidmap track: --out and --record are the same file '" +
                                          out.string() + "'; give the run record another name");
  const std::vector<fs::path> inputs = io::inputFiles(a.input);
  for (const fs::path& p : {out, recordPath}) {
    const fs::path folder = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    require(fs::is_directory(folder),
            "vidmap track: the output folder '" + folder.string() + "' does not exist");
    for (const fs::path& in : inputs)
      if (in.filename() == p.filename() && sameFile(in, p))
        throw Error("vidmap track: the output '" + p.string() + "' is an input (" + in.string() +
                    "); choose another name");
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (fs::is_directory(st))
      throw Error("vidmap track: the output '" + p.string() + "' is a folder; give a file name");
    if (fs::exists(fs::symlink_status(p, ec)) && !a.overwrite)
      throw Error("vidmap track: '" + p.string() +
                  "' exists (choose another name, or --overwrite to replace it)");
  }
}

void run(const Args& a) {
  using Clock = std::chrono::steady_clock;
  require(!a.out.empty(), "vidmap track: --out is required");
  const fs::path out(a.out);
  const std::string ext = out.extension().string();
  require(ext == ".csv" || ext == ".json",
          "vidmap track: --out must end in .csv or .json, not '" + a.out + "'");
  require(a.keyframeEvery >= 0, "vidmap track: --keyframe-every must be >= 0");
  require(a.refillBelow >= 0 && a.refillBelow <= 1,
          "vidmap track: --refill-below must be in [0, 1]");
  require(a.maxFrames >= 0, "vidmap track: --max-frames must be >= 0 (0: all frames), not " +
                                std::to_string(a.maxFrames));
  const fs::path recordPath = a.record.empty()
                                  ? out.parent_path() / (out.stem().string() + ".run.json")
                                  : fs::path(a.record);
  checkOutputs(a, out, recordPath);

  io::RunRecord rec;
  rec.setCommand(typedCommandLine());
  // Lists and folders are tracked frame by frame unless --fps asks for sampling; videos are
  // sampled at --fps unless --all-frames (KLT wants small motion between frames).
  const bool sequence = fs::is_directory(a.input) || fs::path(a.input).extension() == ".txt";
  io::FrameSourceOptions so;
  so.fps = a.fps;
  so.allFrames = a.allFrames || (sequence && !a.fpsGiven);
  so.width = a.width;
  so.skipBadFrames = a.skipBadFrames;
  so.check();
  std::unique_ptr<io::FrameSource> source = io::openFrameSource(a.input, so);
  const io::FrameSourceInfo& info = source->info();
  const klt::Options o = resolveOptions(a, info.width);
  recordOptions(rec, a, o);

  std::unique_ptr<klt::Backend> backend;
#if defined(VIDMAP_TRACK_HAS_CUDA)
  std::unique_ptr<gpu::Context> ctx;
#endif
  require(a.device == "auto" || a.device == "cpu" || a.device == "cuda",
          std::string("vidmap track: ") + (a.backendGiven ? "--backend" : "--device") +
              " must be auto, cpu or cuda, not '" + a.device + "'");
  const bool cuda = a.device == "cuda" || (a.device == "auto" && gpu::deviceCount() > 0);
  if (cuda) {
#if defined(VIDMAP_TRACK_HAS_CUDA)
    ctx = std::make_unique<gpu::Context>();
    backend = klt::makeCudaBackend(*ctx, info.width, info.height, o);
#else
    if (a.device == "cuda")
      throw Error("vidmap track: --device cuda needs a build with the CUDA backend of the tracker");
#endif
  }
  klt::Tracker tracker(info.width, info.height, o, std::move(backend));

  pipeline::ProgressBar bar(info.frameCount, !a.quiet);
  if (!a.quiet)
    std::fprintf(stderr,
                 "vidmap track: %s, %d x %d, %.3g fps, %s backend, %d levels, %d x %d window\n",
                 a.input.c_str(), info.width, info.height, info.fps, tracker.backend().name(),
                 o.levels, 2 * o.halfWindow + 1, 2 * o.halfWindow + 1);
  std::vector<Observation> obs;
  std::vector<int> alivePerFrame;
  std::array<std::int64_t, klt::kEndReasonCount> ends{};
  std::map<std::int64_t, int> lengths;  // frames each track was seen
  io::Frame frame;
  int n = 0;
  int sourceFrames = 0;  // frames of the source up to the last one tracked
  for (;;) {
    if (a.maxFrames > 0 && n >= a.maxFrames) break;
    const auto t0 = Clock::now();
    if (!source->next(frame)) break;
    sourceFrames = frame.sourceIndex + 1;
    rec.addStage("decode", std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    const bool keyframe = n == 0 || (a.keyframeEvery > 0 && n % a.keyframeEvery == 0) ||
                          tracker.tracks().size() < a.refillBelow * o.capacity;
    const klt::StepReport r = tracker.push(frame.gray, keyframe);
    rec.addStage("klt.upload", r.msUpload);
    rec.addStage("klt.pyramid", r.msPyramid);
    if (r.tracksIn > 0) {
      rec.addStage("klt.track", r.msTrack);
      rec.addStage("klt.check", r.msCheck);
    }
    if (r.selection) rec.addStage("klt.select", r.msSelect);
    for (const auto& e : tracker.ended()) {
      obs.push_back({e.id, n, e.x, e.y, e.reason});
      ++ends[e.reason];
      lengths[e.id] = e.age + 1;
    }
    const klt::TrackTable& t = tracker.tracks();
    for (int i = 0; i < t.size(); ++i) {
      obs.push_back({t.id[i], n, t.x[i], t.y[i], 0});
      lengths[t.id[i]] = t.age[i] + 1;
    }
    alivePerFrame.push_back(t.size());
    ++n;
    bar.update(n, std::to_string(t.size()) + " alive");
  }
  bar.finish();
  require(n > 0, "vidmap track: '" + a.input + "' gave no frames");
  const io::SourceReport damage = source->report();
  const std::string damageText = damage.describe();
  if (damage.damaged() && a.strict)
    throw Error("vidmap track: " + a.input + " is damaged: " + damageText +
                " (--strict: nothing written)");
  rec.setCount("input.decode_errors", damage.decodeErrors);
  rec.setCount("input.ended_early", damage.endedEarly ? 1 : 0);
  rec.setCount("input.frames_skipped", static_cast<std::int64_t>(damage.skipped.size()));
  if (damage.damaged()) rec.setOption("input_damage", damageText);
  if (sourceFrames > n)
    std::fprintf(stderr,
                 "vidmap track: warning: sampling at %.3g fps tracked %d of the first %d frames "
                 "(--all-frames tracks every frame)\n",
                 info.fps, n, sourceFrames);

  const auto t0 = Clock::now();
  std::sort(obs.begin(), obs.end(), [](const Observation& p, const Observation& q) {
    return p.id != q.id ? p.id < q.id : p.frame < q.frame;
  });
  // The tracks and their record are committed together or not at all.
  io::AtomicFileGroup outputs;
  io::AtomicFile& tracksFile = outputs.add(out);
  io::AtomicFile& recordFile = outputs.add(recordPath);
  io::writeTextFile(tracksFile.tmp(), out, ext == ".csv" ? toCsv(obs) : toJson(obs, n, a.input));
  rec.addStage("write", std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  rec.setCount("frames", n);
  rec.setCount("tracks", static_cast<std::int64_t>(lengths.size()));
  rec.setCount("observations", static_cast<std::int64_t>(obs.size()));
  for (int r = 1; r < klt::kEndReasonCount; ++r)
    rec.setCount(std::string("klt.ends.") + klt::endReasonName(r), ends[r]);
#if defined(VIDMAP_TRACK_HAS_CUDA)
  if (ctx) rec.addGpuUsage(*ctx);
#endif
  io::writeTextFile(recordFile.tmp(), recordPath, rec.toJson());
  outputs.commit();

  // The summary.
  std::printf("%d frames, %zu tracks, %zu observations -> %s (run record %s)\n", n, lengths.size(),
              obs.size(), a.out.c_str(), recordPath.string().c_str());
  if (damage.damaged()) std::printf("warning: damaged input: %s\n", damageText.c_str());
  std::printf("alive per frame:");
  const int shown = std::min<int>(n, 40);
  for (int i = 0; i < shown; ++i)
    std::printf(" %d", alivePerFrame[(i * (n - 1)) / std::max(1, shown - 1)]);
  std::printf(n > shown ? " (%d of %d frames shown)\n" : "\n", shown, n);
  std::printf("ends by reason:");
  for (int r = 1; r < klt::kEndReasonCount; ++r)
    if (ends[r]) std::printf(" %s %lld", klt::endReasonName(r), static_cast<long long>(ends[r]));
  std::printf("\ntrack length (frames):");
  const auto h = lengthHistogram(lengths);
  const char* labels[] = {"1", "2", "3-4", "5-8", "9-16", "17-32", "33+"};
  for (int b = 0; b < 7; ++b) std::printf(" %s: %d", labels[b], h[b]);
  std::printf("\n");
}
#else
void run(const Args&) {
  throw Error("vidmap track: this build has no frame input (io/frame_source.h)");
}
#endif

}  // namespace

void addTrackCommand(CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd =
      app.add_subcommand("track", "Track points through a video or an image sequence (KLT)");
  cmd->add_option("input", args->input, "video file, image folder or TUM-style list")->required();
  cmd->add_option("--out", args->out, "tracks.csv or tracks.json")->required();
  cmd->add_option("--record", args->record,
                  "run record (default: <out stem>.run.json); written together with --out");
  cmd->add_flag("--overwrite", args->overwrite,
                "replace existing --out and --record files (never an input)");
  cmd->add_option("--fps", args->fps,
                  "frames per second sampled from a video (default 4), or from a list or folder "
                  "(default: every frame), [0.001, 120]")
      ->each([a = args.get()](const std::string&) { a->fpsGiven = true; });
  cmd->add_flag("--all-frames", args->allFrames,
                "track every frame of a video (the default for lists and folders)");
  cmd->add_option("--width", args->width, "resize frames to this width (default: native)");
  cmd->add_option("--device", args->device,
                  "auto (CUDA when a device is present), cpu or cuda (default auto)");
  cmd->add_option("--backend", args->device, "deprecated: the same as --device")
      ->group("")  // hidden from --help, kept for old scripts
      ->each([a = args.get()](const std::string&) {
        a->backendGiven = true;
        std::fprintf(stderr, "vidmap track: warning: --backend is deprecated; use --device\n");
      });
  cmd->add_option("--keyframe-every", args->keyframeEvery,
                  "select new points every N frames (default 4; 0: never after the first)");
  cmd->add_option("--refill-below", args->refillBelow,
                  "also select when fewer than this fraction of capacity is alive (default 0.5)");
  cmd->add_option("--max-frames", args->maxFrames, "stop after N frames, N >= 0 (default 0: all)");
  cmd->add_flag("--quiet", args->quiet, "no progress bar");
  cmd->add_flag("--strict", args->strict,
                "damaged input (a video that ends early or has damaged frames, skipped frames) "
                "is an error, and nothing is written");
  cmd->add_flag("--skip-bad-frames", args->skipBadFrames,
                "folders and lists: skip (and report) frames that cannot be read or differ in "
                "size, instead of stopping before the work starts");
  addKltOptions(cmd, *args);
  cmd->callback([args] { run(*args); });
}

}  // namespace vidmap::cli
