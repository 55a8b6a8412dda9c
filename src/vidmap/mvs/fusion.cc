#include "vidmap/mvs/fusion.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/gpu/device.h"
#include "vidmap/mvs/fusion_kernels.h"
#include "vidmap/mvs/residency.h"

#if defined(VIDMAP_HAVE_CUDA)
#include "vidmap/mvs/fusion_cuda.h"
#endif

namespace vidmap::mvs {

void FusionOptions::check() const {
  checkRange("fusion.min_pixels", minPixels, 1, 1000);
  checkRange("fusion.max_reprojection_error", maxReprojectionError, 0.0, 1e3);
  checkRange("fusion.max_depth_error", maxDepthError, 0.0, 1.0);
  checkRange("fusion.max_normal_error_deg", maxNormalErrorDeg, 0.0, 180.0);
  checkRange("fusion.parallel_clustering_threads", parallelClusteringThreads, 0, 4096);
  checkRange<std::int64_t>("fusion.max_gpu_memory", maxGpuMemory, 0, std::int64_t(1) << 50);
}

namespace {

Eigen::Vector3d worldPoint(const View& V, const DepthMap& M, long p) {
  const float d = M.depth[p];
  const int x = static_cast<int>(p % M.width), y = static_cast<int>(p / M.width);
  return V.R.transpose() * (Eigen::Vector3d((x - V.cx) / V.fx * d, (y - V.cy) / V.fy * d, d) - V.t);
}

Eigen::Vector3d worldNormal(const View& V, const DepthMap& M, long p) {
  const long np = static_cast<long>(M.depth.size());
  return V.R.transpose() * Eigen::Vector3d(M.normal[p], M.normal[np + p], M.normal[2 * np + p]);
}

// The relative pose of a source to the reference, both ways: x_s = A x_r + b, x_r = Ai x_s + bi.
struct RelativePose {
  Eigen::Matrix3d A, Ai;
  Eigen::Vector3d b, bi;
};

// A stride coprime with n near n / golden ratio: i -> i * stride mod n permutes [0, n).
std::int64_t scatterStride(std::int64_t n) {
  std::int64_t s = std::max<std::int64_t>(1, static_cast<std::int64_t>(n * 0.618));
  while (std::gcd(s, n) != 1) ++s;
  return s;
}

RelativePose relativePose(const View& r, const View& s) {
  RelativePose p;
  p.A = s.R * r.R.transpose();
  p.b = s.t - p.A * r.t;
  p.Ai = p.A.transpose();
  p.bi = -p.Ai * p.b;
  return p;
}

FuCamera fuCamera(const View& v) { return {v.fx, v.fy, v.cx, v.cy}; }

void toArray(const Eigen::Matrix3d& M, double* out) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out[3 * r + c] = M(r, c);
}

// The per-pixel parameters of reference r: its sources' relative poses and cameras, and the
// maps at the addresses mapOf gives (host or device; depth nullptr for a source without one).
template <class MapOf>
FuParams fuParams(const Workspace& ws, const std::vector<DepthMap>& maps, int r,
                  const FusionOptions& o, MapOf mapOf) {
  const View& V = ws.views[r];
  FuParams P;
  P.K = fuCamera(V);
  mapOf(r, &P.depth, &P.normal);
  P.width = maps[r].width, P.height = maps[r].height;
  P.numSources = static_cast<int>(V.sources.size());
  P.minPixels = o.minPixels;
  P.maxDepthError = o.maxDepthError;
  P.maxReproj2 = o.maxReprojectionError * o.maxReprojectionError;
  P.cosMax = std::cos(o.maxNormalErrorDeg * M_PI / 180.0);
  for (int k = 0; k < P.numSources; ++k) {
    const int s = V.sources[k];
    FuSource& S = P.src[k];
    if (s >= static_cast<int>(maps.size()) || maps[s].empty()) continue;  // no map: no match
    const RelativePose T = relativePose(V, ws.views[s]);
    toArray(T.A, S.A), toArray(T.Ai, S.Ai);
    for (int c = 0; c < 3; ++c) S.b[c] = T.b[c], S.bi[c] = T.bi[c];
    S.K = fuCamera(ws.views[s]);
    mapOf(s, &S.depth, &S.normal);
    S.width = maps[s].width, S.height = maps[s].height;
  }
  return P;
}

}  // namespace

