// The CUDA backend's kernels and class template (see cuda_backend.cu). Included by one .cu
// file per camera model, so the instantiations compile in parallel.
#pragma once

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vidmap/ba/backend.h"
#include "vidmap/ba/conjugate_gradients.h"
#include "vidmap/ba/dispatch.h"
#include "vidmap/ba/fold_maps.h"
#include "vidmap/ba/lm_step.h"
#include "vidmap/ba/schur.h"
#include "vidmap/ba/update.h"
#include "vidmap/core/error.h"
#include "vidmap/gpu/block_pool.h"
#include "vidmap/gpu/context.h"
#include "vidmap/gpu/cuda_check.cuh"
#include "vidmap/gpu/device.h"
#include "vidmap/gpu/device_buffer.h"

namespace vidmap::ba::cuda_detail {

inline void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw Error(std::string("bundle adjustment (cuSOLVER): ") + what + " failed, status " +
                std::to_string(static_cast<int>(s)));
}
#define VM_SOLVER(call) check((call), #call)

// One cuSOLVER handle per host thread and device, kept between solves: creating one (with the
// cuBLAS handle and workspace behind it) costs more than several LM iterations of a mapper's
// local window. A solve sets its stream on it.
inline cusolverDnHandle_t threadSolverHandle(int device) {
  struct Cache {
    cusolverDnHandle_t h = nullptr;
    int device = -1;
    ~Cache() {
      if (h) cusolverDnDestroy(h);
    }
  };
  thread_local Cache c;
  if (c.h && c.device != device) {
    cusolverDnDestroy(c.h);
    c.h = nullptr;
  }
  if (!c.h) {
    VM_SOLVER(cusolverDnCreate(&c.h));
    c.device = device;
  }
  return c.h;
}

// Pinned host memory of one solve's scalars, kept per host thread between solves (pinning
// costs a page-table update); a second solve alive on the same thread gets its own block.
class PinnedBlock {
 public:
  explicit PinnedBlock(size_t bytes) : bytes_(bytes) {
    Cache& c = cache();
    if (c.p && !c.inUse && c.bytes >= bytes) {
      p_ = c.p, c.inUse = true, cached_ = true;
    } else {
      VIDMAP_CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocDefault));
      if (!c.p && !c.inUse) c.p = p_, c.bytes = bytes, c.inUse = true, cached_ = true;
    }
    std::memset(p_, 0, bytes);
  }
  ~PinnedBlock() {
    if (cached_)
      cache().inUse = false;
    else if (p_)
      cudaFreeHost(p_);
  }
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  void* get() const { return p_; }

 private:
  struct Cache {
    void* p = nullptr;
    size_t bytes = 0;
    bool inUse = false;
    ~Cache() {
      if (p) cudaFreeHost(p);
    }
  };
  static Cache& cache() {
    thread_local Cache c;
    return c;
  }
  void* p_ = nullptr;
  size_t bytes_ = 0;
  bool cached_ = false;
};

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Where a solve's device arrays live: its context, and the calling thread's BlockPool when the
// caller gave the context (a mapper's solves then reuse the blocks of the ones before; see
// gpu/block_pool.h), or plain allocations freed at the end of the solve.
struct ArrayHome {
  gpu::Context* ctx = nullptr;
  gpu::BlockPool* pool = nullptr;
};

// A resizable device array on a context's stream. Uploads are queued (a pageable source is
// staged before cudaMemcpyAsync returns), so a solve's many uploads cost one wait, not one each.
template <class T>
class DeviceArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit DeviceArray(const ArrayHome& home) : home_(&home) {}
  ~DeviceArray() { release(); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void resize(size_t n) {
    if (n == n_ && (n == 0 || block_.ptr)) return;
    release();
    n_ = n;
    if (!n) return;
    const size_t bytes = n * sizeof(T);
    if (home_->pool)
      block_ = home_->pool->take(*home_->ctx, bytes);
    else
      block_ = {gpu::detail::allocateTracked(*home_->ctx->state(), bytes), bytes};
  }
  void upload(std::span<const T> v) {
    resize(v.size());
    if (n_)
      VIDMAP_CUDA_CHECK(
          cudaMemcpyAsync(data(), v.data(), n_ * sizeof(T), cudaMemcpyHostToDevice, stream()));
  }
  std::vector<T> download() const {
    std::vector<T> out(n_);
    if (n_) {
      VIDMAP_CUDA_CHECK(
          cudaMemcpyAsync(out.data(), data(), n_ * sizeof(T), cudaMemcpyDeviceToHost, stream()));
      VIDMAP_CUDA_CHECK(cudaStreamSynchronize(stream()));
    }
    return out;
  }
  void zero() {
    if (n_) VIDMAP_CUDA_CHECK(cudaMemsetAsync(data(), 0, n_ * sizeof(T), stream()));
  }
  void copyFrom(const DeviceArray& o) {
    resize(o.n_);
    if (n_)
      VIDMAP_CUDA_CHECK(
          cudaMemcpyAsync(data(), o.data(), n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream()));
  }
  T* data() { return n_ ? static_cast<T*>(block_.ptr) : nullptr; }
  const T* data() const { return n_ ? static_cast<const T*>(block_.ptr) : nullptr; }
  size_t size() const { return n_; }

 private:
  cudaStream_t stream() const { return home_->ctx->stream().handle(); }
  void release() {
    if (!block_.ptr) return;
    if (home_->pool)
      home_->pool->give(*home_->ctx, block_);
    else
      gpu::detail::releaseTracked(*home_->ctx->state(), block_.ptr, block_.bytes);
    block_ = {};
  }

  const ArrayHome* home_;
  gpu::BlockPool::Block block_;
  size_t n_ = 0;
};

constexpr int kThreads = 256;

template <class F>
__global__ void forEachKernel(int n, F f) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}

template <class F>
void forEach(cudaStream_t st, int n, F f) {
  if (n <= 0) return;
  forEachKernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, st>>>(n, f);
  VIDMAP_CUDA_CHECK_LAUNCH();
}

// Block b reduces [b * chunk, (b + 1) * chunk): each thread a fixed strided subset, then a tree.
template <bool kMax>
__global__ void reduceKernel(const double* v, int n, int chunk, double* out) {
  __shared__ double sh[kThreads];
  const int t = threadIdx.x;
  const int begin = blockIdx.x * chunk, end = min(n, begin + chunk);
  double s = 0.0;
  for (int i = begin + t; i < end; i += kThreads) s = kMax ? fmax(s, v[i]) : s + v[i];
  sh[t] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (t < w) sh[t] = kMax ? fmax(sh[t], sh[t + w]) : sh[t] + sh[t + w];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = sh[0];
}

// One block per group (CSR start/items), W values per item, summed by a fixed tree.
template <int W, int BS, class ItemF, class OutF>
__global__ void groupReduceKernel(const int* start, const int* items, ItemF itemF, OutF outF) {
  __shared__ double sh[W][BS];
  const int g = blockIdx.x, t = threadIdx.x;
  double acc[W];
  for (int w = 0; w < W; ++w) acc[w] = 0.0;
  for (int k = start[g] + t; k < start[g + 1]; k += BS) itemF(items[k], acc);
  for (int w = 0; w < W; ++w) sh[w][t] = acc[w];
  __syncthreads();
  for (int s = BS / 2; s > 0; s >>= 1) {
    if (t < s)
      for (int w = 0; w < W; ++w) sh[w][t] += sh[w][t + s];
    __syncthreads();
  }
  for (int w = t; w < W; w += BS) outF(g, w, sh[w][0]);
}

template <int W, int BS, class ItemF, class OutF>
void groupReduce(cudaStream_t st, int groups, const int* start, const int* items, ItemF itemF,
                 OutF outF) {
  if (groups <= 0) return;
  groupReduceKernel<W, BS><<<groups, BS, 0, st>>>(start, items, itemF, outF);
  VIDMAP_CUDA_CHECK_LAUNCH();
}

// B(g) = sum over the pairs of segment g of Jc_a' N(a, b): one thread per output element, the
// pairs in order (as accumulatePair on the CPU), staged through shared memory in tiles.
template <int C>
__global__ void segmentKernel(const int* segStart, const int* pairA, const int* pairB,
                              const double* rec, const double* P, bool schur, double* segB) {
  constexpr int RS = recordSize(C);
  constexpr int kTile = 32;
  __shared__ double sJa[kTile][2 * C];
  __shared__ double sN[kTile][2 * C];
  const int g = blockIdx.x, t = threadIdx.x;
  const int r = t / C, c = t % C;
  const bool active = t < C * C;
  double acc = 0.0;
  const double zeroP[6] = {0, 0, 0, 0, 0, 0};
  for (int base = segStart[g]; base < segStart[g + 1]; base += kTile) {
    const int n = min(kTile, segStart[g + 1] - base);
    if (t < n) {
      const int a = pairA[base + t], b = pairB[base + t];
      const double* ra = rec + static_cast<size_t>(a) * RS;
      pairFactor<C>(schur ? P + 6 * static_cast<size_t>(a) : zeroP,
                    rec + static_cast<size_t>(b) * RS, a == b, sN[t]);
      for (int k = 0; k < 2 * C; ++k) sJa[t][k] = ra[8 + k];
    }
    __syncthreads();
    if (active)
      for (int e = 0; e < n; ++e) acc += sJa[e][r] * sN[e][c] + sJa[e][C + r] * sN[e][C + c];
    __syncthreads();
  }
  if (active) segB[static_cast<size_t>(g) * C * C + t] = acc;
}

