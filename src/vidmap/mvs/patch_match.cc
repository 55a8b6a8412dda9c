#include "vidmap/mvs/patch_match.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/gpu/device.h"
#include "vidmap/io/resize.h"

#if defined(VIDMAP_HAVE_CUDA)
#include "vidmap/mvs/patch_match_cuda.h"
#endif

namespace vidmap::mvs {

void PatchMatchOptions::check() const {
  checkRange("mvs.photometric_iterations", photometricIterations, 1, 100);
  checkRange("mvs.geometric_iterations", geometricIterations, 0, 100);
  checkRange("mvs.top_k", topK, 1, kMaxTopK);
  checkRange("mvs.sigma_color", sigmaColor, 1e-3f, 10.0f);
  checkRange("mvs.sigma_spatial", sigmaSpatial, 0.1f, 100.0f);
  checkRange("mvs.initial_perturbation", initialPerturbation, 0.0f, 1.0f);
  checkRange("mvs.geom_regularizer", geomRegularizer, 0.0f, 10.0f);
  checkRange("mvs.geom_max_cost", geomMaxCost, 0.1f, 100.0f);
  checkRange("mvs.max_cost", maxCost, 0.0f, 2.0f);
  checkRange<std::int64_t>("mvs.max_gpu_memory", maxGpuMemory, 0, std::int64_t(1) << 50);
  checkRange("mvs.fine_iterations", fineIterations, 1, 100);
}

void DepthMap::resize(int w, int h) {
  width = w, height = h;
  const size_t n = static_cast<size_t>(w) * h;
  depth.assign(n, 0.0f);
  normal.assign(3 * n, 0.0f);
  cost.assign(n, kMaxCost);
}

float perturbationAt(const PatchMatchOptions& o, int it) {
  return std::max(0.005f, o.initialPerturbation * std::ldexp(1.0f, -it));
}

namespace {

void toFloat(const Eigen::Matrix3d& m, float* out) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out[3 * r + c] = static_cast<float>(m(r, c));
}

PmCamera cameraOf(const View& v) {
  return {static_cast<float>(v.fx), static_cast<float>(v.fy), static_cast<float>(v.cx),
          static_cast<float>(v.cy)};
}

}  // namespace

PmParams makeParams(const Workspace& ws, int ref, bool geometric, const PatchMatchOptions& o,
                    const std::vector<const std::uint8_t*>& grayOf,
                    const std::vector<const float*>& depthOf) {
  const View& r = ws.views[ref];
  PmParams P;
  P.ref = {grayOf[ref], r.width, r.height, r.width};
  P.K = cameraOf(r);
  P.ifx = static_cast<float>(1.0 / r.fx), P.ify = static_cast<float>(1.0 / r.fy);
  Eigen::Matrix3d Krinv;
  Krinv << 1.0 / r.fx, 0, -r.cx / r.fx, 0, 1.0 / r.fy, -r.cy / r.fy, 0, 0, 1;
  P.numSources = std::min<int>(static_cast<int>(r.sources.size()), kMaxSources);
  P.topK = o.topK;
  P.geometric = geometric ? 1 : 0;
  P.depthMin = static_cast<float>(r.depthMin);
  P.depthMax = static_cast<float>(r.depthMax);
  P.perturbation = perturbationAt(o, 0);
  P.geomRegularizer = o.geomRegularizer;
  P.geomMaxCost = o.geomMaxCost;
  P.seed = o.seed * 2654435761u + static_cast<std::uint32_t>(ref) * 97u + (geometric ? 1u : 0u);
  const double sc = o.sigmaColor * 255.0;
  for (int d = 0; d < 256; ++d)
    P.colorWeight[d] = static_cast<float>(std::exp(-double(d) * d / (2 * sc * sc)));
  for (int j = 0; j < kWindowSide; ++j)
    for (int i = 0; i < kWindowSide; ++i) {
      double dx = pmWindowOffset(i), dy = pmWindowOffset(j);
      P.spatialWeight[j * kWindowSide + i] = static_cast<float>(
          std::exp(-(dx * dx + dy * dy) / (2.0 * o.sigmaSpatial * o.sigmaSpatial)));
    }
  for (int k = 0; k < P.numSources; ++k) {
    const int si = r.sources[k];
    const View& s = ws.views[si];
    PmSource& S = P.src[k];
    S.gray = {grayOf[si], s.width, s.height, s.width};
    S.gray.hwFilter = o.textures ? 1 : 0;
    S.K = cameraOf(s);
    // x_s = R_s (R_r^T (x_r - t_r)) + t_s
    Eigen::Matrix3d R = s.R * r.R.transpose();
    Eigen::Vector3d t = s.t - R * r.t;
    toFloat(R, S.R);
    toFloat(R.transpose(), S.Rinv);
    Eigen::Vector3d ti = -R.transpose() * t;
    for (int c = 0; c < 3; ++c)
      S.t[c] = static_cast<float>(t[c]), S.tinv[c] = static_cast<float>(ti[c]);
    // The homography's plane-free parts (pmHomography): K_s R K_r^-1 and -K_s t.
    Eigen::Matrix3d Ks;
    Ks << s.fx, 0, s.cx, 0, s.fy, s.cy, 0, 0, 1;
    toFloat(Ks * R * Krinv, S.A);
    const Eigen::Vector3d b = -(Ks * t);
    for (int c = 0; c < 3; ++c) S.nb[c] = static_cast<float>(b[c]);
    if (geometric) S.depth = {depthOf[si], s.width, s.height, s.width};
  }
  return P;
}

