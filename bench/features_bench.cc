// SIFT extraction time per 1280x720 and 1920x1080 frame and matching time for 4096 x 4096
// descriptors: vidmap's CPU backend against OpenCV's SIFT and BFMatcher on the same cores, and
// the CUDA backend when a device is present (CUDA events after a warm-up). Medians; JSON out.
//
//   build/bench/features_bench [--repeat 7] [--gpu-only | --no-cpu] [--bands-sweep]
//
// --gpu-only: the CUDA extraction alone (no CPU, OpenCV or matching); --no-cpu: no CPU
// extraction (the matching still runs, the CPU matcher as the reference); --bands-sweep: the
// RGB8 frame's GPU time for each count of upload bands (SiftCuda::setUploadBands), each
// checked to give the features of one band.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "features_common.h"
#include "vidmap/core/data_dir.h"
#include "vidmap/core/parallel.h"
#include "vidmap/features/matcher.h"
#include "vidmap/features/sift.h"
#include "vidmap/features/sift_cpu.h"
#include "vidmap/features/testing/blob_scene.h"
#include "vidmap/features/testing/load_image.h"
#include "vidmap/io/color.h"
#if VIDMAP_HAVE_CUDA
#include "vidmap/features/match_cuda.h"
#include "vidmap/features/sift_cuda.h"
#endif

using namespace vidmap;
using namespace vidmap::features;
using vidmap::bench::medianOf;
using vidmap::bench::nowMs;

namespace {

GrayImage crop(const GrayImage& in, int w, int h) {
  GrayImage out(w, h);
  const int x0 = (in.width() - w) / 2, y0 = (in.height() - h) / 2;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) out(x, y) = in(x0 + x, y0 + y);
  return out;
}

// A real frame of the requested size (Strecha fountain, cropped), or a blob scene without data.
GrayImage frame(int w, int h, int denom, const char* id, std::string* source) {
  const auto dir = dataPath("strecha/fountain-P11");
  const std::filesystem::path file =
      dir ? *dir / "images" / (std::string(id) + ".jpg") : std::filesystem::path();
  if (dir && std::filesystem::is_regular_file(file)) {
    GrayImage full = testing::loadGray(file, denom);
    if (full.width() >= w && full.height() >= h) {
      *source = "strecha/fountain-P11/" + std::string(id) + " 1/" + std::to_string(denom) + " crop";
      return crop(full, w, h);
    }
  }
  *source = "blob scene";
  return testing::renderBlobs(testing::randomBlobScene(w, h, w * h / 400, 1.5, 12, 1), w, h);
}

struct Timing {
  double ms = 0, cpuMs = 0, gpuMs = -1;
  size_t count = 0;
};

// Process CPU time (all threads), robust to other load on the machine where wall time is not.
double cpuMs() { return 1000.0 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

template <class F>
Timing timeIt(int repeat, F&& f) {
  std::vector<double> t, c;
  Timing r;
  r.count = f();  // warm-up
  for (int i = 0; i < repeat; ++i) {
    const double t0 = nowMs(), c0 = cpuMs();
    f();
    t.push_back(nowMs() - t0);
    c.push_back(cpuMs() - c0);
  }
  r.ms = medianOf(t);
  r.cpuMs = medianOf(c);
  return r;
}

void printTiming(const char* name, const Timing& t, bool comma = true) {
  std::printf("      \"%s\": {\"median_ms\": %.3f, \"median_cpu_time_ms\": %.3f, \"count\": %zu",
              name, t.ms, t.cpuMs, t.count);
  if (t.gpuMs >= 0) std::printf(", \"gpu_median_ms\": %.4f", t.gpuMs);
  std::printf("}%s\n", comma ? "," : "");
}

#if VIDMAP_HAVE_CUDA
// GPU ms per call of each kernel name (all launches of a call summed), over `calls` calls.
void printKernels(gpu::Context& ctx, int calls) {
  std::printf("      \"cuda_kernels_ms_per_call\": {");
  bool first = true;
  for (const auto& k : ctx.profiler().stats()) {
    std::printf("%s\"%s\": %.4f", first ? "" : ", ", k.name.c_str(), k.gpuMs / calls);
    first = false;
  }
  std::printf("},\n");
}
#endif

Features padRandom(Features f, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  while (f.size() < n) {
    Keypoint k;
    k.x = u(rng) * 100, k.y = u(rng) * 100;
    f.keypoints.push_back(k);
    float d[128], s = 0;
    for (float& v : d) v = u(rng) * u(rng), s += v * v;
    for (float& v : d) f.descriptors.push_back(v / std::sqrt(s));
  }
  f.keypoints.resize(n);
  f.descriptors.resize(n * 128);
  return f;
}

}  // namespace