// Two phases per reference view give the sequential algorithm's result with the heavy part in
// parallel: (1) for every pixel, the source pixel that agrees with it, per source, regardless
// of use (a pure function of the maps), kept only for pixels with enough agreeing sources to
// make a point; (2) clusters from the candidates not used yet, as if in pixel order (the
// decisions that depend on an earlier record are taken in order; the rest, the points and
// the bookkeeping in parallel: the comment at phase 2). Phase 2 of view
// r marks only pixels of other views and pixels it visits itself, so phase 1 may skip pixels
// used before it starts. Phase 1 works in the reference camera's frame with the relative poses
// computed once per pair (the same tests as in world coordinates, to rounding).
std::vector<io::PlyPoint> fuseDepthMaps(const Workspace& ws, const std::vector<DepthMap>& maps,
                                        const FusionOptions& o, FusionStats* stats) {
  o.check();
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n = ws.views.size();
  std::vector<std::vector<char>> used(n);
  for (size_t v = 0; v < n; ++v)
    if (v < maps.size() && !maps[v].empty()) used[v].assign(maps[v].depth.size(), 0);
  FusionStats st;
  std::vector<int> refs;
  for (size_t v = 0; v < n; ++v) {
    if (used[v].empty()) continue;
    refs.push_back(static_cast<int>(v));
    if (ws.views[v].sources.size() > static_cast<size_t>(kMaxSources))
      throw Error("fusion: view " + ws.views[v].name + " has " +
                  std::to_string(ws.views[v].sources.size()) + " sources, at most " +
                  std::to_string(kMaxSources));
  }
  bool useCuda = o.backend == Backend::kCuda;
  if (o.backend == Backend::kAuto) useCuda = gpu::deviceCount() > 0;
  st.backend = useCuda ? "cuda" : "cpu";
#if defined(VIDMAP_HAVE_CUDA)
  // Phase 1 on the device: the maps of each reference and its sources resident as the plan
  // says, the references in this function's order (the clusters depend on it).
  std::optional<gpu::Context> ctx;
  std::unique_ptr<FusionCuda> cuda;
  ResidencyPlan plan;
  int stepIndex = 0;
  if (useCuda && !refs.empty()) {
    ctx.emplace(o.device);
    const std::int64_t budget =
        o.maxGpuMemory > 0 ? o.maxGpuMemory : ctx->info().totalMemoryBytes / 10 * 8;
    std::vector<std::int64_t> bytes(n, 0);
    std::vector<std::string> names(n);
    std::vector<std::vector<int>> needs(n);
    std::int64_t maxPixels = 0;
    int maxSources = 1;
    for (int v : refs) {
      bytes[v] = FusionCuda::viewBytes(static_cast<std::int64_t>(maps[v].depth.size()));
      maxPixels = std::max<std::int64_t>(maxPixels, maps[v].depth.size());
      maxSources = std::max(maxSources, static_cast<int>(ws.views[v].sources.size()));
      needs[v].push_back(v);
      for (int s : ws.views[v].sources)
        if (!used[s].empty()) needs[v].push_back(s);
    }
    for (size_t v = 0; v < n; ++v) names[v] = ws.views[v].name;
    plan = planResidency(bytes, needs, refs, FusionCuda::workingBytes(maxPixels, maxSources),
                         budget, names, /*inGivenOrder=*/true);
    cuda = std::make_unique<FusionCuda>(*ctx);
    cuda->beginPass(maxPixels, maxSources);
  }
#else
  if (useCuda)
    throw Error("fusion: the CUDA backend was requested but vidmap was built without CUDA");
#endif
  std::vector<io::PlyPoint> points;
  // Per row of the reference: records of 1 + K words, the pixel's x then per source the
  // agreeing source pixel or -1.
  std::vector<std::vector<std::int32_t>> rows;
  std::vector<std::int64_t> rowValid;
  // Phase 2: per source slot, the first record holding each source pixel; per record, its
  // decision.
  constexpr std::int32_t kNoOwner = std::numeric_limits<std::int32_t>::max();
  constexpr char kFailed = 0, kFused = 1, kDependent = 2;
  std::vector<std::vector<std::int32_t>> owner;
  std::vector<char> state;
  double matchMs = 0, clusterMs = 0;
  for (size_t r = 0; r < n; ++r) {
    if (used[r].empty()) continue;
    const View& V = ws.views[r];
    const DepthMap& M = maps[r];
    const int K = static_cast<int>(V.sources.size());
    std::vector<char> live(K, 0);
    for (int k = 0; k < K; ++k) live[k] = !used[V.sources[k]].empty();
    rows.resize(std::max<size_t>(rows.size(), M.height));
    rowValid.assign(M.height, 0);
    // Rows in a scattered order: the static schedule gives each thread a contiguous range of
    // indices, and contiguous rows hold uneven work (sky, or nothing valid, at the top).
    const std::int64_t stride = scatterStride(M.height);
    const auto tm = std::chrono::steady_clock::now();
#if defined(VIDMAP_HAVE_CUDA)
    if (cuda) {
      // The step of reference r (the plan visits the references in this loop's order).
      const ResidencyStep& step = plan.steps[static_cast<size_t>(stepIndex++)];
      for (int v : step.evict) cuda->evict(v);
      for (int v : step.load) cuda->load(v, maps[v]);
      const FuParams P = fuParams(ws, maps, static_cast<int>(r), o,
                                  [&](int v, const float** d, const float** nrm) {
                                    *d = cuda->depthPtr(v), *nrm = cuda->normalPtr(v);
                                  });
      const std::int32_t* recs = nullptr;
      const std::int64_t count = cuda->match(P, &recs);
      // The records of row y are those with a pixel index in [y W, (y + 1) W): sorted.
      const std::int64_t W = M.width, step1 = 1 + K;
      auto firstAtLeast = [&](std::int64_t p) {
        std::int64_t lo = 0, hi = count;
        while (lo < hi) {
          const std::int64_t mid = (lo + hi) / 2;
          if (recs[mid * step1] < p)
            lo = mid + 1;
          else
            hi = mid;
        }
        return lo;
      };
      parallelFor(M.height, [&](std::int64_t i) {
        const std::int64_t y = i * stride % M.height;
        std::vector<std::int32_t>& rec = rows[y];
        rec.clear();
        const float* d = M.depth.data() + y * W;
        std::int64_t valid = 0;
        for (std::int64_t x = 0; x < W; ++x) valid += d[x] > 0;
        rowValid[y] = valid;
        const std::int64_t hi = firstAtLeast((y + 1) * W);
        for (std::int64_t j = firstAtLeast(y * W); j < hi; ++j) {
          const std::int32_t* e = recs + j * step1;
          if (used[r][e[0]]) continue;  // taken by an earlier reference's cluster
          rec.push_back(static_cast<std::int32_t>(e[0] - y * W));
          rec.insert(rec.end(), e + 1, e + step1);
        }
      });
    } else
#endif
    {
      const FuParams P = fuParams(ws, maps, static_cast<int>(r), o,
                                  [&](int v, const float** d, const float** nrm) {
                                    *d = maps[v].depth.data(), *nrm = maps[v].normal.data();
                                  });
      parallelFor(M.height, [&](std::int64_t i) {
        const std::int64_t y = i * stride % M.height;
        std::vector<std::int32_t>& rec = rows[y];
        rec.clear();
        std::int32_t q[kMaxSources];
        for (int x = 0; x < M.width; ++x) {
          const long p = static_cast<long>(y) * M.width + x;
          if (!(M.depth[p] > 0)) continue;
          ++rowValid[y];
          if (used[r][p]) continue;
          const int agree = fuMatchPixel(P, x, static_cast<int>(y), q);
          if (agree + 1 < o.minPixels) continue;  // members only fall in phase 2
          rec.push_back(x);
          rec.insert(rec.end(), q, q + K);
        }
      });
    }
    const auto tc = std::chrono::steady_clock::now();
    matchMs += std::chrono::duration<double, std::milli>(tc - tm).count();
    if (maxThreads() < o.parallelClusteringThreads || o.parallelClusteringThreads == 0) {
      // Phase 2 in pixel order, one thread.
      // Per source: its used flags, view and map, so the loop below indexes no nested vectors.
      std::vector<char*> usedOf(K);
      for (int k = 0; k < K; ++k) usedOf[k] = live[k] ? used[V.sources[k]].data() : nullptr;
      char* usedR = used[r].data();
      for (int y = 0; y < M.height; ++y) {
        st.validPixels += rowValid[y];
        const std::vector<std::int32_t>& rec = rows[y];
        st.records += static_cast<std::int64_t>(rec.size() / (1 + K));
        for (size_t i = 0; i < rec.size(); i += 1 + K) {
          const long p = static_cast<long>(y) * M.width + rec[i];
          const std::int32_t* cand = rec.data() + i + 1;
          int members = 1;
          for (int k = 0; k < K; ++k) members += cand[k] >= 0 && !usedOf[k][cand[k]];
          if (members < o.minPixels) continue;
          Eigen::Vector3d sx = worldPoint(V, M, p), sn = worldNormal(V, M, p);
          const Rgb8 c0 = V.rgb.data()[p];
          Eigen::Vector3d sc(c0.r, c0.g, c0.b);
          usedR[p] = 1;
          for (int k = 0; k < K; ++k) {
            const std::int32_t q = cand[k];
            if (q < 0 || usedOf[k][q]) continue;
            usedOf[k][q] = 1;
            const int s = V.sources[k];
            sx += worldPoint(ws.views[s], maps[s], q);
            sn += worldNormal(ws.views[s], maps[s], q);
            const Rgb8 c = ws.views[s].rgb.data()[q];
            sc += Eigen::Vector3d(c.r, c.g, c.b);
          }
          const double k = static_cast<double>(members);
          io::PlyPoint pt;
          const Eigen::Vector3d mx = sx / k, mn = sn.normalized(), mc = sc / k;
          for (int c = 0; c < 3; ++c) {
            pt.xyz[c] = static_cast<float>(mx[c]);
            pt.normal[c] = static_cast<float>(mn[c]);
            pt.rgb[c] = static_cast<std::uint8_t>(std::lround(mc[c]));
          }
          points.push_back(pt);
          st.fusedPixels += members;
        }
      }
    } else {
      // Phase 2 in parallel with the sequential result. A record's candidate q can be taken
      // only by records that hold q; the first of them in pixel order (q's owner) decides
      // first. (a) Candidates used by earlier references are dropped and each live one gets
      // its owner (atomic minimum of the record index). (b) A record that owns all its
      // candidates depends on no other record of this view: decided in parallel. (c) The
      // others, in pixel order, against the flags as (b) and earlier ones left them: the
      // sequential algorithm's decisions exactly. (d) Points in record order, in parallel.
      std::vector<char*> usedOf(K);
      for (int k = 0; k < K; ++k) usedOf[k] = live[k] ? used[V.sources[k]].data() : nullptr;
      std::vector<std::int64_t> first(M.height + 1, 0);  // the row's first record index
      for (int y = 0; y < M.height; ++y)
        first[y + 1] = first[y] + static_cast<std::int64_t>(rows[y].size() / (1 + K));
      const std::int64_t records = first[M.height];
      st.records += records;
      if (records >= std::numeric_limits<std::int32_t>::max())
        throw Error("fusion: too many candidate pixels in one view");
      std::int64_t maxSourcePixels = 0;
      for (int k = 0; k < K; ++k)
        if (live[k])
          maxSourcePixels =
              std::max<std::int64_t>(maxSourcePixels, maps[V.sources[k]].depth.size());
      owner.resize(std::max<size_t>(owner.size(), K));
      for (int k = 0; k < K; ++k)
        if (static_cast<std::int64_t>(owner[k].size()) < maxSourcePixels)
          owner[k].assign(maxSourcePixels, kNoOwner);
      state.assign(records, kFailed);
      const std::int64_t stride2 = scatterStride(M.height);
      parallelFor(M.height, [&](std::int64_t i) {  // (a)
        const std::int64_t y = i * stride2 % M.height;
        std::vector<std::int32_t>& rec = rows[y];
        for (size_t j = 0, idx = first[y]; j < rec.size(); j += 1 + K, ++idx)
          for (int k = 0; k < K; ++k) {
            std::int32_t& q = rec[j + 1 + k];
            if (q < 0) continue;
            if (usedOf[k][q]) {
              q = -1;
              continue;
            }
            std::atomic_ref<std::int32_t> a(owner[k][q]);
            std::int32_t cur = a.load(std::memory_order_relaxed);
            while (static_cast<std::int32_t>(idx) < cur &&
                   !a.compare_exchange_weak(cur, static_cast<std::int32_t>(idx),
                                            std::memory_order_relaxed)) {
            }
          }
      });
      parallelFor(M.height, [&](std::int64_t i) {  // (b)
        const std::int64_t y = i * stride2 % M.height;
        std::vector<std::int32_t>& rec = rows[y];
        for (size_t j = 0, idx = first[y]; j < rec.size(); j += 1 + K, ++idx) {
          const std::int32_t* cand = rec.data() + j + 1;
          int members = 1;
          bool alone = true;
          for (int k = 0; k < K; ++k)
            if (cand[k] >= 0) ++members, alone = alone && owner[k][cand[k]] == std::int32_t(idx);
          if (!alone) {
            state[idx] = kDependent;
          } else if (members >= o.minPixels) {
            state[idx] = kFused;  // its candidates are its own: no other record reads them here
            for (int k = 0; k < K; ++k)
              if (cand[k] >= 0) usedOf[k][cand[k]] = 1;
          }
        }
      });
      for (int y = 0; y < M.height; ++y) {  // (c)
        std::vector<std::int32_t>& rec = rows[y];
        for (size_t j = 0, idx = first[y]; j < rec.size(); j += 1 + K, ++idx) {
          if (state[idx] != kDependent) continue;
          ++st.dependentRecords;
          std::int32_t* cand = rec.data() + j + 1;
          int members = 1;
          for (int k = 0; k < K; ++k) members += cand[k] >= 0 && !usedOf[k][cand[k]];
          state[idx] = kFailed;
          if (members < o.minPixels) continue;
          state[idx] = kFused;
          for (int k = 0; k < K; ++k) {
            if (cand[k] < 0) continue;
            if (usedOf[k][cand[k]]) {
              // Taken by an earlier record, which owns q or comes after q's owner: this slot
              // is never q's owner, so clearing it keeps the owner reset below complete.
              cand[k] = -1;
            } else {
              usedOf[k][cand[k]] = 1;
            }
          }
        }
      }
      // (d) Output slots by a prefix count of the fused records, rows in order.
      std::vector<std::int64_t> fusedBefore(M.height + 1, 0);
      for (int y = 0; y < M.height; ++y) {
        std::int64_t c = 0;
        for (std::int64_t idx = first[y]; idx < first[y + 1]; ++idx) c += state[idx] == kFused;
        fusedBefore[y + 1] = fusedBefore[y] + c;
      }
      const size_t base = points.size();
      points.resize(base + static_cast<size_t>(fusedBefore[M.height]));
      std::vector<std::int64_t> rowFused(M.height, 0);
      char* usedR = used[r].data();
      parallelFor(M.height, [&](std::int64_t i) {
        const std::int64_t y = i * stride2 % M.height;
        std::vector<std::int32_t>& rec = rows[y];
        std::int64_t out = fusedBefore[y];
        for (size_t j = 0, idx = first[y]; j < rec.size(); j += 1 + K, ++idx) {
          const std::int32_t* cand = rec.data() + j + 1;
          if (state[idx] == kFused) {
            const long p = static_cast<long>(y) * M.width + rec[j];
            usedR[p] = 1;
            Eigen::Vector3d sx = worldPoint(V, M, p), sn = worldNormal(V, M, p);
            const Rgb8 c0 = V.rgb.data()[p];
            Eigen::Vector3d sc(c0.r, c0.g, c0.b);
            int members = 1;
            for (int k = 0; k < K; ++k) {
              const std::int32_t q = cand[k];
              if (q < 0) continue;
              const int s = V.sources[k];
              ++members;
              sx += worldPoint(ws.views[s], maps[s], q);
              sn += worldNormal(ws.views[s], maps[s], q);
              const Rgb8 c = ws.views[s].rgb.data()[q];
              sc += Eigen::Vector3d(c.r, c.g, c.b);
            }
            const double km = static_cast<double>(members);
            io::PlyPoint& pt = points[base + static_cast<size_t>(out++)];
            const Eigen::Vector3d mx = sx / km, mn = sn.normalized(), mc = sc / km;
            for (int c = 0; c < 3; ++c) {
              pt.xyz[c] = static_cast<float>(mx[c]);
              pt.normal[c] = static_cast<float>(mn[c]);
              pt.rgb[c] = static_cast<std::uint8_t>(std::lround(mc[c]));
            }
            rowFused[y] += members;
          }
          for (int k = 0; k < K; ++k) {  // owners back to none for the next reference
            if (cand[k] < 0) continue;
            std::atomic_ref<std::int32_t> a(owner[k][cand[k]]);  // other holders read it
            if (a.load(std::memory_order_relaxed) == std::int32_t(idx))
              a.store(kNoOwner, std::memory_order_relaxed);
          }
        }
      });
      for (int y = 0; y < M.height; ++y)
        st.validPixels += rowValid[y], st.fusedPixels += rowFused[y];
    }
    clusterMs +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tc).count();
  }
#if defined(VIDMAP_HAVE_CUDA)
  if (cuda) {
    cuda->endPass();
    st.planPeakBytes = plan.peakBytes;
    st.devicePeakBytes = ctx->memory().peakBytes();
    st.uploads = plan.uploads;
    st.kernels = ctx->profiler().stats();
  }
#endif
  st.points = static_cast<std::int64_t>(points.size());
  st.matchMs = matchMs;
  st.clusterMs = clusterMs;
  st.totalMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (stats) *stats = st;
  return points;
}

}  // namespace vidmap::mvs