// Shared camera block of the Schur-Jacobi preconditioner (one block per shared camera):
// sum of Jint'Jint over its observations minus, per point, W Vinv W' (see cpu_backend.cc).
template <int C>
__global__ void sharedBlockKernel(int numObs, const int* obsImage, const int* imageShared,
                                  const int* sharedCams, int numVarPoints, const int* varPoints,
                                  const int* pointObsStart, const int* pointObs, const double* rec,
                                  const double* Vinv, bool schur,
                                  double* out /* K*K per shared camera */) {
  constexpr int K = C - kPoseDims;
  constexpr int RS = recordSize(C);
  constexpr int BS = 128;
  __shared__ double sh[K * K > 0 ? K * K : 1][BS];
  const int q = blockIdx.x, t = threadIdx.x;
  const int cam = sharedCams[q];
  double acc[K * K > 0 ? K * K : 1];
  for (int e = 0; e < K * K; ++e) acc[e] = 0.0;
  for (int a = t; a < numObs; a += BS) {
    if (imageShared[obsImage[a]] != cam) continue;
    const double* Ji = rec + static_cast<size_t>(a) * RS + 8 + kPoseDims;
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) acc[i * K + j] += Ji[i] * Ji[j] + Ji[C + i] * Ji[C + j];
  }
  if (schur)
    for (int v = t; v < numVarPoints; v += BS) {
      const int p = varPoints[v];
      double W[3 * (K > 0 ? K : 1)];
      for (int e = 0; e < 3 * K; ++e) W[e] = 0.0;
      bool any = false;
      for (int u = pointObsStart[p]; u < pointObsStart[p + 1]; ++u) {
        const int a = pointObs[u];
        if (imageShared[obsImage[a]] != cam) continue;
        any = true;
        const double* ra = rec + static_cast<size_t>(a) * RS;
        const double* Jp = ra + 2;
        const double* Ji = ra + 8 + kPoseDims;
        for (int i = 0; i < K; ++i)
          for (int k = 0; k < 3; ++k) W[i * 3 + k] += Ji[i] * Jp[k] + Ji[C + i] * Jp[3 + k];
      }
      if (!any) continue;
      const double* Vi = Vinv + 9 * static_cast<size_t>(p);
      for (int i = 0; i < K; ++i) {
        double wv[3];
        sym3Times(Vi, W + 3 * i, wv);
        for (int j = 0; j < K; ++j)
          acc[i * K + j] -= wv[0] * W[3 * j] + wv[1] * W[3 * j + 1] + wv[2] * W[3 * j + 2];
      }
    }
  for (int e = 0; e < K * K; ++e) sh[e][t] = acc[e];
  __syncthreads();
  for (int s = BS / 2; s > 0; s >>= 1) {
    if (t < s)
      for (int e = 0; e < K * K; ++e) sh[e][t] += sh[e][t + s];
    __syncthreads();
  }
  for (int e = t; e < K * K; e += BS) out[static_cast<size_t>(q) * K * K + e] = sh[e][0];
}

// The reduced system S y = r of a small problem (n <= Options::kOneBlockCholeskyColumnsLimit)
// factored and solved by one block, the matrix in shared memory: a right-looking Cholesky (Golub
// and Van Loan, "Matrix Computations", algorithm 4.2.1 in outer-product form), then the two
// triangular solves. cuSOLVER's potrf and potrs take three kernels of about 60 us together on the
// H200 whatever n (docs/benchmarks.md, "The kernels of an iteration"); a local BA's S has 36-60
// columns. S is read as column-major lower (the backend's row-major upper); info is
// potrf's (0, or j + 1 at the first pivot that is not positive: the step is refused),
// solveInfo potrs' (0). Another order of rounding than cuSOLVER's: another model.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    oneBlockCholeskySolve(const double* S, int n, const double* rhs, double* y, int* info,
                          int* solveInfo) {
  extern __shared__ double a[];  // n * n, column-major, lower triangle used; then z (n)
  double* z = a + n * n;
  __shared__ int bad;
  const int t = threadIdx.x;
  for (int e = t; e < n * n; e += kThreads) a[e] = S[e];
  for (int e = t; e < n; e += kThreads) z[e] = rhs[e];
  if (t == 0) bad = 0;
  __syncthreads();
  for (int j = 0; j < n; ++j) {
    if (t == 0) {
      const double d = a[j * n + j];
      if (d > 0.0)
        a[j * n + j] = sqrt(d);
      else
        bad = j + 1;
    }
    __syncthreads();
    if (bad) break;  // every thread reads the same flag after the barrier
    const double djj = a[j * n + j];
    for (int i = j + 1 + t; i < n; i += kThreads) a[j * n + i] /= djj;
    __syncthreads();
    // Trailing update of the lower triangle: a(i, k) -= l(i, j) l(k, j), j < k <= i.
    const int m = n - j - 1;
    for (int e = t; e < m * m; e += kThreads) {
      const int k = j + 1 + e / m, i = j + 1 + e % m;
      if (i >= k) a[k * n + i] -= a[j * n + i] * a[j * n + k];
    }
    __syncthreads();
  }
  if (t == 0) {
    *info = bad;
    *solveInfo = 0;
  }
  if (bad) return;
  // L w = r, column by column; then L' y = w, row by row from the last (l(j, i) at a[i n + j]).
  for (int j = 0; j < n; ++j) {
    if (t == 0) z[j] /= a[j * n + j];
    __syncthreads();
    for (int i = j + 1 + t; i < n; i += kThreads) z[i] -= a[j * n + i] * z[j];
    __syncthreads();
  }
  for (int j = n - 1; j >= 0; --j) {
    if (t == 0) z[j] /= a[j * n + j];
    __syncthreads();
    for (int i = t; i < j; i += kThreads) z[i] -= a[i * n + j] * z[j];
    __syncthreads();
  }
  for (int e = t; e < n; e += kThreads) y[e] = z[e];
}

template <CameraModel M, RotationType R, int C>
class CudaBackend final : public Backend {
  static constexpr int RS = recordSize(C);
  static constexpr int K = Projection<M>::kParams;