int run(int argc, char** argv) {
  int repeat = 7;
  bool gpuOnly = false;  // --gpu-only: the CUDA extraction alone (no CPU, OpenCV or matching)
  bool noCpu = false;    // --no-cpu: no CPU extraction or OpenCV SIFT
  bool bandsSweep = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--gpu-only")) gpuOnly = true;
    if (!std::strcmp(argv[i], "--no-cpu")) noCpu = true;
    if (!std::strcmp(argv[i], "--bands-sweep")) bandsSweep = true;
  }
#if VIDMAP_HAVE_OPENCV
  cv::setNumThreads(maxThreads());
#endif
  const bool cuda = cudaDeviceAvailable();
  std::printf("{\n  \"benchmark\": \"features\",\n  \"threads\": %d,\n  \"cuda_device\": %s,\n",
              maxThreads(), cuda ? "true" : "false");
  std::printf("  \"extraction\": [\n");
  const int sizes[2][3] = {{1280, 720, 2}, {1920, 1080, 1}};
  for (int s = 0; s < 2; ++s) {
    const int w = sizes[s][0], h = sizes[s][1];
    std::string source;
    GrayImage img = frame(w, h, sizes[s][2], "0005", &source);
    std::printf("    {\"width\": %d, \"height\": %d, \"source\": \"%s\",\n", w, h, source.c_str());
    SiftOptions o;
    o.backend = Backend::kCpu;
    Sift cpu(o);
    SiftStats st{};
    auto tc = timeIt(gpuOnly || noCpu ? 0 : repeat, [&] {
      auto r = cpu.extract(img);
      st = r.stats;
      return r.features.size();
    });
    printTiming("vidmap_cpu", tc);
    std::printf(
        "      \"vidmap_cpu_stages_ms_last\": {\"gaussians_dog\": %.2f, \"gradients\": %.2f, "
        "\"extrema\": %.2f, \"orientations\": %.2f, \"descriptors\": %.2f},\n",
        st.msGaussians, st.msDogGradients, st.msExtrema, st.msOrientations, st.msDescriptors);
#if VIDMAP_HAVE_CUDA
    if (cuda) {
      gpu::Context ctx(0);
      SiftCuda gpu{ctx};
      std::vector<double> g;
      SiftStats st;
      auto tg = timeIt(repeat, [&] {
        float ms = 0;
        size_t n = gpu.extract(constView(img.view()), o, &st, &ms).size();
        g.push_back(ms);
        return n;
      });
      g.erase(g.begin());
      tg.gpuMs = medianOf(g);
      printTiming("vidmap_cuda", tg);
      printKernels(ctx, repeat + 1);
      // The same calls with the kernel profiler off: its event pairs cost about 0.4 ms a
      // frame (docs/benchmarks.md), and without them the extractor may replay a CUDA graph.
      ctx.profiler().setEnabled(false);
      g.clear();
      auto tu = timeIt(repeat, [&] {
        float ms = 0;
        size_t n = gpu.extract(constView(img.view()), o, &st, &ms).size();
        g.push_back(ms);
        return n;
      });
      g.erase(g.begin());
      tu.gpuMs = medianOf(g);
      printTiming("vidmap_cuda_unprofiled", tu);
      std::printf("      \"vidmap_cuda_extrema\": %d, \"vidmap_cuda_oriented\": %d,\n", st.extrema,
                  st.oriented);
      // The frame as 8 bits (what a decoder hands over): uploaded as bytes and converted on
      // the device; the same features as its float image v / 255 (checked here, counted).
      std::vector<std::uint8_t> bytes(static_cast<size_t>(w) * h);
      GrayImage q(w, h, 0.0f);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const auto b =
              static_cast<std::uint8_t>(std::lround(std::clamp(img(x, y), 0.0f, 1.0f) * 255));
          bytes[static_cast<size_t>(y) * w + x] = b;
          q(x, y) = static_cast<float>(b) / 255;
        }
      const ImageView<const std::uint8_t> v8{bytes.data(), w, h, w};
      const Features fq = gpu.extract(constView(q.view()), o, &st);
      const Features fb = gpu.extract(v8, o, &st);
      bool same = fq.size() == fb.size() && fq.descriptors == fb.descriptors;
      for (size_t i = 0; same && i < fq.size(); ++i)
        same = fq.keypoints[i].x == fb.keypoints[i].x && fq.keypoints[i].y == fb.keypoints[i].y &&
               fq.keypoints[i].scale == fb.keypoints[i].scale &&
               fq.keypoints[i].orientation == fb.keypoints[i].orientation;
      g.clear();
      auto tq = timeIt(repeat, [&] {
        float ms = 0;
        size_t n = gpu.extract(constView(q.view()), o, &st, &ms).size();
        g.push_back(ms);
        return n;
      });
      g.erase(g.begin());
      tq.gpuMs = medianOf(g);
      printTiming("vidmap_cuda_unprofiled_quantized_float", tq);
      g.clear();
      auto tb = timeIt(repeat, [&] {
        float ms = 0;
        size_t n = gpu.extract(v8, o, &st, &ms).size();
        g.push_back(ms);
        return n;
      });
      g.erase(g.begin());
      tb.gpuMs = medianOf(g);
      printTiming("vidmap_cuda_unprofiled_bytes", tb);
      std::printf("      \"vidmap_cuda_bytes_equal_quantized_float\": %s,\n",
                  same ? "true" : "false");
      // The frame as RGB8 (what the pipeline's frame sources hand over, io::Frame::rgb): its
      // float gray is io::lumaRec601 on the host (io::Frame::gray), and the RGB8 entry uploads
      // the 3 bytes a pixel and makes the same luma on the device (checked here, counted).
      auto byteOf = [](float v) {
        return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255));
      };
      RgbImage rgb(w, h);
      GrayImage luma(w, h, 0.0f);
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const float v = img(x, y);
          const Rgb8 p{byteOf(v), byteOf(0.15f + 0.7f * v * v), byteOf(1.0f - 0.8f * v)};
          rgb(x, y) = p;
          luma(x, y) = io::lumaRec601(p.r, p.g, p.b);
        }
      const ImageView<const Rgb8> vrgb = std::as_const(rgb).view();
      const Features fl = gpu.extract(constView(luma.view()), o, &st);
      const Features fr = gpu.extract(vrgb, o, &st);
      bool sameRgb = fl.size() == fr.size() && fl.descriptors == fr.descriptors;
      for (size_t i = 0; sameRgb && i < fl.size(); ++i)
        sameRgb = fl.keypoints[i].x == fr.keypoints[i].x &&
                  fl.keypoints[i].y == fr.keypoints[i].y &&
                  fl.keypoints[i].scale == fr.keypoints[i].scale &&
                  fl.keypoints[i].orientation == fr.keypoints[i].orientation &&
                  fl.keypoints[i].response == fr.keypoints[i].response;
      g.clear();
      auto tl = timeIt(repeat, [&] {
        float ms = 0;
        size_t n = gpu.extract(constView(luma.view()), o, &st, &ms).size();
        g.push_back(ms);
        return n;
      });
      g.erase(g.begin());
      tl.gpuMs = medianOf(g);
      printTiming("vidmap_cuda_unprofiled_luma_float", tl);
      g.clear();
      auto tr = timeIt(repeat, [&] {
        float ms = 0;
        size_t n = gpu.extract(vrgb, o, &st, &ms).size();
        g.push_back(ms);
        return n;
      });
      g.erase(g.begin());
      tr.gpuMs = medianOf(g);
      printTiming("vidmap_cuda_unprofiled_rgb8", tr);
      std::printf("      \"vidmap_cuda_rgb8_equal_host_luma\": %s,\n", sameRgb ? "true" : "false");
      if (bandsSweep) {
        // The RGB8 frame uploaded in B bands (the first octave made band by band as they
        // arrive); B = 1 is the frame in one piece.
        std::printf("      \"vidmap_cuda_unprofiled_rgb8_bands\": [");
        gpu.setUploadBands(1);
        const Features one = gpu.extract(vrgb, o, &st);
        for (int b : {1, 2, 3, 4, 6, 8, 12, 16}) {
          gpu.setUploadBands(b);
          const Features fb = gpu.extract(vrgb, o, &st);
          bool sameBands = fb.size() == one.size() && fb.descriptors == one.descriptors;
          for (size_t i = 0; sameBands && i < fb.size(); ++i)
            sameBands = fb.keypoints[i].x == one.keypoints[i].x &&
                        fb.keypoints[i].y == one.keypoints[i].y &&
                        fb.keypoints[i].scale == one.keypoints[i].scale &&
                        fb.keypoints[i].orientation == one.keypoints[i].orientation &&
                        fb.keypoints[i].response == one.keypoints[i].response;
          g.clear();
          auto tb = timeIt(repeat, [&] {
            float ms = 0;
            size_t n = gpu.extract(vrgb, o, &st, &ms).size();
            g.push_back(ms);
            return n;
          });
          g.erase(g.begin());
          std::printf(
              "%s\n        {\"bands\": %d, \"median_ms\": %.3f, \"gpu_median_ms\": %.4f, "
              "\"equal_one_band\": %s}",
              b == 1 ? "" : ",", b, tb.ms, medianOf(g), sameBands ? "true" : "false");
        }
        std::printf("],\n");
        gpu.setUploadBands(0);
        // Smaller extrema lists (a fresh extractor whose first list has room for `cap`; a frame
        // with more is redone with room, the same features): the sort's length is 4 x cap.
        std::printf("      \"vidmap_cuda_unprofiled_rgb8_extrema_capacity\": [");
        for (int cap : {8192, 16384}) {
          SiftCuda small{ctx};
          small.setInitialExtremaCapacity(cap);
          const Features fc = small.extract(vrgb, o, &st);
          const bool sameCap = fc.size() == one.size() && fc.descriptors == one.descriptors;
          g.clear();
          auto tc2 = timeIt(repeat, [&] {
            float ms = 0;
            size_t n = small.extract(vrgb, o, &st, &ms).size();
            g.push_back(ms);
            return n;
          });
          g.erase(g.begin());
          std::printf(
              "%s\n        {\"capacity\": %d, \"median_ms\": %.3f, \"gpu_median_ms\": "
              "%.4f, \"equal_one_band\": %s}",
              cap == 8192 ? "" : ",", cap, tc2.ms, medianOf(g), sameCap ? "true" : "false");
        }
        std::printf("],\n");
      }
      // The profiled RGB8 frame: the upload and the conversion kernel on their own.
      ctx.profiler().reset();
      ctx.profiler().setEnabled(true);
      g.clear();
      auto tp = timeIt(repeat, [&] {
        float ms = 0;
        size_t n = gpu.extract(vrgb, o, &st, &ms).size();
        g.push_back(ms);
        return n;
      });
      g.erase(g.begin());
      tp.gpuMs = medianOf(g);
      printTiming("vidmap_cuda_rgb8", tp);
      printKernels(ctx, repeat + 1);
    }
