// The KLT tracker on the GPU: push time at 640x360 and 1280x720 for 256 to 8192 tracks
// (pyramid, forward, backward, check; and with the selection of a keyframe), per-kernel GPU
// times, both tracking kernels, and the throughput in track-steps per second with K = 1, 4,
// 16 sequences pushed together. Prints one JSON object. With --dump DIR it also writes the
// frames and points of each case for bench/klt_opencv_pyrlk.py (the OpenCV peer).
// --width W (push and throughput cases), --tracks N,N, --kernels warp,warp-shared,warp-staged,lane
// and
// --no-throughput narrow the run (a profiler run, a before/after comparison). The throughput
// cases report the per-kernel times too (KernelProfiler, launches without the graph).
//
// Timing: CUDA events around each push after a warm-up, medians of --reps pushes; the wall
// time of a push includes staging the frame on the host, the upload, the kernels and the read.
// The pipelined push (Engine::sendFrame / finish / trackAsync: frame k + 1 staged, uploaded and
// its pyramid built while push k tracks, results read at the next call) is measured as a video
// front end runs it, in a steady stream of frames: "wall" is the caller's time per push (one
// call: stage the frame, send it, wait for the previous push's results, stage the seeds, queue
// the tracking), "GPU" the time between the ends of consecutive pushes' reads (CUDA events;
// idle gaps included); medians over --reps consecutive pushes, and the mean wall of the run.
// "resident" is the same stream in the order of CudaBatchTracker::pushPipelined: stage frame
// k + 1, send it, queue its tracking on the device's own table (no seeds from the host), then
// wait for push k's results; so the host's staging runs while the GPU tracks. Its tracks are
// never re-seeded (no age limit), so it reports the alive tracks at the end. "tracker" times
// CudaBatchTracker itself (push() and pushPipelined(), host tables included; its own
// selection of up to N tracks on the first frame): wall only, medians and the mean.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "vidmap/core/build_info.h"
#include "vidmap/gpu/context.h"
#include "vidmap/gpu/device.h"
#include "vidmap/klt/cuda_batch_tracker.h"
#include "vidmap/klt/cuda_engine.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace {

using namespace vidmap;
using klt::cuda::Engine;
using klt::cuda::TrackKernel;
using Clock = std::chrono::steady_clock;

