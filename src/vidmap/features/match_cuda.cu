// The CUDA matcher: cuBLAS SGEMM of the descriptors (FP32, no tensor-core rounding), then one
// warp per (row, segment) for the top-2 of the row and a 32 x 32 block per 32 columns for the
// columns' nearest rows, both with the shared functions of match_kernels.h; then the ratio /
// mutual / distance decisions on the device (kDecide, with isMatch: the CPU matcher's
// decideMatches), written straight into mapped pinned host memory, so a call ends with one
// stream synchronisation and a copy of the matches. Measured on the H200 in docs/benchmarks.md,
// "Matching 4096 x 4096 in 0.3 ms of wall (issue 15, helper match30)".
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

#include "vidmap/features/cuda_util.cuh"
#include "vidmap/features/match_cuda.h"
#include "vidmap/features/match_kernels.h"
#include "vidmap/gpu/event_timer.h"

namespace vidmap::features {
namespace {

// Largest block of the distance matrix held at once (floats): 256 Mi = 1 GiB.
constexpr long kMaxBlockElements = 256L << 20;

struct Guide {
  double F[9];
  double band;
  int sampson;
};

void checkBlas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("features cuda: ") + what + ": cuBLAS status " + std::to_string(s));
}

// One thread per descriptor. Staging 32 descriptors per warp through shared memory (coalesced
// loads, then each lane's sum in index order) measured the same on the H200 (19.2 us against
// 19.5 us for 4096): either way 128-256 warps for the whole GPU, each waiting on its loads
// (long scoreboard): latency-bound, kept in the simpler form.
__global__ void kNorms(const float* d, int n, float* norms) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) norms[i] = descriptorSquaredNorm(d + static_cast<long>(i) * 128);
}

__device__ inline bool allowed(const Guide* guides, const int* segOf, const float2* pa,
                               const float2* pb, int i, int j) {
  if (!guides) return true;
  const Guide& g = guides[segOf[j]];
  return epipolarDistance(g.F, pa[i].x, pa[i].y, pb[j].x, pb[j].y, g.sampson != 0) <= g.band;
}