 public:
  explicit CudaBackend(const BackendInput& in)
      : ctx_(in.options->context ? *in.options->context : gpu::Context(0)),
        s_(*in.structure),
        o_(*in.options),
        explicit_(in.explicitSchur) {
    const double t0 = now();
    // A context the caller keeps (the mapper's): the thread's kept blocks are reused.
    if (in.options->context) home_.pool = &gpu::BlockPool::ofThisThread();
    loss_ = makeLoss(o_.loss, o_.lossScale);
    nObs_ = s_.numObs();
    nVar_ = static_cast<int>(s_.varPoints.size());
    nSeg_ = static_cast<int>(s_.segA.size());
    const Parameters x = extractParameters(*in.problem);
    rot_.upload(x.rotation), trans_.upload(x.translation), intr_.upload(x.intrinsics);
    pts_.upload(x.points);
    cRot_.copyFrom(rot_), cTrans_.copyFrom(trans_), cIntr_.copyFrom(intr_), cPts_.copyFrom(pts_);
    obsImage_.upload(s_.obsImage), obsPoint_.upload(s_.obsPoint), obsXY_.upload(s_.obsXY);
    imageCamera_.upload(s_.imageCamera), colMap_.upload(s_.colMap), pointCol_.upload(s_.pointCol);
    cameraCol_.upload(s_.cameraCol.empty() ? std::vector<int>{-1} : s_.cameraCol);
    varPoints_.upload(s_.varPoints.empty() ? std::vector<int>{0} : s_.varPoints);
    pointObsStart_.upload(s_.pointObsStart), pointObs_.upload(s_.pointObs);
    imageObsStart_.upload(s_.imageObsStart), imageObs_.upload(s_.imageObs);
    segStart_.upload(s_.segStart), pairA_.upload(s_.pairA), pairB_.upload(s_.pairB);
    imageShared_.upload(s_.imageShared);
    sharedCams_.upload(s_.sharedCameras.empty() ? std::vector<int>{-1} : s_.sharedCameras);
    std::vector<std::uint8_t> rv(s_.rotationVaries), tv(s_.translationVaries), cv(s_.cameraVaries);
    rotVaries_.upload(rv), transVaries_.upload(tv), camVaries_.upload(cv);
    const double t1 = now();
    buildFoldMaps();
    const double t2 = now();

    rec_.resize(static_cast<size_t>(nObs_) * RS);
    P_.resize(static_cast<size_t>(nObs_) * 6);
    P_.zero();
    u_.resize(static_cast<size_t>(nObs_) * 2);
    obsTmp_.resize(std::max(nObs_, 1));
    const size_t nE = static_cast<size_t>(s_.numImages) * C;
    for (auto* a : {&scaleE_, &gE_, &colE_, &rhsE_, &yE_, &xE_}) a->resize(std::max<size_t>(nE, 1));
    const size_t nF = std::max(s_.nF, 1);
    for (auto* a : {&scaleF_, &gF_, &colF_, &rhsF_, &yF_, &deltaF_, &D2F_}) a->resize(nF);
    std::vector<double> ones(s_.nF, 1.0);
    if (s_.nF) scaleF_.upload(ones);
    std::vector<double> sp(static_cast<size_t>(s_.numPoints) * 3, 0.0);
    for (int j : s_.varPoints) sp[3 * j] = sp[3 * j + 1] = sp[3 * j + 2] = 1.0;
    scaleP_.upload(sp);
    const size_t np = static_cast<size_t>(s_.numPoints);
    V0_.resize(np * 6), gP_.resize(np * 3), Vinv_.resize(np * 9), yP_.resize(np * 3);
    deltaP_.resize(np * 3);
    V0_.zero(), gP_.zero(), Vinv_.zero(), yP_.zero(), deltaP_.zero();
    segB_.resize(std::max<size_t>(static_cast<size_t>(nSeg_) * C * C, 1));
    itemTmp_.resize(
        std::max<size_t>({static_cast<size_t>(s_.numImages), static_cast<size_t>(s_.numCameras),
                          static_cast<size_t>(nVar_), 1}));
    partial_.resize(4096);
    scal_.resize(kNumSlots);
    scal_.zero();
    radius_.resize(1);
    host_ = static_cast<HostScalars*>(pinned_.get());
    // Graphs replay fixed launches: the explicit system (conjugate gradients decide on the host
    // as they go).
    graphs_ = o_.cudaGraphs && explicit_;
    if (explicit_ && s_.nF > 0) {
      S_.resize(static_cast<size_t>(s_.nF) * s_.nF);
      solver_ = threadSolverHandle(ctx_.device());
      VM_SOLVER(cusolverDnSetStream(solver_, st_));
      int lwork = 0;
      VM_SOLVER(cusolverDnDpotrf_bufferSize(solver_, CUBLAS_FILL_MODE_LOWER, s_.nF, S_.data(),
                                            s_.nF, &lwork));
      work_.resize(std::max(lwork, 1));
    }
    if (o_.verbose)
      std::fprintf(stderr, "ba cuda backend %.4fs: uploads %.4fs, fold maps %.4fs, rest %.4fs\n",
                   now() - t0, t1 - t0, t2 - t1, now() - t2);
  }

  ~CudaBackend() override {
    keepPlan(0, stepPlan_);
    keepPlan(1, linearizePlan_);
    if (solver_) cusolverDnSetStream(solver_, nullptr);  // the kept handle outlives our stream
  }

  bool linearize(bool computeScaling, double* cost, double* gradientMaxNorm) override {
    return linearizeSteps(*this, o_, computeScaling, cost, gradientMaxNorm, times);
  }

  // The graph path (Options::cudaGraphs, explicit system): the step, the candidate's Plus and
  // cost, and the read-back of their scalars are one replay and one wait; so are the
  // acceptance, the parameter norm and the linearisation at the new point. Otherwise the phases
  // of lm_step.h are launched one by one, each phase waited for (its time in the Summary).
  StepResult computeStep(double radius) override {
    if (!graphs_) return computeStepSteps(*this, explicit_, s_.nF, radius, times);
    const double t0 = now();
    StepResult res;
    host_->radius = radius;  // read by the replay's first copy
    runPlan(stepPlan_, "ba_step_graph", [&] {
      PhaseTimes queued;  // the time to queue the phases: the step is timed as a whole
      stepPhases(*this, explicit_, s_.nF, radius, queued, &res);
      candidatePhases();
      enqueueFetch();
    });
    VIDMAP_CUDA_CHECK(cudaStreamSynchronize(st_));
    candidateReady_ = true;
    const StepResult out = stepResult(stepChecksFromHost(), explicit_, s_.nF, true, res);
    times.schur += now() - t0;
    return out;
  }

  bool acceptAndLinearize(double* parameterNorm, double* cost, double* gradientMaxNorm) override {
    if (!graphs_) return Backend::acceptAndLinearize(parameterNorm, cost, gradientMaxNorm);
    const double t0 = now();
    runPlan(linearizePlan_, "ba_linearize_graph", [&] {
      acceptCandidate();
      parameterNormPhases();
      linearizePhases(*this, o_, false);
      enqueueFetch();
    });
    VIDMAP_CUDA_CHECK(cudaStreamSynchronize(st_));
    *parameterNorm = parameterNormScalar();
    const LinearizationScalars l = linearizationScalars();
    *cost = l.cost;
    *gradientMaxNorm = l.gradientMaxNorm;
    times.jacobian += now() - t0;
    return std::isfinite(l.cost);
  }

  std::string launchMode() const override {
    if (!graphs_) return graphNote_.empty() ? "phases" : "phases (" + graphNote_ + ")";
    return solverOutside_ ? "graphs, cuSOLVER outside (" + graphNote_ + ")" : "graphs";
  }

  // --- Scalars: every reduction lands in a slot of one device array, read back in one copy
  // into pinned memory when the host needs them.
  enum Slot {
    kCost,
    kGradImages,
    kGradCameras,
    kGradPoints,
    kNormImages,
    kNormCameras,
    kNormPoints,
    kPointsBad,
    kPreconditionerBad,
    kStepSum,
    kPointStepSum,
    kModelCostChange,
    kStepSqImages,
    kStepSqCameras,
    kStepSqPoints,
    kCandidateCost,
    kCg,
    kInfo,
    kInfoPotrs,
    kNumSlots
  };
  struct HostScalars {
    double v[kNumSlots];
    double radius;
  };
  double* slotPtr(int k) { return scal_.data() + k; }
  // cuSOLVER's int info in a double slot (zeroed before the int is written).
  int* infoSlot(int k) { return reinterpret_cast<int*>(scal_.data() + k); }
  int hostInfo(int k) const {
    int i = 0;
    std::memcpy(&i, &host_->v[k], sizeof(int));
    return i;
  }
  void enqueueFetch() {
    VIDMAP_CUDA_CHECK(
        cudaMemcpyAsync(host_->v, scal_.data(), sizeof(host_->v), cudaMemcpyDeviceToHost, st_));
  }
  void fetchScalars() {
    enqueueFetch();
    VIDMAP_CUDA_CHECK(cudaStreamSynchronize(st_));
  }
  StepChecks stepChecksFromHost() const {
    StepChecks c;
    c.pointsPositive = !(host_->v[kPointsBad] > 0.0);
    c.systemPositive = explicit_ ? hostInfo(kInfo) == 0 : !(host_->v[kPreconditionerBad] > 0.0);
    c.stepFinite = std::isfinite(host_->v[kStepSum]);
    c.pointStepFinite = std::isfinite(host_->v[kPointStepSum]);
    c.modelCostChange = host_->v[kModelCostChange];
    return c;
  }
  StepChecks stepChecks() {
    fetchScalars();
    return stepChecksFromHost();
  }

  // A profiler scope, except while a graph is captured (its events would be captured too: the
  // replay is timed as a whole instead).
  std::optional<gpu::KernelProfiler::Scope> timed(const char* name) {
    if (capturing_) return std::nullopt;
    return ctx_.profiler().time(name, ctx_.stream());
  }

  // --- Graphs. A plan is the replay of one batch: captured graphs, and between them (when
  // cuSOLVER cannot be captured) its calls launched directly.
  struct PlanStep {
    cudaGraphExec_t exec = nullptr;
    bool cholesky = false;  // launch enqueueCholesky() here
  };
  using Plan = std::vector<PlanStep>;

  static void destroyPlan(Plan& p) {
    for (auto& s : p)
      if (s.exec) cudaGraphExecDestroy(s.exec);
    p.clear();
  }