const char* kernelName(TrackKernel k) {
  return k == TrackKernel::kWarp           ? "warp"
         : k == TrackKernel::kWarpShared   ? "warp-shared"
         : k == TrackKernel::kWarpStaged   ? "warp-staged"
         : k == TrackKernel::kWarpStaged16 ? "warp-staged-16w"
         : k == TrackKernel::kWarpStaged20 ? "warp-staged-20w"
                                           : "lane";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Frames {
  Image<std::uint8_t> I, J;  // 8-bit, as a camera gives them (and as OpenCV reads them)
};

Image<std::uint8_t> toBytes(const GrayImage& g) {
  Image<std::uint8_t> b(g.width(), g.height());
  for (int y = 0; y < g.height(); ++y)
    for (int x = 0; x < g.width(); ++x)
      b(x, y) = static_cast<std::uint8_t>(std::lround(std::clamp(g(x, y), 0.0f, 1.0f) * 255.0f));
  return b;
}

Frames makeFrames(int w, int h) {
  synth::TexturedSceneOptions so;
  so.width = w;
  so.height = h;
  const GrayImage I = synth::makeTexturedScene(so);
  const double s = w / 640.0;
  return {toBytes(I), toBytes(synth::warpImage(I, synth::translation(3.7 * s, -2.1 * s)))};
}

// n points uniform in the frame, 2 windows from the border (a fixed generator).
std::vector<klt::TrackRecord> makePoints(int w, int h, int n, int hw) {
  synth::Rng rng(7);
  std::vector<klt::TrackRecord> p(n);
  const double m = 2.0 * hw + 2;
  for (auto& r : p)
    r = klt::seedRecord(static_cast<float>(rng.uniform(m, w - 1 - m)),
                        static_cast<float>(rng.uniform(m, h - 1 - m)), 0.0f);
  return p;
}

struct PushStats {
  double gpuMs = 0, kernelsMs = 0, wallMs = 0;
  double pipeGpuMs = 0, pipeWallMs = 0, pipeMeanWallMs = 0, pipeKeyGpuMs = 0, pipeKeyWallMs = 0;
  int pipeAlive = 0;
  double resGpuMs = 0, resWallMs = 0, resMeanWallMs = 0;
  double resStageMs = 0, resSendMs = 0, resQueueMs = 0, resWaitMs = 0;  // the call's parts
  int resAlive = 0;
  double trackerWallMs = 0, trackerPipeWallMs = 0, trackerPipeMeanWallMs = 0;
  int trackerAlive = 0;
  double keyGpuMs = 0, keyWallMs = 0;
  std::map<std::string, double> kernelMs;  // medians per push, direct launches
  int alive = 0, tracks = 0;
  double meanIterations0 = 0;
};

// The pipelined push in a steady stream (3 frame slots), K sequences of n tracks: the same
// seeds every push, as measure() does.
void measurePipelined(gpu::Context& ctx, const Frames& fr, int K, int n, TrackKernel kernel,
                      int reps, PushStats& st) {
  const int w = fr.I.width(), h = fr.I.height();
  klt::Options o = klt::optionsFor(w);
  o.capacity = std::max(n, 1);
  Engine e(ctx, K, w, h, o, kernel, 3);
  const auto seeds = makePoints(w, h, n, o.halfWindow);
  const std::vector<int> ages(n, 1);
  int slot = 0;
  // One call of the front end: frame k + 1 in, results of push k out, push k + 1 queued.
  auto pushOnce = [&](bool track, bool select, int frame) {
    const Image<std::uint8_t>& img = frame % 2 ? fr.J : fr.I;
    const int cur = (slot + 1) % 3;
    for (int q = 0; q < K; ++q) e.stageGray8(q, img.view());
    e.sendFrame(cur);
    e.finish();  // the previous push's results: e.checked(q) is read here by a front end
    for (int q = 0; q < K; ++q) e.stageSeeds(q, seeds.data(), n, ages.data());
    e.trackAsync(slot, cur, track, select);
    slot = cur;
  };
  auto run = [&](bool select, double* gpuMs, double* wallMs, double* meanWallMs) {
    e.setTiming(true);  // restarts the interval count
    std::vector<double> gpu, wall;
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      const auto t = Clock::now();
      pushOnce(true, select, i);
      wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
      if (i >= 2) gpu.push_back(e.lastPushMs());  // the interval of the push before
    }
    const double total = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    e.finish();
    gpu.push_back(e.lastPushMs());
    *gpuMs = median(gpu);
    *wallMs = median(wall);
    if (meanWallMs) *meanWallMs = total / reps;
  };
  pushOnce(false, false, 0);
  for (int i = 0; i < 5; ++i) pushOnce(true, false, i + 1);  // warm-up, graph capture
  e.finish();
  run(false, &st.pipeGpuMs, &st.pipeWallMs, &st.pipeMeanWallMs);
  st.pipeAlive = 0;
  for (int i = 0; i < n; ++i) st.pipeAlive += klt::statusAlive(e.checked(0)[i].status);
  for (int i = 0; i < 2; ++i) pushOnce(true, true, i);
  e.finish();
  run(true, &st.pipeKeyGpuMs, &st.pipeKeyWallMs, nullptr);
}