#endif
#if VIDMAP_HAVE_OPENCV
    if (!gpuOnly && !noCpu) {
      cv::Mat m = bench::toCv8(img);
      auto sift = cv::SIFT::create(4096);
      auto tcv = timeIt(repeat, [&] {
        std::vector<cv::KeyPoint> k;
        cv::Mat d;
        sift->detectAndCompute(m, cv::noArray(), k, d);
        return k.size();
      });
      printTiming("opencv", tcv);
      std::printf("      \"cpu_over_opencv\": %.3f, \"cpu_over_opencv_cpu_time\": %.3f,\n",
                  tc.ms / tcv.ms, tc.cpuMs / tcv.cpuMs);
    }
#endif
    std::printf("      \"end\": null}%s\n", s == 0 ? "," : "");
  }
  std::printf("  ],\n");
  if (gpuOnly) {
    std::printf("  \"end\": null\n}\n");
    return 0;
  }

  // Matching 4096 x 4096: real descriptors (fountain 4 and 5 at half size), padded with random
  // unit descriptors if an image has fewer.
  std::string src;
  SiftOptions o;
  o.backend = Backend::kCpu;
  Sift sift(o);
  Features a = padRandom(sift.extract(frame(1536, 1024, 2, "0004", &src)).features, 4096, 1);
  Features b = padRandom(sift.extract(frame(1536, 1024, 2, "0005", &src)).features, 4096, 2);
  std::printf("  \"matching\": {\"na\": %zu, \"nb\": %zu, \"source\": \"%s\",\n", a.size(),
              b.size(), src.c_str());
  MatchOptions mo;
  mo.backend = Backend::kCpu;
  Matcher cm(mo);
  std::vector<Match> cpuMatches;
  auto tm = timeIt(repeat, [&] {
    cpuMatches = cm.match(a, b);
    return cpuMatches.size();
  });
  printTiming("vidmap_cpu", tm);