namespace {

// One row of the CPU twin. Its fused multiply-adds (pmFma: std::fma) are library calls unless
// the compiler may emit the instruction, so on x86-64 Linux the row has a clone for CPUs with
// FMA, chosen when the program loads: the same results (a fused multiply-add rounds once
// either way, and -ffp-contract=off fuses nothing else), without a call per multiply-add.
// `flatten` inlines the update into the row, so the clone's target reaches the kernels.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define VIDMAP_MVS_FMA_CLONES __attribute__((target_clones("fma", "default"), flatten))
#else
#define VIDMAP_MVS_FMA_CLONES
#endif

VIDMAP_MVS_FMA_CLONES void initRow(const PmParams& P, const PmState& S, bool initialise, int y) {
  float weights[kWindowSamples];
  for (int x = 0; x < S.width; ++x) {
    if (initialise)
      pmInitPixel<1>(P, S, x, y, weights);
    else
      pmRescorePixel<1>(P, S, x, y, weights);
  }
}

VIDMAP_MVS_FMA_CLONES void updateRow(const PmParams& P, const PmState& S, int colour, int it,
                                     int y) {
  float weights[kWindowSamples];
  const int half = (S.width + 1) / 2;
  for (int i = 0; i < half; ++i) {
    int px, py;
    if (pmColourPixel(y * half + i, colour, S.width, S.height, &px, &py))
      pmUpdatePixel<1>(P, S, px, py, it, weights);
  }
}

}  // namespace

void runReferenceCpu(const PmParams& Pin, bool initialise, int iterations,
                     const PatchMatchOptions& o, DepthMap* m) {
  PmParams P = Pin;
  PmState S{m->depth.data(),
            m->normal.data(),
            m->normal.data() + m->depth.size(),
            m->normal.data() + 2 * m->depth.size(),
            m->cost.data(),
            m->width,
            m->height};
  const int h = m->height;
  parallelFor(h, [&](std::int64_t y) { initRow(P, S, initialise, static_cast<int>(y)); });
  for (int it = 0; it < iterations; ++it) {
    P.perturbation = perturbationAt(o, it);
    for (int colour = 0; colour < 2; ++colour)
      parallelFor(h, [&](std::int64_t y) {
        updateRow(P, S, colour, 2 * it + colour, static_cast<int>(y));
      });
  }
}

void filterByCost(DepthMap* m, float maxCost) {
  for (size_t i = 0; i < m->depth.size(); ++i)
    if (!(m->cost[i] <= maxCost)) m->depth[i] = 0.0f;
}

int grayPitch(int width, int pitchAlign) {
  return (width + pitchAlign - 1) / pitchAlign * pitchAlign;
}

std::int64_t viewBytes(const View& v, bool geometric, int pitchAlign) {
  const std::int64_t px = static_cast<std::int64_t>(v.width) * v.height;
  return static_cast<std::int64_t>(grayPitch(v.width, pitchAlign)) * v.height +
         (geometric ? 4 * px : 0);
}