// The resident pipelined push (CudaBatchTracker::pushPipelined's order of engine calls): n
// seeds staged once, then the device's table from push to push.
void measureResident(gpu::Context& ctx, const Frames& fr, int K, int n, TrackKernel kernel,
                     int reps, PushStats& st) {
  const int w = fr.I.width(), h = fr.I.height();
  klt::Options o = klt::optionsFor(w);
  o.capacity = std::max(n, 1);
  o.maxAgeFrames = 1 << 20;  // the same tracks throughout
  Engine e(ctx, K, w, h, o, kernel, 3);
  const auto seeds = makePoints(w, h, n, o.halfWindow);
  const std::vector<int> ages(n, 1);
  int slot = 0;
  for (int q = 0; q < K; ++q) e.stageGray8(q, fr.I.view());
  e.sendFrame(0);
  for (int q = 0; q < K; ++q) e.stageSeeds(q, seeds.data(), n, ages.data());
  e.trackAsync(0, 0, false, false, true);
  // One call of the front end: frame k + 1 in and queued, results of push k out; the host's
  // time in each part (staging the frame, sending it, queueing the tracking, the wait).
  std::vector<double> parts[4];
  auto pushOnce = [&](int frame) {
    const Image<std::uint8_t>& img = frame % 2 ? fr.J : fr.I;
    const int cur = (slot + 1) % 3;
    const auto t0 = Clock::now();
    for (int q = 0; q < K; ++q) e.stageGray8(q, img.view());
    const auto t1 = Clock::now();
    e.sendFrame(cur);
    const auto t2 = Clock::now();
    e.trackAsync(slot, cur, true, false, true);
    const auto t3 = Clock::now();
    e.finish();  // push k's results: a front end reads e.checked(q) here
    const auto t4 = Clock::now();
    const Clock::time_point t[5] = {t0, t1, t2, t3, t4};
    for (int p = 0; p < 4; ++p)
      parts[p].push_back(std::chrono::duration<double, std::milli>(t[p + 1] - t[p]).count());
    slot = cur;
  };
  for (int i = 0; i < 6; ++i) pushOnce(i + 1);  // warm-up, graph capture
  for (auto& p : parts) p.clear();
  e.setTiming(true);
  std::vector<double> gpu, wall;
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    pushOnce(i + 7);
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
    if (i >= 2) gpu.push_back(e.lastPushMs());
  }
  const double total = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  e.finish();
  st.resGpuMs = median(gpu);
  st.resWallMs = median(wall);
  st.resMeanWallMs = total / reps;
  st.resStageMs = median(parts[0]);
  st.resSendMs = median(parts[1]);
  st.resQueueMs = median(parts[2]);
  st.resWaitMs = median(parts[3]);
  st.resAlive = e.aliveCount(0);
}

// CudaBatchTracker's push() and pushPipelined() on one sequence, as a front end calls them.
void measureTracker(gpu::Context& ctx, const Frames& fr, int n, TrackKernel kernel, int reps,
                    PushStats& st) {
  const int w = fr.I.width(), h = fr.I.height();
  klt::Options o = klt::optionsFor(w);
  o.capacity = std::max(n, 1);
  o.maxAgeFrames = 1 << 20;
  klt::CudaBackendOptions co;
  co.kernel = static_cast<klt::CudaTrackKernel>(static_cast<int>(kernel));  // same order
  co.pipelined = true;
  for (bool pipelined : {false, true}) {
    klt::CudaBatchTracker t(ctx, 1, w, h, o, co);
    auto pushOnce = [&](int frame) {
      const ImageView<const std::uint8_t> v = (frame % 2 ? fr.J : fr.I).view();
      const std::span<const ImageView<const std::uint8_t>> views(&v, 1);
      if (pipelined)
        t.pushPipelined(views);
      else
        t.push(views);
    };
    for (int i = 0; i < 7; ++i) pushOnce(i);  // selection on the first, warm-up, capture
    std::vector<double> wall;
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      const auto c = Clock::now();
      pushOnce(i + 7);
      wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - c).count());
    }
    const double total = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (pipelined) {
      t.flush();
      st.trackerPipeWallMs = median(wall);
      st.trackerPipeMeanWallMs = total / reps;
      st.trackerAlive = t.tracks(0).size();
    } else {
      st.trackerWallMs = median(wall);
    }
  }
}