  // Instantiated graphs kept by the thread between solves of this backend type (one plan of
  // each kind). A new solve captures its launches again (its arrays and sizes differ) and
  // updates a kept graph with them (cudaGraphExecUpdate: the same kernels, new parameters),
  // instead of instantiating one: on the H200 the capture and instantiation were 1.1 ms of a
  // mapper's local BA of about 8 (docs/benchmarks.md, "The local BA's device arrays kept").
  // A graph whose kernels differ (cuSOLVER's choice for another size) is instantiated anew.
  struct KeptGraphs {
    int device = -1;
    std::vector<cudaGraphExec_t> execs[2];  // the step's and the linearisation's plans
    void clear(int k) {
      for (cudaGraphExec_t e : execs[k])
        if (e) cudaGraphExecDestroy(e);
      execs[k].clear();
    }
    ~KeptGraphs() { clear(0), clear(1); }
  };
  static KeptGraphs& keptGraphs() {
    thread_local KeptGraphs k;
    return k;
  }
  // Gives a plan's graphs to the thread's kept ones (replacing those there).
  void keepPlan(int kind, Plan& p) {
    if (std::none_of(p.begin(), p.end(), [](const PlanStep& st) { return st.exec; })) return;
    KeptGraphs& k = keptGraphs();
    if (k.device != ctx_.device()) k.clear(0), k.clear(1), k.device = ctx_.device();
    k.clear(kind);
    for (PlanStep& st : p)
      if (st.exec) k.execs[kind].push_back(std::exchange(st.exec, nullptr));
    p.clear();
  }
  // The kept graphs of `kind` for a capture to update (taken: a second backend alive on the
  // thread finds none).
  void takeDonors(int kind) {
    dropDonors();
    KeptGraphs& k = keptGraphs();
    if (k.device == ctx_.device()) donors_ = std::move(k.execs[kind]);
    k.execs[kind].clear();
    donorNext_ = 0;
  }
  void dropDonors() {
    for (cudaGraphExec_t e : donors_)
      if (e) cudaGraphExecDestroy(e);
    donors_.clear();
  }

  void beginCapture() {
    VIDMAP_CUDA_CHECK(cudaStreamBeginCapture(st_, cudaStreamCaptureModeThreadLocal));
    capturing_ = true;
  }
  void endCapture() {
    capturing_ = false;
    cudaGraph_t g = nullptr;
    VIDMAP_CUDA_CHECK(cudaStreamEndCapture(st_, &g));
    cudaGraphExec_t exec = nullptr;
    if (donorNext_ < donors_.size() && donors_[donorNext_]) {
      cudaGraphExecUpdateResultInfo info;
      if (cudaGraphExecUpdate(donors_[donorNext_], g, &info) == cudaSuccess)
        exec = std::exchange(donors_[donorNext_], nullptr);
      else
        (void)cudaGetLastError();  // not updatable: instantiated below
    }
    ++donorNext_;
    cudaError_t e = cudaSuccess;
    if (!exec) e = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    VIDMAP_CUDA_CHECK(e);
    capturePlan_.push_back(PlanStep{exec, false});
  }
  // Leaves a failed capture: the stream back to normal, the error cleared.
  void abandonCapture() {
    if (capturing_) {
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(st_, &g);
      if (g) cudaGraphDestroy(g);
      capturing_ = false;
    }
    cudaGetLastError();
    destroyPlan(capturePlan_);
  }

  void replay(const Plan& p) {
    for (const PlanStep& s : p) {
      if (s.exec) VIDMAP_CUDA_CHECK(cudaGraphLaunch(s.exec, st_));
      if (s.cholesky) enqueueCholesky();
    }
  }

  // Replays `plan`, capturing it from `enqueue` the first time. When the capture fails with
  // cuSOLVER inside, it is tried again with cuSOLVER outside; when that fails too, this
  // backend launches its phases one by one from then on (the reason in launchMode()).
  template <class F>
  void runPlan(Plan& plan, const char* name, F&& enqueue) {
    if (plan.empty()) {
      struct Timed {
        double t0;
        double* into;
        ~Timed() { *into += now() - t0; }
      } timed{now(), &times.graphCapture};
      queued_ = true;
      takeDonors(&plan == &stepPlan_ ? 0 : 1);
      struct Drop {
        CudaBackend* b;
        ~Drop() { b->dropDonors(); }
      } drop{this};
      while (true) {
        try {
          beginCapture();
          enqueue();
          endCapture();
          plan = std::move(capturePlan_);
          capturePlan_.clear();
          break;
        } catch (const std::exception& e) {
          abandonCapture();
          if (!solverOutside_ && explicit_ && s_.nF > 0) {
            solverOutside_ = true;
            graphNote_ = std::string("capture with cuSOLVER failed: ") + e.what();
            destroyPlan(stepPlan_);  // captured with cuSOLVER inside, or empty
            destroyPlan(linearizePlan_);
            continue;
          }
          graphs_ = false;
          queued_ = false;
          graphNote_ = std::string("graph capture failed: ") + e.what();
          destroyPlan(stepPlan_);
          destroyPlan(linearizePlan_);
          enqueue();  // this time launched directly
          return;
        }
      }
    }
    auto timer = ctx_.profiler().time(name, ctx_.stream());
    replay(plan);
  }

  // The phases of lm_step.h on device arrays, in stream order; endPhase synchronises.
  void setJacobiScaling() {
    double* sF = scaleF_.data();
    const double* cF = colF_.data();
    forEach(st_, s_.nF, [=] __device__(int c) { sF[c] = 1.0 / (1.0 + sqrt(cF[c])); });
    double* sP = scaleP_.data();
    const double* V0 = V0_.data();
    const int* vp = varPoints_.data();
    forEach(st_, nVar_, [=] __device__(int v) {
      const int j = vp[v];
      sP[3 * j] = 1.0 / (1.0 + sqrt(V0[6 * j]));
      sP[3 * j + 1] = 1.0 / (1.0 + sqrt(V0[6 * j + 3]));
      sP[3 * j + 2] = 1.0 / (1.0 + sqrt(V0[6 * j + 5]));
    });
  }