std::int64_t workingBytes(std::int64_t pixels) { return 5 * 4 * pixels; }

namespace {

std::vector<int> referencesOf(const Workspace& ws) {
  std::vector<int> refs;
  for (size_t i = 0; i < ws.views.size(); ++i)
    if (ws.isReference[i]) refs.push_back(static_cast<int>(i));
  return refs;
}

std::vector<std::vector<int>> needsOf(const Workspace& ws) {
  std::vector<std::vector<int>> needs(ws.views.size());
  for (size_t i = 0; i < ws.views.size(); ++i) {
    needs[i].push_back(static_cast<int>(i));
    for (size_t k = 0; k < ws.views[i].sources.size() && k < kMaxSources; ++k)
      needs[i].push_back(ws.views[i].sources[k]);
  }
  return needs;
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ResidencyPlan planPass(const Workspace& ws, bool geometric, std::int64_t budgetBytes,
                       int pitchAlign) {
  std::vector<std::int64_t> bytes;
  std::vector<std::string> names;
  for (const View& v : ws.views)
    bytes.push_back(viewBytes(v, geometric, pitchAlign)), names.push_back(v.name);
  std::vector<int> refs = referencesOf(ws);
  std::int64_t maxPixels = 0;
  for (int r : refs)
    maxPixels =
        std::max<std::int64_t>(maxPixels, std::int64_t(ws.views[r].width) * ws.views[r].height);
  return planResidency(bytes, needsOf(ws), refs, workingBytes(maxPixels), budgetBytes, names);
}

Workspace halfWorkspace(const Workspace& ws) {
  Workspace h;
  h.skipped = ws.skipped;
  h.isReference = ws.isReference;
  for (const View& v : ws.views) {
    View c;
    c.imageId = v.imageId, c.name = v.name, c.R = v.R, c.t = v.t;
    c.depthMin = v.depthMin, c.depthMax = v.depthMax, c.sources = v.sources;
    c.width = std::max(1, (v.width + 1) / 2), c.height = std::max(1, (v.height + 1) / 2);
    const double sx = double(c.width) / v.width, sy = double(c.height) / v.height;
    c.fx = v.fx * sx, c.fy = v.fy * sy;
    c.cx = (v.cx + 0.5) * sx - 0.5, c.cy = (v.cy + 0.5) * sy - 0.5;
    h.views.push_back(std::move(c));
  }
  // Gray only (PatchMatch reads nothing else), each pixel the mean of its 2x2 block (the last
  // column or row repeated for odd sizes), which is what the intrinsics above assume: about a
  // millisecond per megapixel, where resizing the colour image and converting it took tens.
  parallelFor(static_cast<std::int64_t>(ws.views.size()), [&](std::int64_t i) {
    const Image<std::uint8_t>& g = ws.views[i].gray;
    View& c = h.views[i];
    c.gray.resize(c.width, c.height);
    for (int y = 0; y < c.height; ++y) {
      const int y0 = std::min(2 * y, g.height() - 1), y1 = std::min(2 * y + 1, g.height() - 1);
      for (int x = 0; x < c.width; ++x) {
        const int x0 = std::min(2 * x, g.width() - 1), x1 = std::min(2 * x + 1, g.width() - 1);
        c.gray(x, y) =
            static_cast<std::uint8_t>((g(x0, y0) + g(x1, y0) + g(x0, y1) + g(x1, y1) + 2) / 4);
      }
    }
  });
  return h;
}

DepthMap upsampleNearest(const DepthMap& c, int width, int height) {
  DepthMap m;
  m.resize(width, height);
  const size_t n = static_cast<size_t>(width) * height,
               cn = static_cast<size_t>(c.width) * c.height;
  for (int y = 0; y < height; ++y) {
    const int cy = std::min(c.height - 1, static_cast<int>((y + 0.5) * c.height / height));
    for (int x = 0; x < width; ++x) {
      const int cx = std::min(c.width - 1, static_cast<int>((x + 0.5) * c.width / width));
      const size_t i = static_cast<size_t>(y) * width + x;
      const size_t j = static_cast<size_t>(cy) * c.width + cx;
      m.depth[i] = c.depth[j], m.cost[i] = c.cost[j];
      for (int k = 0; k < 3; ++k) m.normal[k * n + i] = c.normal[k * cn + j];
    }
  }
  return m;
}

namespace {

PatchMatchResult runPasses(const Workspace& ws, const PatchMatchOptions& o,
                           const std::vector<DepthMap>* init);

}  // namespace

PatchMatchResult runPatchMatch(const Workspace& ws, const PatchMatchOptions& o) {
  o.check();
  if (!o.multiResolution) return runPasses(ws, o, nullptr);
  // Half resolution, photometric only and unfiltered (every plane is a start).
  const auto t0 = std::chrono::steady_clock::now();
  const Workspace half = halfWorkspace(ws);
  PatchMatchOptions oc = o;
  oc.geometricIterations = 0;
  oc.maxCost = 2.0f;  // the cost's upper bound: nothing is dropped
  const PatchMatchResult coarse = runPasses(half, oc, nullptr);
  std::vector<DepthMap> init(ws.views.size());
  for (size_t i = 0; i < ws.views.size(); ++i)
    if (!coarse.photometric[i].empty())
      init[i] = upsampleNearest(coarse.photometric[i], ws.views[i].width, ws.views[i].height);
  const double coarseMs = msSince(t0);
  PatchMatchOptions of = o;
  of.photometricIterations = o.fineIterations;
  PatchMatchResult r = runPasses(ws, of, &init);
  r.stats.coarseMs = coarseMs;
  r.stats.photometricMs += coarseMs;
  r.stats.uploads += coarse.stats.uploads;
  r.stats.planPeakBytes = std::max(r.stats.planPeakBytes, coarse.stats.planPeakBytes);
  r.stats.devicePeakBytes = std::max(r.stats.devicePeakBytes, coarse.stats.devicePeakBytes);
  for (gpu::KernelStat k : coarse.stats.kernels) {
    k.name = "mvs_coarse" + k.name.substr(std::string("mvs_photometric").size());
    r.stats.kernels.push_back(k);
  }
  return r;
}

namespace {

PatchMatchResult runPasses(const Workspace& ws, const PatchMatchOptions& o,
                           const std::vector<DepthMap>* init) {
  const std::vector<int> refs = referencesOf(ws);
  if (refs.empty()) throw Error("mvs: no view can be a reference (every view was skipped)");
  bool useCuda = o.backend == Backend::kCuda;
  if (o.backend == Backend::kAuto) useCuda = gpu::deviceCount() > 0;
  PatchMatchResult res;
  const size_t n = ws.views.size();
  res.photometric.resize(n);
  res.stats.references = static_cast<int>(refs.size());
  const bool geometric = o.geometricIterations > 0;
  if (geometric) res.geometric.resize(n);

  if (!useCuda) {
    res.stats.backend = "cpu";
    std::vector<const std::uint8_t*> gray(n);
    std::vector<const float*> depth(n, nullptr);
    for (size_t i = 0; i < n; ++i) gray[i] = ws.views[i].gray.data();
    std::vector<DepthMap> unfiltered(n);
    auto t0 = std::chrono::steady_clock::now();
    for (int r : refs) {
      DepthMap& m = res.photometric[r];
      if (init)
        m = (*init)[r];
      else
        m.resize(ws.views[r].width, ws.views[r].height);
      runReferenceCpu(makeParams(ws, r, false, o, gray, depth), !init, o.photometricIterations, o,
                      &m);
      if (geometric) unfiltered[r] = m;
      filterByCost(&m, o.maxCost);
    }
    res.stats.photometricMs = msSince(t0);
    if (geometric) {
      // Sources that are not references have no depth: an empty map reads as "no depth".
      std::vector<DepthMap> blank(n);
      for (size_t i = 0; i < n; ++i) {
        if (res.photometric[i].empty()) blank[i].resize(ws.views[i].width, ws.views[i].height);
        depth[i] = (res.photometric[i].empty() ? blank[i] : res.photometric[i]).depth.data();
      }
      t0 = std::chrono::steady_clock::now();
      for (int r : refs) {
        DepthMap& m = res.geometric[r];
        // Restart from the unfiltered hypotheses: filtered pixels keep their plane.
        m = std::move(unfiltered[r]);
        runReferenceCpu(makeParams(ws, r, true, o, gray, depth), false, o.geometricIterations, o,
                        &m);
        filterByCost(&m, o.maxCost);
      }
      res.stats.geometricMs = msSince(t0);
    }
    return res;
  }
#if defined(VIDMAP_HAVE_CUDA)
  res.stats.backend = "cuda";
  gpu::Context ctx(o.device);
  std::int64_t budget = o.maxGpuMemory > 0 ? o.maxGpuMemory : ctx.info().totalMemoryBytes / 10 * 8;
  // Plans first: a budget too small for either pass fails before any work.
  PatchMatchCuda cuda(ctx, o.textures);
  const int align = cuda.pitchAlignment();
  ResidencyPlan plans[2] = {planPass(ws, false, budget, align), planPass(ws, true, budget, align)};
  // Filtered photometric depths are the geometric pass's source depths; the unfiltered
  // hypotheses its starting point.
  std::vector<DepthMap> unfiltered(n);
  std::vector<DepthMap> blank(n);
  for (int pass = 0; pass < (geometric ? 2 : 1); ++pass) {
    const bool geo = pass == 1;
    const ResidencyPlan& plan = plans[pass];
    auto t0 = std::chrono::steady_clock::now();
    std::int64_t maxPixels = plan.workingBytes / workingBytes(1);
    cuda.beginPass(maxPixels);
    // The host's share of a reference (the copy out of the pinned buffer, the copy of the
    // unfiltered planes, the filter) runs on a worker while the device computes the next
    // reference; the maps are allocated at once, in parallel, rather than one at a time
    // between the kernels.
    if (!geo && !init)
      parallelFor(static_cast<std::int64_t>(refs.size()), [&](std::int64_t i) {
        res.photometric[refs[i]].resize(ws.views[refs[i]].width, ws.views[refs[i]].height);
      });
    std::vector<std::future<void>> post;
    std::vector<const std::uint8_t*> gray(n, nullptr);
    std::vector<const float*> depth(n, nullptr);
    std::vector<PmGray> grayDev(n);
    for (const ResidencyStep& step : plan.steps) {
      for (int v : step.evict) cuda.evict(v);
      for (int v : step.load) {
        const DepthMap* d = nullptr;
        if (geo) {
          if (res.photometric[v].empty()) blank[v].resize(ws.views[v].width, ws.views[v].height);
          d = res.photometric[v].empty() ? &blank[v] : &res.photometric[v];
        }
        cuda.load(v, ws.views[v], d);
      }
      for (int v = 0; v < static_cast<int>(n); ++v) {
        grayDev[v] = cuda.gray(v);
        gray[v] = grayDev[v].data, depth[v] = cuda.depthPtr(v);
      }
      const int r = step.ref;
      DepthMap& m = geo ? res.geometric[r] : res.photometric[r];
      if (geo)
        m = std::move(unfiltered[r]);
      else if (init)
        m = (*init)[r];
      PmParams P = makeParams(ws, r, geo, o, gray, depth);
      P.ref.stride = grayDev[r].stride;
      for (int k = 0; k < P.numSources; ++k) {
        const PmGray& g = grayDev[ws.views[r].sources[k]];
        P.src[k].gray.stride = g.stride, P.src[k].gray.tex = g.tex;
      }
      cuda.launch(P, !geo && !init, geo ? o.geometricIterations : o.photometricIterations, o,
                  geo ? "geometric" : "photometric", m);
      // The previous reference's copy out of the pinned buffer ends while these kernels run,
      // before the download overwrites it.
      if (!post.empty()) post.back().wait();
      cuda.download();
      post.push_back(std::async(std::launch::async, [&, r, geo] {
        DepthMap& done = geo ? res.geometric[r] : res.photometric[r];
        cuda.copyOut(&done);
        if (!geo && geometric) unfiltered[r] = done;
        filterByCost(&done, o.maxCost);
      }));
    }
    for (std::future<void>& f : post) f.get();
    cuda.endPass();
    (geo ? res.stats.geometricMs : res.stats.photometricMs) = msSince(t0);
    res.stats.uploads += plan.uploads;
    res.stats.planPeakBytes = std::max(res.stats.planPeakBytes, plan.peakBytes);
  }
  res.stats.kernels = ctx.profiler().stats();
  res.stats.devicePeakBytes = ctx.memory().peakBytes();
  return res;
#else
  throw Error("mvs: the CUDA backend was requested but vidmap was built without CUDA");
#endif
}

}  // namespace

}  // namespace vidmap::mvs