// K sequences of n tracks each: pushes alternating the two frames, tracking every time.
PushStats measure(gpu::Context& ctx, const Frames& fr, int K, int n, TrackKernel kernel, int reps,
                  bool perKernel) {
  const int w = fr.I.width(), h = fr.I.height();
  klt::Options o = klt::optionsFor(w);
  o.capacity = std::max(n, 1);
  Engine e(ctx, K, w, h, o, kernel);
  const auto seeds = makePoints(w, h, n, o.halfWindow);
  const std::vector<int> ages(n, 1);
  int slot = 0;
  auto pushOnce = [&](bool track, bool select, bool graph, int frame) {
    const Image<std::uint8_t>& img = frame % 2 ? fr.J : fr.I;
    for (int q = 0; q < K; ++q) {
      e.stageGray8(q, img.view());
      e.stageSeeds(q, seeds.data(), n, ages.data());
    }
    const int cur = 1 - slot;
    e.push(slot, cur, track, select, graph);
    slot = cur;
  };
  PushStats st;
  e.setTiming(true);
  pushOnce(false, false, true, 0);
  for (int i = 0; i < 5; ++i) pushOnce(true, false, true, i + 1);  // warm-up, graph capture
  std::vector<double> gpu, kern, wall;
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    pushOnce(true, false, true, i);
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
    gpu.push_back(e.lastPushMs());
    kern.push_back(e.lastKernelsMs());
  }
  st.gpuMs = median(gpu);
  st.kernelsMs = median(kern);
  st.wallMs = median(wall);
  // Alive tracks and the iterations at level 0 of the last push (sequence 0).
  st.tracks = n;
  double it = 0;
  for (int i = 0; i < n; ++i) {
    const auto& r = e.checked(0)[i];
    st.alive += klt::statusAlive(r.status);
    it += klt::statusIterations(r.status);
  }
  st.meanIterations0 = n ? it / n : 0;
  // Keyframe pushes: the same plus compaction and selection on the device.
  gpu.clear();
  wall.clear();
  for (int i = 0; i < 2; ++i) pushOnce(true, true, true, i);
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    pushOnce(true, true, true, i);
    wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
    gpu.push_back(e.lastPushMs());
  }
  st.keyGpuMs = median(gpu);
  st.keyWallMs = median(wall);
  if (perKernel) {
    e.setTiming(false);
    e.setProfiling(true);
    std::map<std::string, std::vector<double>> per;
    for (int i = 0; i < reps; ++i) {
      ctx.profiler().reset();
      pushOnce(true, i % 2 == 0, false, i);  // every other push a keyframe (selection)
      for (const auto& k : ctx.profiler().stats()) per[k.name].push_back(k.gpuMs);
    }
    for (auto& [name, v] : per) st.kernelMs[name] = median(v);
    e.setProfiling(false);
  }
  measurePipelined(ctx, fr, K, n, kernel, reps, st);
  measureResident(ctx, fr, K, n, kernel, reps, st);
  if (K == 1 && kernel != TrackKernel::kLane) measureTracker(ctx, fr, n, kernel, reps, st);
  return st;
}

void writePgm(const std::string& path, const Image<std::uint8_t>& img) {
  std::ofstream f(path, std::ios::binary);
  f << "P5\n" << img.width() << " " << img.height() << "\n255\n";
  f.write(reinterpret_cast<const char*>(img.data()), img.pixels());
}

// FLOPs of one track step (forward + backward), counted from kernels.h: per level a template
// of n window pixels (two bilinear samples of 3 channels: 21 FLOPs, mask and sums: 22) and
// per iteration n target pixels (bilinear 7, mask 1, four sums 7) plus the 2x2 solve.
double flopsPerTrackStep(const klt::Options& o, double iterations) {
  const double n = (2.0 * o.halfWindow + 1) * (2.0 * o.halfWindow + 1);
  return 2.0 * o.levels * (n * 43.0 + iterations * (n * 15.0 + 30.0));
}