  void rescaleRecords() {
    double* rec = rec_.data();
    const double *sP = scaleP_.data(), *sE = scaleE_.data();
    const int *oi = obsImage_.data(), *op = obsPoint_.data();
    forEach(st_, nObs_, [=] __device__(int a) {
      double* r = rec + static_cast<size_t>(a) * RS;
      const double* sp = sP + 3 * op[a];
      const double* sc = sE + static_cast<size_t>(oi[a]) * C;
      for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 3; ++k) r[2 + 3 * i + k] *= sp[k];
        for (int k = 0; k < C; ++k) r[8 + C * i + k] *= sc[k];
      }
    });
  }

  // The radius travels through pinned memory, so that a replayed step reads the current one.
  void setDamping(double radius) {
    host_->radius = radius;
    VIDMAP_CUDA_CHECK(cudaMemcpyAsync(radius_.data(), &host_->radius, sizeof(double),
                                      cudaMemcpyHostToDevice, st_));
    const double minD = o_.minLmDiagonal, maxD = o_.maxLmDiagonal;
    double* D2 = D2F_.data();
    const double* cF = colF_.data();
    const double* rad = radius_.data();
    forEach(st_, s_.nF, [=] __device__(int c) { D2[c] = fmin(fmax(cF[c], minD), maxD) / *rad; });
  }

  void eliminatePoints(double) {
    const double minD = o_.minLmDiagonal, maxD = o_.maxLmDiagonal;
    const double* rad = radius_.data();
    const int* vp = varPoints_.data();
    const double* V0 = V0_.data();
    double* Vinv = Vinv_.data();
    double* P = P_.data();
    const double* rec = rec_.data();
    const int *ps = pointObsStart_.data(), *po = pointObs_.data();
    double* bad = itemTmp_.data();
    forEach(st_, nVar_, [=] __device__(int v) {
      const int j = vp[v];
      const double radius = *rad;
      const double* V = V0 + 6 * j;
      const double d2[3] = {fmin(fmax(V[0], minD), maxD) / radius,
                            fmin(fmax(V[3], minD), maxD) / radius,
                            fmin(fmax(V[5], minD), maxD) / radius};
      double* Vi = Vinv + 9 * static_cast<size_t>(j);
      if (!invertPoint(V, d2, Vi)) {
        bad[v] = 1.0;
        return;
      }
      bad[v] = 0.0;
      for (int t = ps[j]; t < ps[j + 1]; ++t) {
        const int a = po[t];
        pointProjector(rec + static_cast<size_t>(a) * RS, Vi, P + 6 * static_cast<size_t>(a));
      }
    });
    reduce(itemTmp_.data(), nVar_, true, kPointsBad);
  }

  // Reduced right-hand side per image, folded.
  void reducedRhs() {
    const double *rec = rec_.data(), *P = P_.data(), *gP = gP_.data();
    const int *op = obsPoint_.data(), *pc = pointCol_.data();
    double* rhsE = rhsE_.data();
    groupReduce<C, 128>(
        st_, s_.numImages, imageObsStart_.data(), imageObs_.data(),
        [=] __device__(int a, double* acc) {
          const int j = op[a];
          accumulateReducedRhs<C>(rec + static_cast<size_t>(a) * RS,
                                  pc[j] >= 0 ? P + 6 * static_cast<size_t>(a) : nullptr, gP + 3 * j,
                                  acc);
        },
        [=] __device__(int g, int w, double v) { rhsE[static_cast<size_t>(g) * C + w] = v; });
    foldVector(rhsE_.data(), rhsF_.data());
  }

  void computeSegments() {
    if (nSeg_ == 0) return;
    auto timer = timed("ba_segments");
    segmentKernel<C><<<nSeg_, 128, 0, st_>>>(
        segStart_.data(), pairA_.data(), pairB_.data(), rec_.data(), P_.data(),
        explicit_ || o_.preconditioner == PreconditionerType::kSchurJacobi, segB_.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
  }

  // Waits only when timing the phases (the plain path); a queued step waits once, at its end.
  void endPhase() {
    if (!queued_) VIDMAP_CUDA_CHECK(cudaStreamSynchronize(st_));
  }

  void zeroStep() { yF_.zero(); }

  void buildExplicitSchur() {
    S_.zero();
    auto timer = timed("ba_fold_schur");
    double* S = S_.data();
    const double* B = segB_.data();
    const int *fs = foldMatStart_.data(), *fsrc = foldMatSrc_.data();
    const std::int64_t* ft = foldMatTarget_.data();
    const double* ff = foldMatFactor_.data();
    forEach(st_, static_cast<int>(foldMatTargetHost_), [=] __device__(int e) {
      double v = 0.0;
      for (int k = fs[e]; k < fs[e + 1]; ++k) v += ff[k] * B[fsrc[k]];
      S[ft[e]] = v;
    });
    const double* D2 = D2F_.data();
    const int n = s_.nF;
    forEach(st_, n, [=] __device__(int c) { S[static_cast<size_t>(c) * n + c] += D2[c]; });
  }

  // Row-major upper = column-major lower. potrf's info goes to a scalar slot; potrs runs on
  // whatever potrf left (a failed factor's step is refused from the flag) with an info of its
  // own. While a graph is captured without cuSOLVER, the capture is cut around these calls.
  void solveExplicit() {
    if (capturing_ && solverOutside_) {  // the replay launches them between two graphs
      endCapture();
      capturePlan_.push_back(PlanStep{nullptr, true});
      beginCapture();
      return;
    }
    enqueueCholesky();
  }

  void enqueueCholesky() {
    if (s_.nF <= o_.cudaOneBlockCholeskyMaxColumns) {
      auto timer = timed("ba_one_block_cholesky");
      constexpr int kThreads = 128;
      oneBlockCholeskySolve<kThreads>
          <<<1, kThreads, static_cast<size_t>(s_.nF) * (s_.nF + 1) * sizeof(double), st_>>>(
              S_.data(), s_.nF, rhsF_.data(), yF_.data(), infoSlot(kInfo), infoSlot(kInfoPotrs));
      VIDMAP_CUDA_CHECK_LAUNCH();
      return;
    }
    auto timer = timed("ba_potrf_potrs");
    VM_SOLVER(cusolverDnDpotrf(solver_, CUBLAS_FILL_MODE_LOWER, s_.nF, S_.data(), s_.nF,
                               work_.data(), static_cast<int>(work_.size()), infoSlot(kInfo)));
    VIDMAP_CUDA_CHECK(cudaMemcpyAsync(yF_.data(), rhsF_.data(), s_.nF * sizeof(double),
                                      cudaMemcpyDeviceToDevice, st_));
    VM_SOLVER(cusolverDnDpotrs(solver_, CUBLAS_FILL_MODE_LOWER, s_.nF, 1, S_.data(), s_.nF,
                               yF_.data(), s_.nF, infoSlot(kInfoPotrs)));
  }

  void checkStep() { reduce(yF_.data(), s_.nF, false, kStepSum); }

  // y_P = Vinv (g_P - W' y_E) per point.
  void backSubstitute() {
    gather(yF_.data(), yE_.data());
    const int* vp = varPoints_.data();
    const int *ps = pointObsStart_.data(), *po = pointObs_.data(), *oi = obsImage_.data();
    const double *rec = rec_.data(), *gP = gP_.data(), *Vinv = Vinv_.data(), *yE = yE_.data();
    double* yP = yP_.data();
    double* chk = itemTmp_.data();
    forEach(st_, nVar_, [=] __device__(int v) {
      const int j = vp[v];
      double acc[3] = {gP[3 * j], gP[3 * j + 1], gP[3 * j + 2]};
      for (int t = ps[j]; t < ps[j + 1]; ++t) {
        const int a = po[t];
        const double* ra = rec + static_cast<size_t>(a) * RS;
        double z[2];
        cameraTimes<C>(ra, yE + static_cast<size_t>(oi[a]) * C, z);
        z[0] = -z[0], z[1] = -z[1];
        pointTransposeTimes(ra, z, acc);
      }
      sym3Times(Vinv + 9 * static_cast<size_t>(j), acc, yP + 3 * j);
      chk[v] = yP[3 * j] + yP[3 * j + 1] + yP[3 * j + 2];
    });
    reduce(itemTmp_.data(), nVar_, false, kPointStepSum);
  }

  void modelCostChange() {
    const double *rec = rec_.data(), *yE = yE_.data(), *yP = yP_.data();
    const int *oi = obsImage_.data(), *op = obsPoint_.data(), *pc = pointCol_.data();
    double* out = obsTmp_.data();
    forEach(st_, nObs_, [=] __device__(int a) {
      const int j = op[a];
      out[a] = ba::modelCostChange<C>(rec + static_cast<size_t>(a) * RS,
                                      yE + static_cast<size_t>(oi[a]) * C,
                                      pc[j] >= 0 ? yP + 3 * j : nullptr);
    });
    reduce(obsTmp_.data(), nObs_, false, kModelCostChange);
  }

  void scaleStep() {
    double* dF = deltaF_.data();
    const double *yF = yF_.data(), *sF = scaleF_.data();
    forEach(st_, s_.nF, [=] __device__(int c) { dF[c] = -yF[c] * sF[c]; });
    double* dP = deltaP_.data();
    const double *yP = yP_.data(), *sP = scaleP_.data();
    const int* vp = varPoints_.data();
    forEach(st_, nVar_, [=] __device__(int v) {
      const int j = vp[v];
      for (int k = 0; k < 3; ++k) dP[3 * j + k] = -yP[3 * j + k] * sP[3 * j + k];
    });
  }

  // Candidate = Plus(x, delta), the squared step norm's parts and the candidate's cost.
  void candidatePhases() {
    {
      const double *rot = rot_.data(), *trans = trans_.data(), *dF = deltaF_.data();
      double *cRot = cRot_.data(), *cTrans = cTrans_.data(), *out = itemTmp_.data();
      const int* cm = colMap_.data();
      const std::uint8_t *rv = rotVaries_.data(), *tv = transVaries_.data();
      forEach(st_, s_.numImages, [=] __device__(int i) {
        double d[6];
        for (int k = 0; k < 6; ++k) {
          const int m = cm[static_cast<size_t>(i) * C + k];
          d[k] = m >= 0 ? dF[m] : 0.0;
        }
        double s = 0.0;
        if (rv[i]) {
          plusRotation<R>(rot + 4 * i, d, cRot + 4 * i);
          for (int k = 0; k < rotationParams(R); ++k) {
            const double v = rot[4 * i + k] - cRot[4 * i + k];
            s += v * v;
          }
        }
        if (tv[i])
          for (int k = 0; k < 3; ++k) {
            cTrans[3 * i + k] = trans[3 * i + k] + d[3 + k];
            const double v = trans[3 * i + k] - cTrans[3 * i + k];
            s += v * v;
          }
        out[i] = s;
      });
      reduce(itemTmp_.data(), s_.numImages, false, kStepSqImages);
    }
    {
      const double *intr = intr_.data(), *dF = deltaF_.data();
      double *cIntr = cIntr_.data(), *out = itemTmp_.data();
      const int* cc = cameraCol_.data();
      const std::uint8_t* cv = camVaries_.data();
      forEach(st_, s_.numCameras, [=] __device__(int c) {
        double s = 0.0;
        if (cv[c])
          for (int k = 0; k < K; ++k) {
            const int m = cc[static_cast<size_t>(c) * K + k];
            cIntr[K * c + k] = intr[K * c + k] + (m >= 0 ? dF[m] : 0.0);
            const double v = intr[K * c + k] - cIntr[K * c + k];
            s += v * v;
          }
        out[c] = s;
      });
      reduce(itemTmp_.data(), s_.numCameras, false, kStepSqCameras);
    }
    {
      const double *pts = pts_.data(), *dP = deltaP_.data();
      double *cPts = cPts_.data(), *out = itemTmp_.data();
      const int* vp = varPoints_.data();
      forEach(st_, nVar_, [=] __device__(int v) {
        const int j = vp[v];
        double s = 0.0;
        for (int k = 0; k < 3; ++k) {
          cPts[3 * j + k] = pts[3 * j + k] + dP[3 * j + k];
          const double e = pts[3 * j + k] - cPts[3 * j + k];
          s += e * e;
        }
        out[v] = s;
      });
      reduce(itemTmp_.data(), nVar_, false, kStepSqPoints);
    }
    costAt(cRot_, cTrans_, cIntr_, cPts_, kCandidateCost);
  }

  void candidateScalars(double* cost, double* stepNorm) const {
    double sq = 0.0;
    sq += host_->v[kStepSqImages];
    sq += host_->v[kStepSqCameras];
    if (nVar_ > 0) sq += host_->v[kStepSqPoints];
    *stepNorm = std::sqrt(sq);
    *cost = host_->v[kCandidateCost];
  }

  void evaluateCandidate(double* cost, double* stepNorm) override {
    if (candidateReady_) {  // computed with the step (the graph path)
      candidateReady_ = false;
      candidateScalars(cost, stepNorm);
      return;
    }
    const double t0 = now();
    candidatePhases();
    fetchScalars();
    candidateScalars(cost, stepNorm);
    times.residual += now() - t0;
  }

  void acceptCandidate() override {
    rot_.copyFrom(cRot_), trans_.copyFrom(cTrans_), intr_.copyFrom(cIntr_), pts_.copyFrom(cPts_);
  }

  double parameterNorm() override {
    parameterNormPhases();
    fetchScalars();
    return parameterNormScalar();
  }

  double parameterNormScalar() const {
    double sq = 0.0;
    sq += host_->v[kNormImages];
    sq += host_->v[kNormCameras];
    if (nVar_ > 0) sq += host_->v[kNormPoints];
    return std::sqrt(sq);
  }

  void parameterNormPhases() {
    {
      const double *rot = rot_.data(), *trans = trans_.data();
      const std::uint8_t *rv = rotVaries_.data(), *tv = transVaries_.data();
      double* out = itemTmp_.data();
      forEach(st_, s_.numImages, [=] __device__(int i) {
        double s = 0.0;
        if (rv[i])
          for (int k = 0; k < rotationParams(R); ++k) s += rot[4 * i + k] * rot[4 * i + k];
        if (tv[i])
          for (int k = 0; k < 3; ++k) s += trans[3 * i + k] * trans[3 * i + k];
        out[i] = s;
      });
      reduce(itemTmp_.data(), s_.numImages, false, kNormImages);
    }
    {
      const double* intr = intr_.data();
      const std::uint8_t* cv = camVaries_.data();
      double* out = itemTmp_.data();
      forEach(st_, s_.numCameras, [=] __device__(int c) {
        double s = 0.0;
        if (cv[c])
          for (int k = 0; k < K; ++k) s += intr[K * c + k] * intr[K * c + k];
        out[c] = s;
      });
      reduce(itemTmp_.data(), s_.numCameras, false, kNormCameras);
    }
    {
      const double* pts = pts_.data();
      const int* vp = varPoints_.data();
      double* out = itemTmp_.data();
      forEach(st_, nVar_, [=] __device__(int v) {
        const double* X = pts + 3 * vp[v];
        out[v] = X[0] * X[0] + X[1] * X[1] + X[2] * X[2];
      });
      reduce(itemTmp_.data(), nVar_, false, kNormPoints);
    }
  }

  Parameters parameters() override {
    Parameters x;
    x.rotation = rot_.download();
    x.translation = trans_.download();
    x.intrinsics = intr_.download();
    x.points = pts_.download();
    return x;
  }

  // (Helpers are public: nvcc's extended lambdas cannot live in private member functions.)
  // Deterministic sum (or max) of n doubles on the device, into scalar slot `slot` (0 when
  // n = 0); nothing waits.
  void reduce(const double* v, int n, bool isMax, int slot) {
    double* out = slotPtr(slot);
    if (n <= 0) {
      VIDMAP_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(double), st_));
      return;
    }
    const int chunk = 4096;
    int blocks = (n + chunk - 1) / chunk;
    if (blocks > static_cast<int>(partial_.size())) partial_.resize(blocks);
    if (isMax)
      reduceKernel<true><<<blocks, kThreads, 0, st_>>>(v, n, chunk, partial_.data());
    else
      reduceKernel<false><<<blocks, kThreads, 0, st_>>>(v, n, chunk, partial_.data());
    VIDMAP_CUDA_CHECK_LAUNCH();
    if (isMax)
      reduceKernel<true><<<1, kThreads, 0, st_>>>(partial_.data(), blocks, blocks, out);
    else
      reduceKernel<false><<<1, kThreads, 0, st_>>>(partial_.data(), blocks, blocks, out);
    VIDMAP_CUDA_CHECK_LAUNCH();
  }

  // The same, read back now (conjugate gradients' scalars).
  double reduceNow(const double* v, int n, bool isMax) {
    if (n <= 0) return 0.0;
    reduce(v, n, isMax, kCg);
    VIDMAP_CUDA_CHECK(
        cudaMemcpyAsync(&host_->v[kCg], slotPtr(kCg), sizeof(double), cudaMemcpyDeviceToHost, st_));
    VIDMAP_CUDA_CHECK(cudaStreamSynchronize(st_));
    return host_->v[kCg];
  }

  void updateScaleE() {
    double* sE = scaleE_.data();
    const double* sF = scaleF_.data();
    const int* cm = colMap_.data();
    forEach(st_, s_.numImages * C, [=] __device__(int t) {
      const int m = cm[t];
      sE[t] = m >= 0 ? sF[m] : 0.0;
    });
  }

  void evaluateAll() {
    auto timer = timed("ba_evaluate");
    const LossParams L = loss_;
    const double *rot = rot_.data(), *trans = trans_.data(), *intr = intr_.data(),
                 *pts = pts_.data();
    const double *xy = obsXY_.data(), *sE = scaleE_.data(), *sP = scaleP_.data();
    const int *oi = obsImage_.data(), *op = obsPoint_.data(), *ic = imageCamera_.data();
    double* rec = rec_.data();
    double* out = obsTmp_.data();
    forEach(st_, nObs_, [=] __device__(int a) {
      const int i = oi[a], j = op[a];
      out[a] = evaluateObservation<M, R, C>(L, rot + 4 * i, trans + 3 * i,
                                            intr + static_cast<size_t>(ic[i]) * K, pts + 3 * j,
                                            xy + 2 * a, sE + static_cast<size_t>(i) * C, sP + 3 * j,
                                            rec + static_cast<size_t>(a) * RS);
    });
    reduce(obsTmp_.data(), nObs_, false, kCost);
  }

  void costAt(DeviceArray<double>& rotA, DeviceArray<double>& transA, DeviceArray<double>& intrA,
              DeviceArray<double>& ptsA, int slot) {
    auto timer = timed("ba_cost");
    const LossParams L = loss_;
    const double *rot = rotA.data(), *trans = transA.data(), *intr = intrA.data(),
                 *pts = ptsA.data();
    const double* xy = obsXY_.data();
    const int *oi = obsImage_.data(), *op = obsPoint_.data(), *ic = imageCamera_.data();
    double* out = obsTmp_.data();
    forEach(st_, nObs_, [=] __device__(int a) {
      const int i = oi[a], j = op[a];
      out[a] =
          observationCost<M, R>(L, rot + 4 * i, trans + 3 * i,
                                intr + static_cast<size_t>(ic[i]) * K, pts + 3 * j, xy + 2 * a);
    });
    reduce(obsTmp_.data(), nObs_, false, slot);
  }

  void reduceImages() {
    const double* rec = rec_.data();
    double *gE = gE_.data(), *colE = colE_.data();
    groupReduce<2 * C, 128>(
        st_, s_.numImages, imageObsStart_.data(), imageObs_.data(),
        [=] __device__(int a, double* acc) {
          accumulateImageGradient<C>(rec + static_cast<size_t>(a) * RS, acc, acc + C);
        },
        [=] __device__(int g, int w, double v) {
          if (w < C)
            gE[static_cast<size_t>(g) * C + w] = v;
          else
            colE[static_cast<size_t>(g) * C + w - C] = v;
        });
    foldVector(gE_.data(), gF_.data());
    foldVector(colE_.data(), colF_.data());
  }

  void reducePoints() {
    const int* vp = varPoints_.data();
    const int *ps = pointObsStart_.data(), *po = pointObs_.data();
    const double* rec = rec_.data();
    double *V0 = V0_.data(), *gP = gP_.data();
    forEach(st_, nVar_, [=] __device__(int v) {
      const int j = vp[v];
      double V[6] = {0, 0, 0, 0, 0, 0}, g[3] = {0, 0, 0};
      for (int t = ps[j]; t < ps[j + 1]; ++t)
        accumulatePoint(rec + static_cast<size_t>(po[t]) * RS, V, g);
      for (int k = 0; k < 6; ++k) V0[6 * j + k] = V[k];
      for (int k = 0; k < 3; ++k) gP[3 * j + k] = g[k];
    });
  }

  void gradientMax() {
    const double *gF = gF_.data(), *sF = scaleF_.data();
    {
      const double *rot = rot_.data(), *trans = trans_.data();
      const int* cm = colMap_.data();
      const std::uint8_t *rv = rotVaries_.data(), *tv = transVaries_.data();
      double* out = itemTmp_.data();
      forEach(st_, s_.numImages, [=] __device__(int i) {
        double g[6];
        for (int k = 0; k < 6; ++k) {
          const int m = cm[static_cast<size_t>(i) * C + k];
          g[k] = m >= 0 ? -gF[m] / sF[m] : 0.0;
        }
        double sq = 0.0, m = 0.0;
        if (rv[i]) rotationDifference<R>(rot + 4 * i, g, &sq, &m);
        if (tv[i])
          for (int k = 0; k < 3; ++k) {
            const double x = trans[3 * i + k];
            m = fmax(m, fabs(x - (x + g[3 + k])));
          }
        out[i] = m;
      });
      reduce(itemTmp_.data(), s_.numImages, true, kGradImages);
    }
    {
      const double* intr = intr_.data();
      const int* cc = cameraCol_.data();
      const std::uint8_t* cv = camVaries_.data();
      double* out = itemTmp_.data();
      forEach(st_, s_.numCameras, [=] __device__(int c) {
        double m = 0.0;
        if (cv[c])
          for (int k = 0; k < K; ++k) {
            const int col = cc[static_cast<size_t>(c) * K + k];
            const double x = intr[K * c + k];
            const double g = col >= 0 ? -gF[col] / sF[col] : 0.0;
            m = fmax(m, fabs(x - (x + g)));
          }
        out[c] = m;
      });
      reduce(itemTmp_.data(), s_.numCameras, true, kGradCameras);
    }
    {
      const double *pts = pts_.data(), *gP = gP_.data(), *sP = scaleP_.data();
      const int* vp = varPoints_.data();
      double* out = itemTmp_.data();
      forEach(st_, nVar_, [=] __device__(int v) {
        const int j = vp[v];
        double m = 0.0;
        for (int k = 0; k < 3; ++k) {
          const double x = pts[3 * j + k];
          const double g = -gP[3 * j + k] / sP[3 * j + k];
          m = fmax(m, fabs(x - (x + g)));
        }
        out[v] = m;
      });
      reduce(itemTmp_.data(), nVar_, true, kGradPoints);
    }
  }

  LinearizationScalars linearization() {
    fetchScalars();
    return linearizationScalars();
  }

  LinearizationScalars linearizationScalars() const {
    LinearizationScalars l;
    l.cost = host_->v[kCost];
    double mx = 0.0;
    mx = std::max(mx, host_->v[kGradImages]);
    mx = std::max(mx, host_->v[kGradCameras]);
    if (nVar_ > 0) mx = std::max(mx, host_->v[kGradPoints]);
    l.gradientMaxNorm = mx;
    return l;
  }

  void buildFoldMaps() {
    const FoldMaps f = ba::buildFoldMaps(s_, explicit_);
    foldVecStart_.upload(f.vecStart);
    foldVecSrc_.upload(f.vecSrc.empty() ? std::vector<int>{0} : f.vecSrc);
    foldMatTargetHost_ = f.matTarget.size();
    foldMatStart_.upload(f.matStart);
    foldMatSrc_.upload(f.matSrc.empty() ? std::vector<int>{0} : f.matSrc);
    foldMatFactor_.upload(f.matFactor.empty() ? std::vector<double>{0} : f.matFactor);
    foldMatTarget_.upload(f.matTarget.empty() ? std::vector<std::int64_t>{0} : f.matTarget);
  }

  void foldVector(const double* e, double* f) {
    const int *fs = foldVecStart_.data(), *src = foldVecSrc_.data();
    forEach(st_, s_.nF, [=] __device__(int m) {
      double v = 0.0;
      for (int k = fs[m]; k < fs[m + 1]; ++k) v += e[src[k]];
      f[m] = v;
    });
  }

  void gather(const double* f, double* e) {
    const int* cm = colMap_.data();
    forEach(st_, s_.numImages * C, [=] __device__(int t) {
      const int m = cm[t];
      e[t] = m >= 0 ? f[m] : 0.0;
    });
  }

  // y = S x without forming S.
  void schurTimes(const double* x, double* y) {
    auto timer = timed("ba_schur_product");
    gather(x, xE_.data());
    {
      const double *rec = rec_.data(), *xE = xE_.data();
      const int* oi = obsImage_.data();
      double* u = u_.data();
      forEach(st_, nObs_, [=] __device__(int a) {
        cameraTimes<C>(rec + static_cast<size_t>(a) * RS, xE + static_cast<size_t>(oi[a]) * C,
                       u + 2 * static_cast<size_t>(a));
      });
    }
    {
      const int* vp = varPoints_.data();
      const int *ps = pointObsStart_.data(), *po = pointObs_.data();
      const double *rec = rec_.data(), *P = P_.data();
      double* u = u_.data();
      forEach(st_, nVar_, [=] __device__(int v) {
        const int j = vp[v];
        double t[3] = {0, 0, 0};
        for (int q = ps[j]; q < ps[j + 1]; ++q) {
          const int a = po[q];
          const double* Pa = P + 6 * static_cast<size_t>(a);
          const double* z = u + 2 * static_cast<size_t>(a);
          for (int k = 0; k < 3; ++k) t[k] += Pa[k] * z[0] + Pa[3 + k] * z[1];
        }
        for (int q = ps[j]; q < ps[j + 1]; ++q) {
          const int a = po[q];
          const double* Jp = rec + static_cast<size_t>(a) * RS + 2;
          u[2 * a] -= Jp[0] * t[0] + Jp[1] * t[1] + Jp[2] * t[2];
          u[2 * a + 1] -= Jp[3] * t[0] + Jp[4] * t[1] + Jp[5] * t[2];
        }
      });
    }
    {
      const double *rec = rec_.data(), *u = u_.data();
      double* yE = yE_.data();
      groupReduce<C, 128>(
          st_, s_.numImages, imageObsStart_.data(), imageObs_.data(),
          [=] __device__(int a, double* acc) {
            cameraTransposeTimes<C>(rec + static_cast<size_t>(a) * RS,
                                    u + 2 * static_cast<size_t>(a), acc);
          },
          [=] __device__(int g, int w, double v) { yE[static_cast<size_t>(g) * C + w] = v; });
    }
    foldVector(yE_.data(), y);
    const double* D2 = D2F_.data();
    forEach(st_, s_.nF, [=] __device__(int c) { y[c] += D2[c] * x[c]; });
  }

  // Block Jacobi: blocks of each image's exclusive columns (from the diagonal segment) and of
  // each shared camera; inverted in place.
  void buildPreconditioner() {
    if (precOffset_.size() == 0) {
      std::vector<int> off, size, inv, img;
      int acc = 0;
      for (int i = 0; i < s_.numImages; ++i)
        if (s_.exclSize[i] > 0) {
          off.push_back(s_.exclOffset[i]), size.push_back(s_.exclSize[i]), inv.push_back(acc);
          img.push_back(i);
          acc += s_.exclSize[i] * s_.exclSize[i];
        }
      numImageBlocks_ = static_cast<int>(off.size());
      for (int cam : s_.sharedCameras) {
        off.push_back(s_.sharedOffset[cam]), size.push_back(s_.sharedSize[cam]), inv.push_back(acc);
        img.push_back(cam);
        acc += s_.sharedSize[cam] * s_.sharedSize[cam];
      }
      numBlocks_ = static_cast<int>(off.size());
      precOffset_.upload(off), precSize_.upload(size), precInvStart_.upload(inv);
      precOwner_.upload(img);
      precInv_.resize(std::max(acc, 1));
      std::vector<int> diag(s_.diagSegment);
      diagSeg_.upload(diag);
      std::vector<int> camMask(s_.cameraConstant.begin(), s_.cameraConstant.end());
      camConst_.upload(camMask);
      sharedRaw_.resize(std::max<size_t>(s_.sharedCameras.size() * K * K, 1));
    }
    const bool schur = o_.preconditioner == PreconditionerType::kSchurJacobi;
    if (!s_.sharedCameras.empty() && C > kPoseDims) {
      sharedBlockKernel<C><<<static_cast<int>(s_.sharedCameras.size()), 128, 0, st_>>>(
          nObs_, obsImage_.data(), imageShared_.data(), sharedCams_.data(), nVar_,
          varPoints_.data(), pointObsStart_.data(), pointObs_.data(), rec_.data(), Vinv_.data(),
          schur, sharedRaw_.data());
      VIDMAP_CUDA_CHECK_LAUNCH();
    }
    const int *off = precOffset_.data(), *size = precSize_.data(), *invStart = precInvStart_.data();
    const int *owner = precOwner_.data(), *diag = diagSeg_.data(), *cm = colMap_.data();
    const int* camConst = camConst_.data();
    const double *B = segB_.data(), *D2 = D2F_.data(), *raw = sharedRaw_.data();
    double* inv = precInv_.data();
    double* bad = itemTmp_.data();
    const int nImageBlocks = numImageBlocks_;
    if (static_cast<int>(itemTmp_.size()) < numBlocks_) itemTmp_.resize(numBlocks_);
    bad = itemTmp_.data();
    forEach(st_, numBlocks_, [=] __device__(int b) {
      const int n = size[b], o = off[b];
      double A[kMaxCameraCols * kMaxCameraCols],
          work[kMaxCameraCols * kMaxCameraCols + kMaxCameraCols];
      for (int e = 0; e < n * n; ++e) A[e] = 0.0;
      if (b < nImageBlocks) {
        const int i = owner[b];
        const int g = diag[i];
        if (g >= 0)
          for (int r = 0; r < C; ++r) {
            const int Rr = cm[static_cast<size_t>(i) * C + r];
            if (Rr < o || Rr >= o + n) continue;
            for (int c = 0; c < C; ++c) {
              const int Cc = cm[static_cast<size_t>(i) * C + c];
              if (Cc < o || Cc >= o + n) continue;
              A[(Rr - o) * n + (Cc - o)] = B[static_cast<size_t>(g) * C * C + r * C + c];
            }
          }
      } else {
        const int q = b - nImageBlocks;
        const int mask = camConst[owner[b]];
        for (int r = 0, rr = 0; r < K; ++r) {
          if (mask & (1 << r)) continue;
          for (int c = 0, cc = 0; c < K; ++c) {
            if (mask & (1 << c)) continue;
            A[rr * n + cc++] = raw[static_cast<size_t>(q) * K * K + r * K + c];
          }
          ++rr;
        }
      }
      for (int k = 0; k < n; ++k) A[k * n + k] += D2[o + k];
      const bool ok = invertSpd(A, n, work);
      bad[b] = ok ? 0.0 : 1.0;
      for (int e = 0; e < n * n; ++e) inv[invStart[b] + e] = A[e];
    });
    reduce(itemTmp_.data(), numBlocks_, true, kPreconditionerBad);
  }

  void applyPreconditioner(const double* r, double* z) {
    const int *off = precOffset_.data(), *size = precSize_.data(), *invStart = precInvStart_.data();
    const double* inv = precInv_.data();
    forEach(st_, numBlocks_, [=] __device__(int b) {
      const int n = size[b], o = off[b];
      const double* Ai = inv + invStart[b];
      for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int k = 0; k < n; ++k) s += Ai[i * n + k] * r[o + k];
        z[o + i] = s;
      }
    });
  }

  double dot(const double* a, const double* b) {
    double* t = cgDot_.data();
    forEach(st_, s_.nF, [=] __device__(int i) { t[i] = a[i] * b[i]; });
    return reduceNow(cgDot_.data(), s_.nF, false);
  }

  // The loop of conjugate_gradients.h on device arrays of size nF; the scalars it decides on
  // are read back (dot's and twiceQuadratic's reductions).
  struct DeviceCgOps {
    CudaBackend& be;
    using V = DeviceArray<double>;
    int n;
    cudaStream_t st;
    double dot(const V& a, const V& b) { return be.dot(a.data(), b.data()); }
    void precondition(const V& r, V& z) { be.applyPreconditioner(r.data(), z.data()); }
    void multiply(const V& p, V& q) { be.schurTimes(p.data(), q.data()); }
    void setZero(V& y) { y.zero(); }
    void copy(const V& from, V& to) {
      VIDMAP_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), n * sizeof(double),
                                        cudaMemcpyDeviceToDevice, st));
    }
    void xpby(const V& zv, double beta, V& pv) {
      const double* z = zv.data();
      double* p = pv.data();
      forEach(st, n, [=] __device__(int i) { p[i] = z[i] + beta * p[i]; });
    }
    void axpy(double alpha, const V& pv, V& yv) {
      const double* p = pv.data();
      double* y = yv.data();
      forEach(st, n, [=] __device__(int i) { y[i] += alpha * p[i]; });
    }
    void subtract(const V& bv, const V& tv, V& rv) {
      const double *b = bv.data(), *t = tv.data();
      double* r = rv.data();
      forEach(st, n, [=] __device__(int i) { r[i] = b[i] - t[i]; });
    }
    double twiceQuadratic(const V& yv, const V& bv, const V& rv) {
      const double *y = yv.data(), *b = bv.data(), *r = rv.data();
      double* t = be.cgDot_.data();
      forEach(st, n, [=] __device__(int i) { t[i] = -y[i] * (b[i] + r[i]); });
      return be.reduceNow(t, n, false);
    }
  };

  bool conjugateGradients(StepResult* res) {
    const int n = s_.nF;
    for (auto* a : {&cgR_, &cgP_, &cgZ_, &cgQ_, &cgTmp_, &cgDot_}) a->resize(n);
    DeviceCgOps ops{*this, n, st_};
    return ba::conjugateGradients(
        ops, CgVectors<DeviceArray<double>>{yF_, rhsF_, cgR_, cgP_, cgZ_, cgQ_, cgTmp_}, o_, res);
  }

  gpu::Context ctx_;
  ArrayHome home_{&ctx_, nullptr};
  cudaStream_t st_ = ctx_.stream().handle();
  const Structure& s_;
  const Options& o_;
  bool explicit_;
  LossParams loss_;
  int nObs_ = 0, nVar_ = 0, nSeg_ = 0;
  DeviceArray<double> rot_{home_}, trans_{home_}, intr_{home_}, pts_{home_}, cRot_{home_},
      cTrans_{home_}, cIntr_{home_}, cPts_{home_};
  DeviceArray<int> obsImage_{home_}, obsPoint_{home_}, imageCamera_{home_}, colMap_{home_},
      pointCol_{home_}, cameraCol_{home_}, varPoints_{home_};
  DeviceArray<double> obsXY_{home_};
  DeviceArray<int> pointObsStart_{home_}, pointObs_{home_}, imageObsStart_{home_}, imageObs_{home_},
      segStart_{home_}, pairA_{home_}, pairB_{home_};
  DeviceArray<int> imageShared_{home_}, sharedCams_{home_};
  DeviceArray<std::uint8_t> rotVaries_{home_}, transVaries_{home_}, camVaries_{home_};
  DeviceArray<int> foldVecStart_{home_}, foldVecSrc_{home_}, foldMatStart_{home_},
      foldMatSrc_{home_};
  DeviceArray<std::int64_t> foldMatTarget_{home_};
  DeviceArray<double> foldMatFactor_{home_};
  size_t foldMatTargetHost_ = 0;
  DeviceArray<double> rec_{home_}, P_{home_}, u_{home_}, obsTmp_{home_}, itemTmp_{home_},
      partial_{home_}, scal_{home_}, radius_{home_};
  PinnedBlock pinned_{sizeof(HostScalars)};
  HostScalars* host_ = nullptr;  // in pinned_
  bool graphs_ = false;          // replay the batches as graphs
  bool queued_ = false;          // phases queued without waiting (graph capture or replay)
  bool capturing_ = false;
  bool solverOutside_ = false;   // cuSOLVER's calls between the captured graphs
  bool candidateReady_ = false;  // the last step's replay evaluated its candidate too
  std::string graphNote_;
  Plan stepPlan_, linearizePlan_, capturePlan_;
  std::vector<cudaGraphExec_t> donors_;  // kept graphs a capture may update (takeDonors)
  size_t donorNext_ = 0;
  DeviceArray<double> scaleE_{home_}, gE_{home_}, colE_{home_}, rhsE_{home_}, yE_{home_},
      xE_{home_};
  DeviceArray<double> scaleF_{home_}, gF_{home_}, colF_{home_}, rhsF_{home_}, yF_{home_},
      deltaF_{home_}, D2F_{home_};
  DeviceArray<double> scaleP_{home_}, V0_{home_}, gP_{home_}, Vinv_{home_}, yP_{home_},
      deltaP_{home_};
  DeviceArray<double> segB_{home_}, S_{home_}, work_{home_};
  cusolverDnHandle_t solver_ = nullptr;
  DeviceArray<int> precOffset_{home_}, precSize_{home_}, precInvStart_{home_}, precOwner_{home_},
      diagSeg_{home_}, camConst_{home_};
  DeviceArray<double> precInv_{home_}, sharedRaw_{home_};
  int numBlocks_ = 0, numImageBlocks_ = 0;
  DeviceArray<double> cgR_{home_}, cgP_{home_}, cgZ_{home_}, cgQ_{home_}, cgTmp_{home_},
      cgDot_{home_};
};

template <CameraModel M, RotationType R>
std::unique_ptr<Backend> makeFor(const BackendInput& in) {
  constexpr int K = numIntrinsics(M);
  if (in.structure->C == kPoseDims) return std::make_unique<CudaBackend<M, R, kPoseDims>>(in);
  return std::make_unique<CudaBackend<M, R, kPoseDims + K>>(in);
}

// One model, both rotations (instantiated in cuda_backend_<model>.cu).
template <CameraModel M>
std::unique_ptr<Backend> makeForModel(const BackendInput& in) {
  if (in.structure->rotation == RotationType::kQuaternion)
    return makeFor<M, RotationType::kQuaternion>(in);
  return makeFor<M, RotationType::kAngleAxis>(in);
}

}  // namespace vidmap::ba::cuda_detail