#if VIDMAP_HAVE_CUDA
  if (cuda) {
    gpu::Context ctx(0);
    MatchCuda gm{ctx};
    MatchProblem p;
    p.a = a.descriptors.data(), p.na = 4096, p.b = b.descriptors.data(), p.nb = 4096;
    p.segments = {0, 4096};
    std::vector<double> g;
    std::vector<Match> cudaMatches;
    auto tg = timeIt(repeat, [&] {
      float ms = 0;
      cudaMatches = gm.match(p, mo, &ms)[0];
      g.push_back(ms);
      return cudaMatches.size();
    });
    g.erase(g.begin());
    tg.gpuMs = medianOf(g);
    printTiming("vidmap_cuda", tg);
    // The same pairs as the CPU matcher (distances may differ in the last bits: the GEMMs sum
    // in other orders).
    bool samePairs = cudaMatches.size() == cpuMatches.size();
    for (size_t i = 0; samePairs && i < cudaMatches.size(); ++i)
      samePairs = cudaMatches[i].a == cpuMatches[i].a && cudaMatches[i].b == cpuMatches[i].b;
    std::printf("      \"vidmap_cuda_pairs_equal_cpu\": %s,\n", samePairs ? "true" : "false");
    printKernels(ctx, repeat + 1);
    // Host input against device-resident descriptors (MatchCuda::keep: the pipeline's CUDA
    // path keeps SIFT's device copies; here uploaded once before the timing), both with the
    // kernel profiler off (its event pairs cost wall time), in the same minutes.
    ctx.profiler().setEnabled(false);
    std::vector<double> gh, gr;
    std::vector<Match> hostMatches, residentMatches;
    auto th = timeIt(repeat, [&] {
      float ms = 0;
      hostMatches = gm.match(p, mo, &ms)[0];
      gh.push_back(ms);
      return hostMatches.size();
    });
    gh.erase(gh.begin());
    th.gpuMs = medianOf(gh);
    printTiming("vidmap_cuda_host_input_unprofiled", th);
    const auto sa = std::make_shared<const Features>(a), sb = std::make_shared<const Features>(b);
    gm.keep(sa, nullptr, 2);
    gm.keep(sb, nullptr, 2);
    const float* da = gm.resident(*sa);
    const std::vector<const float*> db = {gm.resident(*sb)};
    const std::int64_t uploadedBefore = gm.uploadedBytes();
    auto tr = timeIt(repeat, [&] {
      float ms = 0;
      residentMatches = gm.match(p, mo, &ms, da, db)[0];
      gr.push_back(ms);
      return residentMatches.size();
    });
    gr.erase(gr.begin());
    tr.gpuMs = medianOf(gr);
    printTiming("vidmap_cuda_device_resident_unprofiled", tr);
    bool same = hostMatches.size() == residentMatches.size();
    for (size_t i = 0; same && i < hostMatches.size(); ++i)
      same = hostMatches[i].a == residentMatches[i].a && hostMatches[i].b == residentMatches[i].b &&
             hostMatches[i].distance == residentMatches[i].distance;
    std::printf("      \"device_resident_equals_host_input_bitwise\": %s,\n",
                same ? "true" : "false");
    std::printf("      \"device_resident_uploaded_bytes\": %lld,\n",
                static_cast<long long>(gm.uploadedBytes() - uploadedBefore));
    // The former path in the same minutes: the row top-2 and the columns' nearest rows read
    // back, the decisions on the host (MatchCuda::setHostDecision); its matches must be the same.
    std::vector<double> gd;
    std::vector<Match> hostDecided;
    gm.setHostDecision(true);
    auto td = timeIt(repeat, [&] {
      float ms = 0;
      hostDecided = gm.match(p, mo, &ms, da, db)[0];
      gd.push_back(ms);
      return hostDecided.size();
    });
    gm.setHostDecision(false);
    gd.erase(gd.begin());
    td.gpuMs = medianOf(gd);
    printTiming("vidmap_cuda_device_resident_host_decisions_unprofiled", td);
    bool sameDecisions = hostDecided.size() == residentMatches.size();
    for (size_t i = 0; sameDecisions && i < hostDecided.size(); ++i)
      sameDecisions = hostDecided[i].a == residentMatches[i].a &&
                      hostDecided[i].b == residentMatches[i].b &&
                      hostDecided[i].distance == residentMatches[i].distance;
    std::printf("      \"device_decisions_equal_host_decisions_bitwise\": %s,\n",
                sameDecisions ? "true" : "false");
    // Where the wall goes (MatchCuda::Breakdown), medians over the repeats: host input and
    // resident with the decisions on the device, resident with them on the host.
    gm.setBreakdown(true);
    const auto breakdown = [&](const char* name, bool resident, bool hostDecisions) {
      gm.setHostDecision(hostDecisions);
      std::vector<double> f[8];
      for (int r = 0; r <= repeat; ++r) {
        const double t0 = nowMs();
        if (resident)
          gm.match(p, mo, nullptr, da, db);
        else
          gm.match(p, mo);
        const double wall = nowMs() - t0;
        if (r == 0) continue;  // warm-up
        const MatchCuda::Breakdown& b = gm.lastBreakdown();
        const double v[8] = {wall,
                             b.setupMs,
                             b.enqueueMs,
                             b.waitMs,
                             b.finishMs,
                             b.gemmMs,
                             b.rowTop2Ms + b.colBestMs,
                             b.decideMs};
        for (int k = 0; k < 8; ++k) f[k].push_back(v[k]);
      }
      std::printf(
          "      \"%s\": {\"wall_ms\": %.4f, \"host_setup_ms\": %.4f, \"host_enqueue_ms\": %.4f, "
          "\"host_wait_ms\": %.4f, \"host_finish_ms\": %.4f, \"gpu_gemm_ms\": %.4f, "
          "\"gpu_row_col_ms\": %.4f, \"gpu_decide_or_readback_ms\": %.4f},\n",
          name, medianOf(f[0]), medianOf(f[1]), medianOf(f[2]), medianOf(f[3]), medianOf(f[4]),
          medianOf(f[5]), medianOf(f[6]), medianOf(f[7]));
    };
    breakdown("breakdown_host_input", false, false);
    breakdown("breakdown_resident", true, false);
    breakdown("breakdown_resident_host_decisions", true, true);
    gm.setHostDecision(false);
    gm.setBreakdown(false);
  }
#endif
#if VIDMAP_HAVE_OPENCV
  {
    cv::Mat da(4096, 128, CV_32F, a.descriptors.data()),
        db(4096, 128, CV_32F, b.descriptors.data());
    cv::BFMatcher bf(cv::NORM_L2);
    auto tcv = timeIt(repeat, [&] {
      std::vector<std::vector<cv::DMatch>> knn;
      bf.knnMatch(da, db, knn, 2);
      size_t n = 0;
      for (auto& k : knn) n += k.size() == 2 && k[0].distance < 0.8f * k[1].distance;
      return n;
    });
    printTiming("opencv_bf_knn2_ratio", tcv);
    std::printf("    \"cpu_over_opencv\": %.3f, \"cpu_over_opencv_cpu_time\": %.3f,\n",
                tm.ms / tcv.ms, tm.cpuMs / tcv.cpuMs);
  }
#endif
  std::printf("    \"end\": null}\n}\n");
  return 0;
}

// Errors (an unreadable data file, a CUDA failure) end the benchmark with one line naming
// them, not with std::terminate.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "\nfeatures_bench: error: %s\n", e.what());
    return 1;
  }
}