// One warp per (row of the block, segment): lanes take columns j = seg0 + lane, + 32, ...
// in increasing order, then a butterfly of top2Merge (order independent: ties go to the
// lower index).
__global__ void kRowTop2(const float* S, int rows, int r0, int nb, const int* segments, int nseg,
                         const float* normA, const float* normB, const Guide* guides,
                         const int* segOf, const float2* pa, const float2* pb, Top2* out) {
  const long warp = (static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (warp >= static_cast<long>(rows) * nseg) return;  // whole warps exit together
  const int li = static_cast<int>(warp / nseg), k = static_cast<int>(warp % nseg);
  const int i = r0 + li;
  const float* s = S + static_cast<long>(li) * nb;
  Top2 t;
  for (int j = segments[k] + lane; j < segments[k + 1]; j += 32) {
    if (!allowed(guides, segOf, pa, pb, i, j)) continue;
    top2Push(t, squaredDistance(normA[i], normB[j], s[j]), j);
  }
  for (int off = 16; off > 0; off >>= 1) {
    Top2 o;
    o.d1 = __shfl_xor_sync(0xffffffffu, t.d1, off);
    o.d2 = __shfl_xor_sync(0xffffffffu, t.d2, off);
    o.j1 = __shfl_xor_sync(0xffffffffu, t.j1, off);
    t = top2Merge(t, o);
  }
  if (lane == 0) out[static_cast<long>(i) * nseg + k] = t;
}

// The nearest row of each column: a block takes 32 columns (threadIdx.x, coalesced rows of S)
// and splits the rows of the S block into kColChunks contiguous chunks (threadIdx.y). Each
// thread scans its chunk in row order keeping the strictly nearer, so the lowest row of a tie;
// then the chunk results are merged in chunk order into the running best of the earlier S
// blocks, again strictly nearer wins: the same row as one scan of all rows in order (a chunk's
// first minimum replaces the running best exactly when the scan would). The former one
// thread per column (32 blocks of 128 threads for 4096 columns) took 509 us on the H200,
// latency-bound on its chain of 4096 dependent loads at 6 % occupancy.
constexpr int kColChunks = 32;
__global__ void __launch_bounds__(32 * kColChunks)
    kColBest(const float* S, int rows, int r0, int nb, const float* normA, const float* normB,
             const Guide* guides, const int* segOf, const float2* pa, const float2* pb, float* colD,
             int* colI, bool first) {
  __shared__ float chunkD[kColChunks][33];
  __shared__ int chunkI[kColChunks][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int j = blockIdx.x * 32 + tx;
  const int per = (rows + kColChunks - 1) / kColChunks;
  const int lo = ty * per, hi = min(rows, lo + per);
  float best = kNoDistance;
  int bi = -1;
  if (j < nb) {
    const float nbj = normB[j];
    for (int li = lo; li < hi; ++li) {
      const int i = r0 + li;
      if (!allowed(guides, segOf, pa, pb, i, j)) continue;
      const float d = squaredDistance(normA[i], nbj, S[static_cast<long>(li) * nb + j]);
      if (d < best) best = d, bi = i;
    }
  }
  chunkD[ty][tx] = best;
  chunkI[ty][tx] = bi;
  __syncthreads();
  if (ty != 0 || j >= nb) return;
  // The first block of rows starts from nothing (no fill kernel before it).
  best = first ? kNoDistance : colD[j];
  bi = first ? -1 : colI[j];
  for (int c = 0; c < kColChunks; ++c)
    if (chunkD[c][tx] < best) best = chunkD[c][tx], bi = chunkI[c][tx];
  colD[j] = best;
  colI[j] = bi;
}

// decideMatches on the device, in one block: entry e = k * na + i (image k, row i: the order of
// decideMatches' output) is a match when isMatch says so. The block takes 1024 entries at a
// time (thread t entry e0 + t), places its matches by a block scan of the hits, stages them in
// shared memory and writes them out as consecutive words: out is mapped host memory, and
// scattered 12-byte stores cross the link as many partial writes (a first form, one run of
// entries per thread written in place, took 0.024 ms (CUDA events) for 4096 rows on the H200,
// docs/benchmarks.md, match30). Image k's matches start at segStart[k]; segStart[nseg] is the
// total. One block because the entries are few (na x images, tens of thousands at most) and a
// grid-wide scan costs a launch more.
constexpr int kDecideThreads = 1024;
static_assert(sizeof(Match) == 3 * sizeof(int), "Match is written as three words");
__global__ void __launch_bounds__(kDecideThreads)
    kDecide(const Top2* rowTop, const int* colBest, const int* segments, int na, int nseg,
            float ratio, float maxDistance, bool mutual, Match* out, int* segStart) {
  __shared__ int warpHits[kDecideThreads / 32];
  __shared__ int staged[3 * kDecideThreads];
  const long n = static_cast<long>(na) * nseg;
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  int* words = reinterpret_cast<int*>(out);
  long base = 0;  // matches of the earlier tiles
  for (long e0 = 0; e0 < n; e0 += kDecideThreads) {
    const long e = e0 + t;
    int k = 0, i = -1;
    Top2 r;
    bool hit = false;
    if (e < n) {
      k = static_cast<int>(e / na), i = static_cast<int>(e % na);
      r = rowTop[static_cast<long>(i) * nseg + k];
      hit = isMatch(r, colBest, i, ratio, maxDistance, mutual);
    }
    const unsigned ballot = __ballot_sync(0xffffffffu, hit);
    if (lane == 0) warpHits[w] = __popc(ballot);
    __syncthreads();
    if (w == 0) {  // inclusive scan of the warps' counts
      int s = warpHits[lane];
      for (int off = 1; off < 32; off <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, s, off);
        if (lane >= off) s += y;
      }
      warpHits[lane] = s;
    }
    __syncthreads();
    const int before = (w > 0 ? warpHits[w - 1] : 0) + __popc(ballot & ((1u << lane) - 1u));
    const int hits = warpHits[kDecideThreads / 32 - 1];
    if (i == 0) segStart[k] = static_cast<int>(base + before);
    if (hit) {
      staged[3 * before] = i;
      staged[3 * before + 1] = r.j1 - segments[k];
      staged[3 * before + 2] = __float_as_int(sqrtf(r.d1));  // correctly rounded, as std::sqrt
    }
    __syncthreads();
    for (int x = t; x < 3 * hits; x += kDecideThreads) words[3 * base + x] = staged[x];
    base += hits;
    __syncthreads();  // staged and warpHits are reused
  }
  if (t == 0) segStart[nseg] = static_cast<int>(base);
}

double hostMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// One features' descriptors kept on the device, then their squared norms (n x 128 + n floats,
// the norms made by kNorms when kept: the floats match() would make); `owner` tells when the
// features are gone (a new Features at the same address is not taken for them).
struct Resident {
  std::weak_ptr<const Features> owner;
  const Features* key = nullptr;
  int n = 0;
  gpu::DeviceBuffer<float> d;
};

struct MatchCuda::Impl {
  std::deque<Resident> store;  // oldest first
  std::int64_t uploaded = 0;   // descriptor bytes
  cuda::PinnedStage results;   // the row top-2 and the columns' nearest rows (host decisions)
  // The decisions' output, written by kDecide through the link: segment starts, then matches.
  cuda::PinnedStage matches{cudaHostAllocPortable | cudaHostAllocMapped};
  std::vector<int> segmentsOnDevice;  // what m.segments holds (uploaded when they change)
  std::vector<const float*> keptNormsB;
  bool hostDecision = false;
  bool breakdownOn = false;
  MatchCuda::Breakdown breakdown;
  cudaEvent_t events[5] = {};  // the breakdown's: GEMM, row top-2, column pass, decisions
  // The norms kept with descriptors d (a kept entry's), else null.
  const float* normsOf(const float* d) const {
    for (const Resident& r : store)
      if (r.d.data() == d) return d + static_cast<size_t>(r.n) * 128;
    return nullptr;
  }
  gpu::Context ctx;
  cudaStream_t stream;
  gpu::EventTimer timer;
  cublasHandle_t blas = nullptr;
  gpu::DeviceBuffer<float> a, b, normA, normB, S, colD;
  gpu::DeviceBuffer<int> colI, segments, segOf;
  gpu::DeviceBuffer<Top2> rowTop;
  gpu::DeviceBuffer<Guide> guides;
  gpu::DeviceBuffer<float2> pa, pb;

  explicit Impl(const gpu::Context& c)
      : ctx(c), stream(ctx.stream().handle()), timer(ctx.device()) {
    ctx.makeCurrent();
    checkBlas(cublasCreate(&blas), "cublasCreate");
    checkBlas(cublasSetStream(blas, stream), "cublasSetStream");
    // FP32 throughout (no TF32 tensor-core rounding), so distances follow the CPU's to float
    // rounding.
    checkBlas(cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  ~Impl() {
    if (blas) cublasDestroy(blas);
    for (cudaEvent_t e : events)
      if (e) cudaEventDestroy(e);
  }
  void mark(int k) {
    if (breakdownOn) VIDMAP_CUDA_CHECK(cudaEventRecord(events[k], stream));
  }
  float between(int a, int b) const {
    float ms = 0;
    VIDMAP_CUDA_CHECK(cudaEventElapsedTime(&ms, events[a], events[b]));
    return ms;
  }
  template <class T>
  T* ensure(gpu::DeviceBuffer<T>& buf, std::size_t n) {
    return cuda::ensure(ctx, buf, n);
  }
  gpu::KernelProfiler::Scope time(const char* kernel) {
    return ctx.profiler().time(kernel, stream);
  }
};

MatchCuda::MatchCuda(const gpu::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
MatchCuda::~MatchCuda() = default;

void MatchCuda::keep(const std::shared_ptr<const Features>& f, const float* deviceDescriptors,
                     int capacity) {
  Impl& m = *impl_;
  require(f != nullptr, "match: keepOnDevice of null features");
  auto& st = m.store;
  st.erase(std::remove_if(st.begin(), st.end(),
                          [&](const Resident& r) { return r.owner.expired() || r.key == f.get(); }),
           st.end());
  if (capacity <= 0) return;
  while (static_cast<int>(st.size()) >= capacity) st.pop_front();
  m.ctx.makeCurrent();
  Resident r;
  r.owner = f;
  r.key = f.get();
  r.n = static_cast<int>(f->size());
  const size_t floats = static_cast<size_t>(r.n) * 128;
  r.d = gpu::DeviceBuffer<float>(m.ctx, floats + r.n + 1);
  if (deviceDescriptors) {
    // From another context's memory too (unified addressing); synchronised below, so the
    // source may be overwritten once this returns.
    if (floats)
      VIDMAP_CUDA_CHECK(cudaMemcpyAsync(r.d.data(), deviceDescriptors, floats * sizeof(float),
                                        cudaMemcpyDefault, m.stream));
  } else {
    cuda::upload(r.d.data(), f->descriptors.data(), floats, m.stream);
    m.uploaded += static_cast<std::int64_t>(floats * sizeof(float));
  }
  if (r.n) {
    kNorms<<<cuda::blocksFor(r.n, 256), 256, 0, m.stream>>>(r.d.data(), r.n, r.d.data() + floats);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  m.ctx.synchronize();
  st.push_back(std::move(r));
}

const float* MatchCuda::resident(const Features& f) const {
  for (const Resident& r : impl_->store)
    if (r.key == &f && !r.owner.expired() && r.n == static_cast<int>(f.size())) return r.d.data();
  return nullptr;
}

std::int64_t MatchCuda::uploadedBytes() const { return impl_->uploaded; }

void MatchCuda::setBreakdown(bool on) {
  Impl& m = *impl_;
  m.ctx.makeCurrent();
  for (cudaEvent_t& e : m.events)
    if (on && !e) VIDMAP_CUDA_CHECK(cudaEventCreate(&e));
  m.breakdownOn = on;
}

const MatchCuda::Breakdown& MatchCuda::lastBreakdown() const { return impl_->breakdown; }

void MatchCuda::setHostDecision(bool on) { impl_->hostDecision = on; }

std::vector<std::vector<Match>> MatchCuda::match(const MatchProblem& p, const MatchOptions& o,
                                                 float* gpuMilliseconds, const float* deviceA,
                                                 const std::vector<const float*>& deviceB) {
  Impl& m = *impl_;
  const double t0 = m.breakdownOn ? hostMs() : 0;
  m.ctx.makeCurrent();
  const int nseg = static_cast<int>(p.segments.size()) - 1;
  std::vector<std::vector<Match>> out(std::max(nseg, 0));
  if (nseg <= 0 || p.na == 0 || p.nb == 0) return out;
  require(deviceB.empty() || static_cast<int>(deviceB.size()) == nseg,
          "match: " + std::to_string(deviceB.size()) + " device descriptor arrays for " +
              std::to_string(nseg) + " images");
  const cudaStream_t st = m.stream;
  const auto kept = [&](int k) { return !deviceB.empty() && deviceB[k] != nullptr; };
  // Resident descriptors are read where they are: the query's, and one image's; those of
  // several images are copied device to device into one matrix (the GEMM's B).
  const float* dA = deviceA;
  if (!dA) {
    float* a = m.ensure(m.a, static_cast<size_t>(p.na) * 128);
    cuda::upload(a, p.a, static_cast<size_t>(p.na) * 128, st);
    m.uploaded += static_cast<std::int64_t>(p.na) * 128 * sizeof(float);
    dA = a;
  }
  const float* dB = nseg == 1 && kept(0) ? deviceB[0] : nullptr;
  if (!dB) {
    float* b = m.ensure(m.b, static_cast<size_t>(p.nb) * 128);
    for (int k = 0; k < nseg; ++k) {
      // Runs of segments from the host go up in one copy each.
      int k1 = k + 1;
      while (!kept(k) && k1 < nseg && !kept(k1)) ++k1;
      const size_t off = static_cast<size_t>(p.segments[k]) * 128;
      const size_t n = static_cast<size_t>(p.segments[k1] - p.segments[k]) * 128;
      if (kept(k)) {
        if (n)
          VIDMAP_CUDA_CHECK(cudaMemcpyAsync(b + off, deviceB[k], n * sizeof(float),
                                            cudaMemcpyDeviceToDevice, st));
      } else {
        cuda::upload(b + off, p.b + off, n, st);
        m.uploaded += static_cast<std::int64_t>(n * sizeof(float));
      }
      k = k1 - 1;
    }
    dB = b;
  }
  // The segment offsets go up only when they change (a pageable copy waits for the host).
  int* dSeg = m.ensure(m.segments, p.segments.size());
  if (m.segmentsOnDevice != p.segments) {
    m.segmentsOnDevice.clear();  // left empty if the upload throws
    cuda::upload(dSeg, p.segments.data(), p.segments.size(), st);
    m.segmentsOnDevice = p.segments;
  }
  Guide* dGuides = nullptr;
  int* dSegOf = nullptr;
  float2* dPa = nullptr;
  float2* dPb = nullptr;
  std::vector<Guide> guides;
  std::vector<int> segOf;
  std::vector<float2> pa, pb;
  if (p.guides) {
    for (int k = 0; k < nseg; ++k) {
      Guide g;
      std::copy(p.guides[k].F.begin(), p.guides[k].F.end(), g.F);
      g.band = p.guides[k].bandPx;
      g.sampson = p.guides[k].sampson ? 1 : 0;
      guides.push_back(g);
      for (int j = p.segments[k]; j < p.segments[k + 1]; ++j) segOf.push_back(k);
    }
    for (int i = 0; i < p.na; ++i) pa.push_back({p.keypointsA[i].x, p.keypointsA[i].y});
    for (int j = 0; j < p.nb; ++j) pb.push_back({p.keypointsB[j].x, p.keypointsB[j].y});
    dGuides = m.ensure(m.guides, guides.size());
    dSegOf = m.ensure(m.segOf, segOf.size());
    dPa = m.ensure(m.pa, pa.size());
    dPb = m.ensure(m.pb, pb.size());
    cuda::upload(dGuides, guides.data(), guides.size(), st);
    cuda::upload(dSegOf, segOf.data(), segOf.size(), st);
    cuda::upload(dPa, pa.data(), pa.size(), st);
    cuda::upload(dPb, pb.data(), pb.size(), st);
  }
  const bool guided = p.guides != nullptr;
  const double t1 = m.breakdownOn ? hostMs() : 0;
  if (gpuMilliseconds) m.timer.start(st);
  // The norms of kept descriptors were made when they were kept (by kNorms: the same floats,
  // a row's norm depends on that row only); the others here.
  const float* nA = deviceA ? m.normsOf(deviceA) : nullptr;
  const float* nB = nullptr;
  m.keptNormsB.clear();
  for (size_t k = 0; k < deviceB.size(); ++k) m.keptNormsB.push_back(m.normsOf(deviceB[k]));
  const bool allKeptB = static_cast<int>(m.keptNormsB.size()) == nseg &&
                        std::all_of(m.keptNormsB.begin(), m.keptNormsB.end(),
                                    [](const float* n) { return n != nullptr; });
  if (allKeptB && nseg == 1) nB = m.keptNormsB[0];
  {
    auto scope = m.time(guided ? "match_guided_norms" : "match_norms");
    if (!nA) {
      float* n = m.ensure(m.normA, p.na);
      kNorms<<<cuda::blocksFor(p.na, 256), 256, 0, st>>>(dA, p.na, n);
      VIDMAP_CUDA_CHECK_LAUNCH();
      nA = n;
    }
    if (!nB) {
      float* n = m.ensure(m.normB, p.nb);
      if (allKeptB) {
        for (int k = 0; k < nseg; ++k)
          if (p.segments[k + 1] > p.segments[k])
            VIDMAP_CUDA_CHECK(cudaMemcpyAsync(n + p.segments[k], m.keptNormsB[k],
                                              (p.segments[k + 1] - p.segments[k]) * sizeof(float),
                                              cudaMemcpyDeviceToDevice, st));
      } else {
        kNorms<<<cuda::blocksFor(p.nb, 256), 256, 0, st>>>(dB, p.nb, n);
        VIDMAP_CUDA_CHECK_LAUNCH();
      }
      nB = n;
    }
  }
  float* colD = m.ensure(m.colD, p.nb);
  int* colI = m.ensure(m.colI, p.nb);
  Top2* rowTop = m.ensure(m.rowTop, static_cast<size_t>(p.na) * nseg);
  const int blockRows =
      static_cast<int>(std::max(1L, std::min<long>(p.na, kMaxBlockElements / p.nb)));
  float* S = m.ensure(m.S, static_cast<size_t>(blockRows) * p.nb);
  const float one = 1.0f, zero = 0.0f;
  m.mark(0);
  for (int r0 = 0; r0 < p.na; r0 += blockRows) {
    const int rows = std::min(blockRows, p.na - r0);
    // Column-major C (nb x rows) = B (nb x 128) * A_block^T (128 x rows): row-major S block.
    {
      auto scope = m.time(guided ? "match_guided_sgemm" : "match_sgemm");
      checkBlas(cublasSgemm(m.blas, CUBLAS_OP_T, CUBLAS_OP_N, p.nb, rows, 128, &one, dB, 128,
                            dA + static_cast<long>(r0) * 128, 128, &zero, S, p.nb),
                "cublasSgemm");
    }
    m.mark(1);
    const long warps = static_cast<long>(rows) * nseg;
    {
      auto scope = m.time(guided ? "match_guided_row_top2" : "match_row_top2");
      kRowTop2<<<cuda::blocksFor(warps * 32, 256), 256, 0, st>>>(
          S, rows, r0, p.nb, dSeg, nseg, nA, nB, dGuides, dSegOf, dPa, dPb, rowTop);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    m.mark(2);
    {
      auto scope = m.time(guided ? "match_guided_col_best" : "match_col_best");
      kColBest<<<cuda::blocksFor(p.nb, 32), dim3(32, kColChunks), 0, st>>>(
          S, rows, r0, p.nb, nA, nB, dGuides, dSegOf, dPa, dPb, colD, colI, r0 == 0);
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    m.mark(3);
  }
  if (gpuMilliseconds) m.timer.stop(st);
  const size_t nTop = static_cast<size_t>(p.na) * nseg;
  Top2* hTop = nullptr;
  int* hBest = nullptr;
  int* hStart = nullptr;
  Match* hMatches = nullptr;
  if (m.hostDecision) {
    // Read back through pinned memory (a pageable read goes through the driver's staging).
    char* h = m.results.ensure<char>(nTop * sizeof(Top2) + static_cast<size_t>(p.nb) * sizeof(int));
    hTop = reinterpret_cast<Top2*>(h);
    hBest = reinterpret_cast<int*>(h + nTop * sizeof(Top2));
    cuda::download(hTop, rowTop, nTop, st);
    cuda::download(hBest, colI, static_cast<size_t>(p.nb), st);
  } else {
    // The segment starts, then room for every row of every image to match.
    const size_t head = (static_cast<size_t>(nseg) + 1) * sizeof(int);
    const size_t skip = (head + alignof(Match) - 1) / alignof(Match) * alignof(Match);
    char* h = m.matches.ensure<char>(skip + nTop * sizeof(Match));
    hStart = reinterpret_cast<int*>(h);
    hMatches = reinterpret_cast<Match*>(h + skip);
    auto scope = m.time(guided ? "match_guided_decide" : "match_decide");
    kDecide<<<1, kDecideThreads, 0, st>>>(rowTop, colI, dSeg, p.na, nseg, o.ratio, o.maxDistance,
                                          o.mutual, m.matches.device(hMatches),
                                          m.matches.device(hStart));
    VIDMAP_CUDA_CHECK_LAUNCH();
  }
  m.mark(4);
  const double t2 = m.breakdownOn ? hostMs() : 0;
  m.ctx.synchronize();
  const double t3 = m.breakdownOn ? hostMs() : 0;
  if (gpuMilliseconds) *gpuMilliseconds = m.timer.elapsedMs();
  if (m.hostDecision) {
    out = decideMatches(std::vector<Top2>(hTop, hTop + nTop), std::vector<int>(hBest, hBest + p.nb),
                        p.segments, p.na, o);
  } else {
    for (int k = 0; k < nseg; ++k) out[k].assign(hMatches + hStart[k], hMatches + hStart[k + 1]);
  }
  if (m.breakdownOn) {
    Breakdown& b = m.breakdown;
    b.setupMs = t1 - t0;
    b.enqueueMs = t2 - t1;
    b.waitMs = t3 - t2;
    b.finishMs = hostMs() - t3;
    const bool single = blockRows >= p.na;
    b.gemmMs = single ? m.between(0, 1) : 0;
    b.rowTop2Ms = single ? m.between(1, 2) : 0;
    b.colBestMs = single ? m.between(2, 3) : 0;
    b.decideMs = m.between(3, 4);
  }
  return out;
}

}  // namespace vidmap::features