// Bytes a push must move through device memory: the frame (8-bit) in, level 0 written, the
// pyramid (4/3 of level 0) read and written, its gradient (two floats) written; the tracks
// read their windows from L2 (a few MB), which is not counted.
double bytesPerPush(int w, int h) {
  const double px = static_cast<double>(w) * h, pyr = px * 4.0 / 3.0;
  return px * 1 + px * 4 + pyr * 4 * 2 + pyr * 8;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dump;
  int reps = 30;
  bool quick = false, throughput = true;
  int onlyWidth = 0;                 // --width W: that frame size alone (640 or 1280)
  std::vector<int> onlyTracks;       // --tracks N,N: these track counts
  std::vector<TrackKernel> kernels;  // --kernels warp,warp-shared,warp-staged,lane
  auto csv = [](const std::string& s) {
    std::vector<std::string> out;
    std::size_t b = 0;
    for (std::size_t e; (e = s.find(',', b)) != std::string::npos; b = e + 1)
      out.push_back(s.substr(b, e - b));
    out.push_back(s.substr(b));
    return out;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dump" && i + 1 < argc)
      dump = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::max(3, std::atoi(argv[++i]));
    else if (a == "--quick")
      quick = true;
    else if (a == "--no-throughput")
      throughput = false;
    else if (a == "--width" && i + 1 < argc)
      onlyWidth = std::atoi(argv[++i]);
    else if (a == "--tracks" && i + 1 < argc)
      for (const auto& t : csv(argv[++i])) onlyTracks.push_back(std::atoi(t.c_str()));
    else if (a == "--kernels" && i + 1 < argc)
      for (const auto& k : csv(argv[++i]))
        kernels.push_back(k == "lane"              ? TrackKernel::kLane
                          : k == "warp"            ? TrackKernel::kWarp
                          : k == "warp-staged"     ? TrackKernel::kWarpStaged
                          : k == "warp-staged-16w" ? TrackKernel::kWarpStaged16
                          : k == "warp-staged-20w" ? TrackKernel::kWarpStaged20
                                                   : TrackKernel::kWarpShared);
  }
  if (kernels.empty()) kernels = {TrackKernel::kWarp, TrackKernel::kWarpShared, TrackKernel::kLane};
  std::vector<TrackKernel> throughputKernels;  // the warp forms of --kernels
  for (TrackKernel k : kernels)
    if (k != TrackKernel::kLane) throughputKernels.push_back(k);
  if (gpu::deviceCount() == 0) {
    std::printf("{\"skipped\": \"%s\"}\n", gpu::noDeviceReason().c_str());
    return 0;
  }
  gpu::Context ctx;
  const auto info = ctx.info();
  std::printf(
      "{\n \"bench\": \"klt_cuda\",\n \"device\": \"%s\",\n \"sms\": %d,\n"
      " \"commit\": \"%s\",\n \"no_fma\": %s,\n \"reps\": %d,\n",
      info.name.c_str(), info.multiProcessors, build::kGitCommit,
      build::kCudaNoFma ? "true" : "false", reps);

  const int sizes[2][2] = {{640, 360}, {1280, 720}};
  const std::vector<int> counts =
      !onlyTracks.empty()
          ? onlyTracks
          : (quick ? std::vector<int>{1024} : std::vector<int>{256, 1024, 4096, 8192});
  std::string cases = "[";
  std::printf(" \"push\": [\n");
  bool first = true;
  for (const auto& sz : sizes) {
    if (onlyWidth && sz[0] != onlyWidth) continue;
    const Frames fr = makeFrames(sz[0], sz[1]);
    const klt::Options o = klt::optionsFor(sz[0]);
    for (int n : counts) {
      for (TrackKernel k : kernels) {
        const bool perKernel = true;
        const PushStats s = measure(ctx, fr, 1, n, k, reps, perKernel);
        const double flops = flopsPerTrackStep(o, s.meanIterations0) * n;
        const double floorUs = std::max(flops / 60e12, bytesPerPush(sz[0], sz[1]) / 4.3e12) * 1e6;
        std::printf(
            "%s  {\"width\": %d, \"height\": %d, \"tracks\": %d, \"kernel\": \"%s\", "
            "\"alive\": %d, \"mean_iterations_level0\": %.2f, \"push_gpu_ms\": %.4f, "
            "\"kernels_gpu_ms\": %.4f, \"push_wall_ms\": %.4f, \"keyframe_push_gpu_ms\": "
            "%.4f, \"keyframe_push_wall_ms\": %.4f, \"track_steps_per_s\": %.4g, "
            "\"pipelined\": {\"alive\": %d, \"push_gpu_ms\": %.4f, \"push_wall_ms\": %.4f, "
            "\"push_wall_mean_ms\": %.4f, \"keyframe_push_gpu_ms\": %.4f, "
            "\"keyframe_push_wall_ms\": %.4f}, "
            "\"resident\": {\"alive\": %d, \"push_gpu_ms\": %.4f, \"push_wall_ms\": %.4f, "
            "\"push_wall_mean_ms\": %.4f, \"host_stage_ms\": %.4f, \"host_send_ms\": %.4f, "
            "\"host_queue_ms\": %.4f, \"host_wait_ms\": %.4f}, "
            "\"tracker\": {\"alive\": %d, \"push_wall_ms\": %.4f, "
            "\"pipelined_wall_ms\": %.4f, \"pipelined_wall_mean_ms\": %.4f}, "
            "\"flops_per_push\": %.4g, \"floor_us\": %.2f, \"kernel_ms\": {",
            first ? "" : ",\n", sz[0], sz[1], n, kernelName(k), s.alive, s.meanIterations0, s.gpuMs,
            s.kernelsMs, s.wallMs, s.keyGpuMs, s.keyWallMs, n / (s.gpuMs * 1e-3), s.pipeAlive,
            s.pipeGpuMs, s.pipeWallMs, s.pipeMeanWallMs, s.pipeKeyGpuMs, s.pipeKeyWallMs,
            s.resAlive, s.resGpuMs, s.resWallMs, s.resMeanWallMs, s.resStageMs, s.resSendMs,
            s.resQueueMs, s.resWaitMs, s.trackerAlive, s.trackerWallMs, s.trackerPipeWallMs,
            s.trackerPipeMeanWallMs, flops, floorUs);
        bool f2 = true;
        for (const auto& [name, ms] : s.kernelMs) {
          std::printf("%s\"%s\": %.4f", f2 ? "" : ", ", name.c_str(), ms);
          f2 = false;
        }
        std::printf("}}");
        std::fflush(stdout);
        first = false;
      }
      if (!dump.empty()) {
        std::filesystem::create_directories(dump);
        const std::string name =
            std::to_string(sz[0]) + "x" + std::to_string(sz[1]) + "_" + std::to_string(n);
        writePgm(dump + "/" + name + "_prev.pgm", fr.I);
        writePgm(dump + "/" + name + "_cur.pgm", fr.J);
        std::ofstream pf(dump + "/" + name + "_points.txt");
        for (const auto& p : makePoints(sz[0], sz[1], n, o.halfWindow)) {
          char line[64];
          std::snprintf(line, sizeof line, "%.6f %.6f\n", p.x, p.y);
          pf << line;
        }
        char c[256];
        std::snprintf(c, sizeof c,
                      "%s{\"name\": \"%s\", \"width\": %d, \"height\": %d, \"window\": %d, "
                      "\"levels\": %d, \"iterations\": %d, \"epsilon\": %g, \"fb_threshold\": %g}",
                      cases.size() > 1 ? ", " : "", name.c_str(), sz[0], sz[1],
                      2 * o.halfWindow + 1, o.levels, o.maxIterations, o.epsilonPx,
                      o.fbThresholdPx);
        cases += c;
      }
    }
  }
  std::printf("\n ],\n \"throughput\": [\n");
  first = true;
  struct T {
    int w, h, n;
  };
  const std::vector<T> tp =
      !throughput
          ? std::vector<T>{}
          : (quick ? std::vector<T>{{640, 360, 1024}}
                   : std::vector<T>{
                         {640, 360, 1024}, {640, 360, 8192}, {1280, 720, 1024}, {1280, 720, 8192}});
  for (const T& t : tp) {
    if (onlyWidth && t.w != onlyWidth) continue;
    const Frames fr = makeFrames(t.w, t.h);
    for (int K : {1, 4, 16})
      for (TrackKernel k : throughputKernels) {
        // Per-kernel times too: the push time less the kernels' is the upload and the read.
        const PushStats s = measure(ctx, fr, K, t.n, k, reps, true);
        std::printf(
            "%s  {\"width\": %d, \"height\": %d, \"tracks_per_sequence\": %d, "
            "\"sequences\": %d, \"kernel\": \"%s\", \"push_gpu_ms\": %.4f, "
            "\"kernels_gpu_ms\": %.4f, \"push_wall_ms\": %.4f, "
            "\"keyframe_push_gpu_ms\": %.4f, \"track_steps_per_s\": %.4g, "
            "\"track_steps_per_s_wall\": %.4g, \"pipelined\": {\"push_gpu_ms\": %.4f, "
            "\"push_wall_ms\": %.4f, \"track_steps_per_s\": %.4g, "
            "\"track_steps_per_s_wall\": %.4g}, \"resident\": {\"alive_seq0\": %d, "
            "\"push_gpu_ms\": %.4f, \"push_wall_ms\": %.4f}, \"kernel_ms\": {",
            first ? "" : ",\n", t.w, t.h, t.n, K, kernelName(k), s.gpuMs, s.kernelsMs, s.wallMs,
            s.keyGpuMs, K * t.n / (s.gpuMs * 1e-3), K * t.n / (s.wallMs * 1e-3), s.pipeGpuMs,
            s.pipeWallMs, K * t.n / (s.pipeGpuMs * 1e-3), K * t.n / (s.pipeWallMs * 1e-3),
            s.resAlive, s.resGpuMs, s.resWallMs);
        bool f2 = true;
        for (const auto& [name, ms] : s.kernelMs) {
          std::printf("%s\"%s\": %.4f", f2 ? "" : ", ", name.c_str(), ms);
          f2 = false;
        }
        std::printf("}}");
        std::fflush(stdout);
        first = false;
      }
  }
  std::printf("\n ]\n}\n");
  if (!dump.empty()) {
    std::ofstream cf(dump + "/cases.json");
    cf << cases << "]\n";
  }
  return 0;
}
