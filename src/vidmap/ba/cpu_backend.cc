// The CPU backend: the shared per-observation, per-point and per-segment functions of
// observation.h and schur.h in OpenMP loops. It is the oracle of the CUDA backend. Every sum
// runs in a fixed order (per item in list order, or over fixed chunks added in chunk order), so
// results do not depend on the number of threads.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "vidmap/ba/backend.h"
#include "vidmap/ba/conjugate_gradients.h"
#include "vidmap/ba/dispatch.h"
#include "vidmap/ba/fold_maps.h"
#include "vidmap/ba/lm_step.h"
#include "vidmap/ba/schur.h"
#include "vidmap/ba/update.h"
#include "vidmap/core/cpu_features.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"

namespace vidmap::ba {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr std::int64_t kChunk = 2048;

// Sum of f(i), i < n, over fixed chunks added in chunk order.
template <class F>
double chunkedSum(std::int64_t n, F&& f) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> part(chunks, 0.0);
  parallelFor(chunks, [&](std::int64_t c) {
    double s = 0.0;
    const std::int64_t end = std::min(n, (c + 1) * kChunk);
    for (std::int64_t i = c * kChunk; i < end; ++i) s += f(i);
    part[c] = s;
  });
  double t = 0.0;
  for (double v : part) t += v;
  return t;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

bool allFinite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// One segment's C x C block: accumulatePair (schur.h) over its observation pairs [e0, e1), in
// list order. The pair loop is most of an adjustment with the camera refined (C = 10: a quarter
// of tum-fr1-xyz's CPU time at 4 fps, docs/benchmarks.md "CPU path on xyz at 4 fps"), and the
// baseline x86-64 build runs it two doubles at a time. Where the CPU has AVX2 the same code runs
// four at a time: only element-wise products and sums vectorise (no FMA: -ffp-contract=off, and
// "avx2" does not enable it), so each element gets the baseline's operations in the baseline's
// order and the blocks are equal bit for bit.
//
// The pair's second record (image k's observation of the point, 28 doubles with C = 10) is a
// load from anywhere in the window's records: a third of the loop's samples waited on it
// (perf, xyz at 4 fps). prefetchPair asks for the record kPrefetchPairs pairs ahead; the sums
// are untouched.
constexpr int kPrefetchPairs = 8;

template <int RS>
__attribute__((always_inline)) inline void prefetchPair(const double* recs, const int* pairB, int e,
                                                        int e1) {
  if (e + kPrefetchPairs >= e1) return;
  const char* r =
      reinterpret_cast<const char*>(recs + static_cast<size_t>(pairB[e + kPrefetchPairs]) * RS);
  constexpr int bytes = static_cast<int>(RS * sizeof(double));
  for (int off = 0; off < bytes; off += 64) __builtin_prefetch(r + off);
  __builtin_prefetch(r + bytes - 1);  // the record need not start a cache line
}

template <int C, int RS>
__attribute__((always_inline)) inline void segmentBlockImpl(const double* recs, const double* P,
                                                            const int* pairA, const int* pairB,
                                                            int e0, int e1, double* out) {
  double B[C * C];
  std::fill(B, B + C * C, 0.0);
  for (int e = e0; e < e1; ++e) {
    prefetchPair<RS>(recs, pairB, e, e1);
    const int a = pairA[e], b = pairB[e];
    accumulatePair<C>(recs + static_cast<size_t>(a) * RS, P + 6 * static_cast<size_t>(a),
                      recs + static_cast<size_t>(b) * RS, a == b, B);
  }
  std::copy(B, B + C * C, out);
}

template <int C, int RS>
void segmentBlockBase(const double* recs, const double* P, const int* pairA, const int* pairB,
                      int e0, int e1, double* out) {
  segmentBlockImpl<C, RS>(recs, P, pairA, pairB, e0, e1, out);
}

#if defined(__x86_64__) && defined(__GNUC__)
// One row of a pair's share, row[c] += a0 N[c] + a1 N[W + c] for c < W (accumulatePair's row
// with its factor N of row stride W), four columns at a time (GCC's vector extension:
// element-wise, each element's operations as there), then the scalar tail.
template <int W>
__attribute__((target("avx2"), always_inline)) inline void addPairRowAvx2(double* row, double a0,
                                                                          double a1,
                                                                          const double* N) {
  typedef double V4 __attribute__((vector_size(32)));
  int c = 0;
  for (; c + 4 <= W; c += 4) {
    V4 n0, n1, v;
    std::memcpy(&n0, N + c, sizeof n0);
    std::memcpy(&n1, N + W + c, sizeof n1);
    std::memcpy(&v, row + c, sizeof v);
    v = v + (a0 * n0 + a1 * n1);
    std::memcpy(row + c, &v, sizeof v);
  }
  for (; c < W; ++c) row[c] += a0 * N[c] + a1 * N[W + c];
}

// accumulatePair's rows four columns at a time (GCC's vector extension: element-wise, each
// element row[c] + (a0 N[c] + a1 N[C + c]) as there).
template <int C, int RS>
__attribute__((target("avx2"))) void segmentBlockAvx2(const double* recs, const double* P,
                                                      const int* pairA, const int* pairB, int e0,
                                                      int e1, double* out) {
  double B[C * C];
  std::fill(B, B + C * C, 0.0);
  for (int e = e0; e < e1; ++e) {
    prefetchPair<RS>(recs, pairB, e, e1);
    const int a = pairA[e], b = pairB[e];
    const double* JcA = recs + static_cast<size_t>(a) * RS + 8;
    double N[2 * C];
    pairFactor<C>(P + 6 * static_cast<size_t>(a), recs + static_cast<size_t>(b) * RS, a == b, N);
    for (int r = 0; r < C; ++r) addPairRowAvx2<C>(B + r * C, JcA[r], JcA[C + r], N);
  }
  std::copy(B, B + C * C, out);
}

// segmentBlockAvx2 on the CA columns `act` that vary in some image, the others being held in
// every image (the principal point of the mapper's camera: 2 of SIMPLE_RADIAL's C = 10). A held
// column's Jacobian is scaled by 0 in every record, so in the full block its row and column
// gain (+-0) + (+-0) on +0 and stay +0: the compact block written back at `act` with +0
// elsewhere is the full block bit for bit (finite records). 8 of 10 columns: 64 of the 100
// products a pair, and no scalar tail.
template <int C, int RS, int CA>
__attribute__((target("avx2"))) void segmentBlockAvx2Active(const double* recs, const double* P,
                                                            const int* pairA, const int* pairB,
                                                            int e0, int e1, const int* act,
                                                            double* out) {
  int ca[CA];
  std::copy(act, act + CA, ca);
  double B[CA * CA];
  std::fill(B, B + CA * CA, 0.0);
  for (int e = e0; e < e1; ++e) {
    prefetchPair<RS>(recs, pairB, e, e1);
    const int a = pairA[e], b = pairB[e];
    const double* JcA = recs + static_cast<size_t>(a) * RS + 8;
    const double* recB = recs + static_cast<size_t>(b) * RS;
    const double* JcB = recB + 8;
    double M[4];
    pairMiddle(P + 6 * static_cast<size_t>(a), recB, a == b, M);
    double N[2 * CA], JA[2 * CA], JB[2 * CA];  // pairFactor's N at the active columns
    for (int c = 0; c < CA; ++c) {
      JA[c] = JcA[ca[c]], JA[CA + c] = JcA[C + ca[c]];
      JB[c] = JcB[ca[c]], JB[CA + c] = JcB[C + ca[c]];
    }
    for (int c = 0; c < CA; ++c) {
      N[c] = M[0] * JB[c] + M[1] * JB[CA + c];
      N[CA + c] = M[2] * JB[c] + M[3] * JB[CA + c];
    }
    for (int r = 0; r < CA; ++r) addPairRowAvx2<CA>(B + r * CA, JA[r], JA[CA + r], N);
  }
  std::fill(out, out + C * C, 0.0);
  for (int r = 0; r < CA; ++r)
    for (int c = 0; c < CA; ++c) out[act[r] * C + act[c]] = B[r * CA + c];
}
#endif

template <CameraModel M, RotationType R, int C>
class CpuBackend final : public Backend {
  static constexpr int RS = recordSize(C);

 public:
  explicit CpuBackend(const BackendInput& in)
      : s_(*in.structure), o_(*in.options), explicit_(in.explicitSchur) {
    loss_ = makeLoss(o_.loss, o_.lossScale);
    x_ = extractParameters(*in.problem);
    cand_ = x_;
    const int n = s_.numObs();
    rec_.assign(static_cast<size_t>(n) * RS, 0.0);
    P_.assign(static_cast<size_t>(n) * 6, 0.0);
    u_.assign(static_cast<size_t>(n) * 2, 0.0);
    scaleF_.assign(s_.nF, 1.0);
    scaleP_.assign(static_cast<size_t>(s_.numPoints) * 3, 0.0);
    for (int j : s_.varPoints) scaleP_[3 * j] = scaleP_[3 * j + 1] = scaleP_[3 * j + 2] = 1.0;
    scaleE_.assign(static_cast<size_t>(s_.numImages) * C, 0.0);
    V0_.assign(static_cast<size_t>(s_.numPoints) * 6, 0.0);
    gP_.assign(static_cast<size_t>(s_.numPoints) * 3, 0.0);
    Vinv_.assign(static_cast<size_t>(s_.numPoints) * 9, 0.0);
    yP_.assign(static_cast<size_t>(s_.numPoints) * 3, 0.0);
    deltaP_.assign(static_cast<size_t>(s_.numPoints) * 3, 0.0);
    gE_.assign(static_cast<size_t>(s_.numImages) * C, 0.0);
    colE_ = gE_;
    rhsE_ = gE_;
    yE_ = gE_;
    gF_.assign(s_.nF, 0.0);
    colF_ = gF_;
    D2F_ = gF_;
    rhsF_ = gF_;
    yF_ = gF_;
    deltaF_ = gF_;
    segB_.assign(s_.segA.size() * C * C, 0.0);
    maps_ = buildFoldMaps(s_, explicit_);
    sharedIndex_.assign(s_.numCameras, -1);
    for (size_t q = 0; q < s_.sharedCameras.size(); ++q) sharedIndex_[s_.sharedCameras[q]] = q;
    imageVaries_.assign(s_.numImages, 0);
    for (int i = 0; i < s_.numImages; ++i)
      imageVaries_[i] = s_.exclSize[i] > 0 || s_.imageShared[i] >= 0;
    for (int c = 0; c < C; ++c)
      for (int i = 0; i < s_.numImages; ++i)
        if (s_.colMap[static_cast<size_t>(i) * C + c] >= 0) {
          activeCols_.push_back(c);
          break;
        }
  }

  int numThreads() const override { return maxThreads(); }

  bool linearize(bool computeScaling, double* cost, double* gradientMaxNorm) override {
    return linearizeSteps(*this, o_, computeScaling, cost, gradientMaxNorm, times);
  }

  StepResult computeStep(double radius) override {
    return computeStepSteps(*this, explicit_, s_.nF, radius, times);
  }

  // The phases of lm_step.h on host vectors.
  void setJacobiScaling() {
    for (int c = 0; c < s_.nF; ++c) scaleF_[c] = 1.0 / (1.0 + std::sqrt(colF_[c]));
    for (int j : s_.varPoints)
      for (int k = 0; k < 3; ++k)
        scaleP_[3 * j + k] = 1.0 / (1.0 + std::sqrt(V0_[6 * j + diagIndex(k)]));
  }

  void setDamping(double radius) {
    checks_ = StepChecks();  // the first phase of a step
    D2F_.resize(s_.nF);
    for (int c = 0; c < s_.nF; ++c) D2F_[c] = clampDiag(colF_[c]) / radius;
  }

  // Point elimination: Vinv_j = (V_j + De_j^2)^-1 and P_a = Jp_a Vinv_j.
  void eliminatePoints(double radius) {
    const int nv = static_cast<int>(s_.varPoints.size());
    std::vector<char> bad(nv, 0);
    parallelFor(nv, [&](std::int64_t v) {
      const int j = s_.varPoints[v];
      double d2[3];
      for (int k = 0; k < 3; ++k) d2[k] = clampDiag(V0_[6 * j + diagIndex(k)]) / radius;
      double* Vi = &Vinv_[9 * j];
      if (!invertPoint(&V0_[6 * j], d2, Vi)) {
        bad[v] = 1;
        return;
      }
      for (int t = s_.pointObsStart[j]; t < s_.pointObsStart[j + 1]; ++t) {
        const int a = s_.pointObs[t];
        pointProjector(rec(a), Vi, &P_[6 * a]);
      }
    });
    checks_.pointsPositive = true;
    checks_.pointsMessage.clear();
    for (int v = 0; v < nv; ++v)
      if (bad[v]) {
        checks_.pointsPositive = false;
        checks_.pointsMessage = "the 3x3 block of point " + std::to_string(s_.varPoints[v]) +
                                " is not positive definite";
        break;
      }
  }

  // Reduced right-hand side, folded.
  void reducedRhs() {
    parallelFor(s_.numImages, [&](std::int64_t i) {
      double* b = &rhsE_[static_cast<size_t>(i) * C];
      std::fill(b, b + C, 0.0);
      for (int t = s_.imageObsStart[i]; t < s_.imageObsStart[i + 1]; ++t) {
        const int a = s_.imageObs[t];
        const int j = s_.obsPoint[a];
        const bool elim = s_.pointCol[j] >= 0;
        accumulateReducedRhs<C>(rec(a), elim ? &P_[6 * a] : nullptr, &gP_[3 * j], b);
      }
    });
    foldVector(rhsE_, rhsF_);
  }

  void endPhase() {}  // the OpenMP loops have joined

  void zeroStep() { std::fill(yF_.begin(), yF_.end(), 0.0); }

  void buildExplicitSchur() {
    S_.setZero(s_.nF, s_.nF);
    foldMatrix();
    for (int c = 0; c < s_.nF; ++c) S_(c, c) += D2F_[c];
  }

  void solveExplicit() {
    Eigen::LLT<Eigen::MatrixXd, Eigen::Upper> llt(S_);
    checks_.systemPositive = llt.info() == Eigen::Success;
    if (!checks_.systemPositive) return;
    Eigen::Map<Eigen::VectorXd> y(yF_.data(), s_.nF);
    y = llt.solve(Eigen::Map<const Eigen::VectorXd>(rhsF_.data(), s_.nF));
  }

  void checkStep() { checks_.stepFinite = allFinite(yF_); }

  StepChecks stepChecks() const { return checks_; }
  LinearizationScalars linearization() const { return lin_; }

  // y_P = Vinv (g_P - W' y_E) per point.
  void backSubstitute() {
    gather(yF_, yE_);
    const int nv = static_cast<int>(s_.varPoints.size());
    parallelFor(nv, [&](std::int64_t v) {
      const int j = s_.varPoints[v];
      double acc[3] = {gP_[3 * j], gP_[3 * j + 1], gP_[3 * j + 2]};
      for (int t = s_.pointObsStart[j]; t < s_.pointObsStart[j + 1]; ++t) {
        const int a = s_.pointObs[t];
        double z[2];
        cameraTimes<C>(rec(a), &yE_[static_cast<size_t>(s_.obsImage[a]) * C], z);
        z[0] = -z[0], z[1] = -z[1];
        pointTransposeTimes(rec(a), z, acc);
      }
      sym3Times(&Vinv_[9 * j], acc, &yP_[3 * j]);
    });
    bool finite = true;
    for (int j : s_.varPoints)
      for (int k = 0; k < 3; ++k) finite = finite && std::isfinite(yP_[3 * j + k]);
    checks_.pointStepFinite = finite;
  }

  void modelCostChange() {
    checks_.modelCostChange = chunkedSum(s_.numObs(), [&](std::int64_t a) {
      const int j = s_.obsPoint[a];
      return ba::modelCostChange<C>(rec(a), &yE_[static_cast<size_t>(s_.obsImage[a]) * C],
                                    s_.pointCol[j] >= 0 ? &yP_[3 * j] : nullptr);
    });
  }

  void scaleStep() {
    for (int c = 0; c < s_.nF; ++c) deltaF_[c] = -yF_[c] * scaleF_[c];
    for (int j : s_.varPoints)
      for (int k = 0; k < 3; ++k) deltaP_[3 * j + k] = -yP_[3 * j + k] * scaleP_[3 * j + k];
  }

  void evaluateCandidate(double* cost, double* stepNorm) override {
    const double t0 = now();
    const int K = s_.K;
    double sq = 0.0;
    for (int i = 0; i < s_.numImages; ++i) {
      double d[6];
      for (int k = 0; k < 6; ++k) {
        const int m = s_.colMap[static_cast<size_t>(i) * C + k];
        d[k] = m >= 0 ? deltaF_[m] : 0.0;
      }
      if (s_.rotationVaries[i]) {
        plusRotation<R>(&x_.rotation[4 * i], d, &cand_.rotation[4 * i]);
        for (int k = 0; k < rotationParams(R); ++k) {
          const double v = x_.rotation[4 * i + k] - cand_.rotation[4 * i + k];
          sq += v * v;
        }
      }
      if (s_.translationVaries[i])
        for (int k = 0; k < 3; ++k) {
          cand_.translation[3 * i + k] = x_.translation[3 * i + k] + d[3 + k];
          const double v = x_.translation[3 * i + k] - cand_.translation[3 * i + k];
          sq += v * v;
        }
    }
    for (int c = 0; c < s_.numCameras; ++c) {
      if (!s_.cameraVaries[c]) continue;
      for (int k = 0; k < K; ++k) {
        const int m = s_.cameraCol[static_cast<size_t>(c) * K + k];
        cand_.intrinsics[K * c + k] = x_.intrinsics[K * c + k] + (m >= 0 ? deltaF_[m] : 0.0);
        const double v = x_.intrinsics[K * c + k] - cand_.intrinsics[K * c + k];
        sq += v * v;
      }
    }
    sq += chunkedSum(static_cast<std::int64_t>(s_.varPoints.size()), [&](std::int64_t v) {
      const int j = s_.varPoints[v];
      double t = 0.0;
      for (int k = 0; k < 3; ++k) {
        cand_.points[3 * j + k] = x_.points[3 * j + k] + deltaP_[3 * j + k];
        const double e = x_.points[3 * j + k] - cand_.points[3 * j + k];
        t += e * e;
      }
      return t;
    });
    *stepNorm = std::sqrt(sq);
    *cost = costAt(cand_);
    times.residual += now() - t0;
  }

  void acceptCandidate() override { x_ = cand_; }

  double parameterNorm() override {
    double sq = 0.0;
    for (int i = 0; i < s_.numImages; ++i) {
      if (s_.rotationVaries[i])
        for (int k = 0; k < rotationParams(R); ++k)
          sq += x_.rotation[4 * i + k] * x_.rotation[4 * i + k];
      if (s_.translationVaries[i])
        for (int k = 0; k < 3; ++k) sq += x_.translation[3 * i + k] * x_.translation[3 * i + k];
    }
    for (int c = 0; c < s_.numCameras; ++c)
      if (s_.cameraVaries[c])
        for (int k = 0; k < s_.K; ++k)
          sq += x_.intrinsics[s_.K * c + k] * x_.intrinsics[s_.K * c + k];
    sq += chunkedSum(static_cast<std::int64_t>(s_.varPoints.size()), [&](std::int64_t v) {
      const double* X = &x_.points[3 * s_.varPoints[v]];
      return X[0] * X[0] + X[1] * X[1] + X[2] * X[2];
    });
    return std::sqrt(sq);
  }

  Parameters parameters() override { return x_; }

  // The per-array work behind the phases (public: lm_step.h drives them).
  static int diagIndex(int k) { return k == 0 ? 0 : (k == 1 ? 3 : 5); }
  double clampDiag(double v) const {
    return std::min(std::max(v, o_.minLmDiagonal), o_.maxLmDiagonal);
  }
  double* rec(int a) { return &rec_[static_cast<size_t>(a) * RS]; }

  void updateScaleE() {
    for (int i = 0; i < s_.numImages; ++i)
      for (int c = 0; c < C; ++c) {
        const int m = s_.colMap[static_cast<size_t>(i) * C + c];
        scaleE_[static_cast<size_t>(i) * C + c] = m >= 0 ? scaleF_[m] : 0.0;
      }
  }

  const double* intrinsicsOf(const Parameters& x, int image) const {
    return &x.intrinsics[static_cast<size_t>(s_.imageCamera[image]) * s_.K];
  }

  void evaluateAll() {
    lin_.cost = chunkedSum(s_.numObs(), [&](std::int64_t a) {
      const int i = s_.obsImage[a], j = s_.obsPoint[a];
      const double* sc = &scaleE_[static_cast<size_t>(i) * C];
      // A constant image's Jc is zero (its scaling is): not evaluated.
      return imageVaries_[i]
                 ? evaluateObservation<M, R, C>(loss_, &x_.rotation[4 * i], &x_.translation[3 * i],
                                                intrinsicsOf(x_, i), &x_.points[3 * j],
                                                &s_.obsXY[2 * a], sc, &scaleP_[3 * j], rec(a))
                 : evaluateObservation<M, R, C, false>(
                       loss_, &x_.rotation[4 * i], &x_.translation[3 * i], intrinsicsOf(x_, i),
                       &x_.points[3 * j], &s_.obsXY[2 * a], sc, &scaleP_[3 * j], rec(a));
    });
  }

  double costAt(const Parameters& x) {
    return chunkedSum(s_.numObs(), [&](std::int64_t a) {
      const int i = s_.obsImage[a], j = s_.obsPoint[a];
      return observationCost<M, R>(loss_, &x.rotation[4 * i], &x.translation[3 * i],
                                   intrinsicsOf(x, i), &x.points[3 * j], &s_.obsXY[2 * a]);
    });
  }

  void rescaleRecords() {
    parallelFor(s_.numObs(), [&](std::int64_t a) {
      double* r = rec(a);
      const double* sp = &scaleP_[3 * s_.obsPoint[a]];
      const double* sc = &scaleE_[static_cast<size_t>(s_.obsImage[a]) * C];
      for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 3; ++k) r[2 + 3 * i + k] *= sp[k];
        for (int k = 0; k < C; ++k) r[8 + C * i + k] *= sc[k];
      }
    });
  }

  // Per image: gradient and squared column norms (expanded), then folded.
  void reduceImages() {
    parallelFor(s_.numImages, [&](std::int64_t i) {
      double* g = &gE_[static_cast<size_t>(i) * C];
      double* n = &colE_[static_cast<size_t>(i) * C];
      std::fill(g, g + C, 0.0);
      std::fill(n, n + C, 0.0);
      for (int t = s_.imageObsStart[i]; t < s_.imageObsStart[i + 1]; ++t)
        accumulateImageGradient<C>(rec(s_.imageObs[t]), g, n);
    });
    foldVector(gE_, gF_);
    foldVector(colE_, colF_);
  }

  void reducePoints() {
    parallelFor(static_cast<std::int64_t>(s_.varPoints.size()), [&](std::int64_t v) {
      const int j = s_.varPoints[v];
      double* V = &V0_[6 * j];
      double* g = &gP_[3 * j];
      std::fill(V, V + 6, 0.0);
      std::fill(g, g + 3, 0.0);
      for (int t = s_.pointObsStart[j]; t < s_.pointObsStart[j + 1]; ++t)
        accumulatePoint(rec(s_.pointObs[t]), V, g);
    });
  }

  // max |x - Plus(x, -g)| with the unscaled gradient g = J'r.
  void gradientMax() {
    double mx = 0.0, sq = 0.0;
    auto unscaled = [&](int m) { return m >= 0 ? gF_[m] / scaleF_[m] : 0.0; };
    for (int i = 0; i < s_.numImages; ++i) {
      double g[6];
      for (int k = 0; k < 6; ++k) g[k] = -unscaled(s_.colMap[static_cast<size_t>(i) * C + k]);
      if (s_.rotationVaries[i]) rotationDifference<R>(&x_.rotation[4 * i], g, &sq, &mx);
      if (s_.translationVaries[i])
        for (int k = 0; k < 3; ++k) {
          const double x = x_.translation[3 * i + k];
          mx = std::max(mx, std::fabs(x - (x + g[3 + k])));
        }
    }
    for (int c = 0; c < s_.numCameras; ++c)
      for (int k = 0; k < s_.K && s_.cameraVaries[c]; ++k) {
        const double x = x_.intrinsics[s_.K * c + k];
        const double g = -unscaled(s_.cameraCol[static_cast<size_t>(c) * s_.K + k]);
        mx = std::max(mx, std::fabs(x - (x + g)));
      }
    for (int j : s_.varPoints)
      for (int k = 0; k < 3; ++k) {
        const double x = x_.points[3 * j + k];
        const double g = -gP_[3 * j + k] / scaleP_[3 * j + k];
        mx = std::max(mx, std::fabs(x - (x + g)));
      }
    lin_.gradientMaxNorm = mx;
  }

  // Expanded per-image vectors to the reduced columns (fold_maps.h).
  void foldVector(const std::vector<double>& e, std::vector<double>& f) {
    parallelFor(s_.nF, [&](std::int64_t m) {
      double v = 0.0;
      for (int k = maps_.vecStart[m]; k < maps_.vecStart[m + 1]; ++k) v += e[maps_.vecSrc[k]];
      f[m] = v;
    });
  }

  void gather(const std::vector<double>& f, std::vector<double>& e) {
    for (size_t t = 0; t < e.size(); ++t) {
      const int m = s_.colMap[t];
      e[t] = m >= 0 ? f[m] : 0.0;
    }
  }

  // B(i, k) of every listed segment.
  void computeSegments() {
    const int ns = static_cast<int>(s_.segA.size());
#if defined(__x86_64__) && defined(__GNUC__)
    if (o_.cpuAvx2 && cpuHasAvx2()) {
      using Active = void (*)(const double*, const double*, const int*, const int*, int, int,
                              const int*, double*);
      Active active = nullptr;
      const int na = static_cast<int>(activeCols_.size());
      if constexpr (C > 6) {
        if (na == C - 1) active = &segmentBlockAvx2Active<C, RS, C - 1>;
        if (na == C - 2) active = &segmentBlockAvx2Active<C, RS, C - 2>;
        if (na == C - 3) active = &segmentBlockAvx2Active<C, RS, C - 3>;
      }
      if (active) {
        parallelForDynamic(ns, [&](std::int64_t g) {
          active(rec_.data(), P_.data(), s_.pairA.data(), s_.pairB.data(), s_.segStart[g],
                 s_.segStart[g + 1], activeCols_.data(), &segB_[static_cast<size_t>(g) * C * C]);
        });
        return;
      }
    }
#endif
    auto block = &segmentBlockBase<C, RS>;
#if defined(__x86_64__) && defined(__GNUC__)
    if (o_.cpuAvx2 && cpuHasAvx2()) block = &segmentBlockAvx2<C, RS>;
#endif
    parallelForDynamic(ns, [&](std::int64_t g) {
      block(rec_.data(), P_.data(), s_.pairA.data(), s_.pairB.data(), s_.segStart[g],
            s_.segStart[g + 1], &segB_[static_cast<size_t>(g) * C * C]);
    });
  }

  // The upper triangle of S from the segment blocks (fold_maps.h).
  void foldMatrix() {
    const std::int64_t n = s_.nF;
    parallelFor(static_cast<std::int64_t>(maps_.matTarget.size()), [&](std::int64_t e) {
      double v = 0.0;
      for (int k = maps_.matStart[e]; k < maps_.matStart[e + 1]; ++k)
        v += maps_.matFactor[k] * segB_[maps_.matSrc[k]];
      const std::int64_t t = maps_.matTarget[e];
      S_(t / n, t % n) = v;
    });
  }

  // Implicit product y = S x (D2F the damping of the camera-side columns).
  void schurTimes(const std::vector<double>& D2F, const std::vector<double>& x,
                  std::vector<double>& y) {
    gather(x, xE_);
    parallelFor(s_.numObs(), [&](std::int64_t a) {
      cameraTimes<C>(rec(a), &xE_[static_cast<size_t>(s_.obsImage[a]) * C], &u_[2 * a]);
    });
    parallelFor(static_cast<std::int64_t>(s_.varPoints.size()), [&](std::int64_t v) {
      const int j = s_.varPoints[v];
      double t[3] = {0, 0, 0};
      for (int q = s_.pointObsStart[j]; q < s_.pointObsStart[j + 1]; ++q) {
        const int a = s_.pointObs[q];
        const double* P = &P_[6 * a];
        const double* z = &u_[2 * a];
        for (int k = 0; k < 3; ++k) t[k] += P[k] * z[0] + P[3 + k] * z[1];
      }
      for (int q = s_.pointObsStart[j]; q < s_.pointObsStart[j + 1]; ++q) {
        const int a = s_.pointObs[q];
        const double* Jp = rec(a) + 2;
        u_[2 * a] -= Jp[0] * t[0] + Jp[1] * t[1] + Jp[2] * t[2];
        u_[2 * a + 1] -= Jp[3] * t[0] + Jp[4] * t[1] + Jp[5] * t[2];
      }
    });
    parallelFor(s_.numImages, [&](std::int64_t i) {
      double* o = &yE_[static_cast<size_t>(i) * C];
      std::fill(o, o + C, 0.0);
      for (int t = s_.imageObsStart[i]; t < s_.imageObsStart[i + 1]; ++t) {
        const int a = s_.imageObs[t];
        cameraTransposeTimes<C>(rec(a), &u_[2 * a], o);
      }
    });
    foldVector(yE_, y);
    for (int c = 0; c < s_.nF; ++c) y[c] += D2F[c] * x[c];
  }

  struct Block {
    int offset, size;
    std::vector<double> inv;
  };

  // Block Jacobi: per image its exclusive columns, per shared camera its columns.
  void buildPreconditioner() {
    const std::vector<double>& D2F = D2F_;
    blocks_.clear();
    const bool schur = o_.preconditioner == PreconditionerType::kSchurJacobi;
    std::vector<Block> blocks;
    for (int i = 0; i < s_.numImages; ++i)
      if (s_.exclSize[i] > 0) blocks.push_back({s_.exclOffset[i], s_.exclSize[i], {}});
    const int nImageBlocks = static_cast<int>(blocks.size());
    for (int cam : s_.sharedCameras)
      blocks.push_back({s_.sharedOffset[cam], s_.sharedSize[cam], {}});
    std::vector<Eigen::MatrixXd> A(blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) A[b].setZero(blocks[b].size, blocks[b].size);
    // Image blocks: the diagonal segment (Schur) or F'F of the image (Jacobi).
    {
      std::vector<int> imageBlock(s_.numImages, -1);
      for (int b = 0, i = 0; i < s_.numImages; ++i)
        if (s_.exclSize[i] > 0) imageBlock[i] = b++;
      parallelFor(s_.numImages, [&](std::int64_t i) {
        if (imageBlock[i] < 0) return;
        double B[C * C];
        if (schur && s_.diagSegment[i] >= 0) {
          std::copy_n(&segB_[static_cast<size_t>(s_.diagSegment[i]) * C * C], C * C, B);
        } else {
          std::fill(B, B + C * C, 0.0);
          for (int t = s_.imageObsStart[i]; t < s_.imageObsStart[i + 1]; ++t) {
            const double* Jc = rec(s_.imageObs[t]) + 8;
            for (int r = 0; r < C; ++r)
              for (int c = 0; c < C; ++c) B[r * C + c] += Jc[r] * Jc[c] + Jc[C + r] * Jc[C + c];
          }
        }
        Eigen::MatrixXd& Mb = A[imageBlock[i]];
        const int off = s_.exclOffset[i];
        for (int r = 0; r < C; ++r) {
          const int Rr = s_.colMap[static_cast<size_t>(i) * C + r];
          if (Rr < off || Rr >= off + s_.exclSize[i]) continue;
          for (int c = 0; c < C; ++c) {
            const int Cc = s_.colMap[static_cast<size_t>(i) * C + c];
            if (Cc < off || Cc >= off + s_.exclSize[i]) continue;
            Mb(Rr - off, Cc - off) = B[r * C + c];
          }
        }
      });
    }
    if (!s_.sharedCameras.empty()) sharedBlocks(schur, A, nImageBlocks, blocks);
    std::vector<char> bad(blocks.size(), 0);
    parallelFor(static_cast<std::int64_t>(blocks.size()), [&](std::int64_t b) {
      Eigen::MatrixXd& Mb = A[b];
      for (int k = 0; k < blocks[b].size; ++k) Mb(k, k) += D2F[blocks[b].offset + k];
      Eigen::LLT<Eigen::MatrixXd> llt(Mb);
      if (llt.info() != Eigen::Success) {
        bad[b] = 1;
        return;
      }
      Eigen::MatrixXd inv = llt.solve(Eigen::MatrixXd::Identity(Mb.rows(), Mb.cols()));
      blocks[b].inv.assign(inv.data(), inv.data() + inv.size());
    });
    checks_.systemPositive = true;
    for (size_t b = 0; b < blocks.size(); ++b)
      if (bad[b]) {
        checks_.systemPositive = false;
        return;
      }
    blocks_ = std::move(blocks);
  }

  // Shared camera blocks: sum of Jint'Jint minus, per point, W_q Vinv W_q' with
  // W_q = sum over the point's observations through camera q of Jint' Jp.
  void sharedBlocks(bool schur, std::vector<Eigen::MatrixXd>& A, int first,
                    const std::vector<Block>& blocks) {
    const int nq = static_cast<int>(s_.sharedCameras.size());
    const int K = C - kPoseDims;
    const std::int64_t chunks = (s_.numObs() + kChunk - 1) / kChunk;
    std::vector<double> acc(static_cast<size_t>(chunks) * nq * K * K, 0.0);
    parallelFor(chunks, [&](std::int64_t ch) {
      double* out = &acc[static_cast<size_t>(ch) * nq * K * K];
      const std::int64_t end = std::min<std::int64_t>(s_.numObs(), (ch + 1) * kChunk);
      for (std::int64_t a = ch * kChunk; a < end; ++a) {
        const int cam = s_.imageShared[s_.obsImage[a]];
        if (cam < 0) continue;
        const double* Jc = rec(a) + 8 + kPoseDims;
        double* o = out + static_cast<size_t>(sharedIndex_[cam]) * K * K;
        for (int r = 0; r < K; ++r)
          for (int c = 0; c < K; ++c) o[r * K + c] += Jc[r] * Jc[c] + Jc[C + r] * Jc[C + c];
      }
    });
    const std::int64_t nv = static_cast<std::int64_t>(s_.varPoints.size());
    const std::int64_t pchunks = (nv + kChunk - 1) / kChunk;
    std::vector<double> corr(static_cast<size_t>(pchunks) * nq * K * K, 0.0);
    if (schur)
      parallelFor(pchunks, [&](std::int64_t ch) {
        double* out = &corr[static_cast<size_t>(ch) * nq * K * K];
        const std::int64_t end = std::min(nv, (ch + 1) * kChunk);
        std::vector<int> qs;
        std::vector<double> W;
        for (std::int64_t v = ch * kChunk; v < end; ++v) {
          const int j = s_.varPoints[v];
          qs.clear();
          W.clear();
          for (int t = s_.pointObsStart[j]; t < s_.pointObsStart[j + 1]; ++t) {
            const int a = s_.pointObs[t];
            const int cam = s_.imageShared[s_.obsImage[a]];
            if (cam < 0) continue;
            const int q = sharedIndex_[cam];
            size_t slot = std::find(qs.begin(), qs.end(), q) - qs.begin();
            if (slot == qs.size()) qs.push_back(q), W.resize(W.size() + 3 * K, 0.0);
            const double* Jp = rec(a) + 2;
            const double* Ji = rec(a) + 8 + kPoseDims;
            double* w = &W[slot * 3 * K];
            for (int r = 0; r < K; ++r)
              for (int k = 0; k < 3; ++k) w[r * 3 + k] += Ji[r] * Jp[k] + Ji[C + r] * Jp[3 + k];
          }
          const double* Vi = &Vinv_[9 * j];
          for (size_t slot = 0; slot < qs.size(); ++slot) {
            const double* w = &W[slot * 3 * K];
            double* o = out + static_cast<size_t>(qs[slot]) * K * K;
            for (int r = 0; r < K; ++r) {
              double wv[3];
              sym3Times(Vi, w + 3 * r, wv);
              for (int c = 0; c < K; ++c)
                o[r * K + c] += wv[0] * w[3 * c] + wv[1] * w[3 * c + 1] + wv[2] * w[3 * c + 2];
            }
          }
        }
      });
    for (int q = 0; q < nq; ++q) {
      std::vector<double> tot(K * K, 0.0);
      for (std::int64_t ch = 0; ch < chunks; ++ch)
        for (int e = 0; e < K * K; ++e)
          tot[e] += acc[(static_cast<size_t>(ch) * nq + q) * K * K + e];
      for (std::int64_t ch = 0; ch < pchunks; ++ch)
        for (int e = 0; e < K * K; ++e)
          tot[e] -= corr[(static_cast<size_t>(ch) * nq + q) * K * K + e];
      const int cam = s_.sharedCameras[q];
      Eigen::MatrixXd& Mb = A[first + q];
      for (int r = 0, rr = 0; r < K; ++r) {
        if (s_.cameraConstant[cam] & (1u << r)) continue;
        for (int c = 0, cc = 0; c < K; ++c) {
          if (s_.cameraConstant[cam] & (1u << c)) continue;
          Mb(rr, cc++) = tot[r * K + c];
        }
        ++rr;
      }
      (void)blocks;
    }
  }

  void applyPreconditioner(const std::vector<double>& r, std::vector<double>& z) {
    parallelFor(static_cast<std::int64_t>(blocks_.size()), [&](std::int64_t b) {
      const Block& B = blocks_[b];
      for (int i = 0; i < B.size; ++i) {
        double s = 0.0;
        for (int k = 0; k < B.size; ++k)
          s += B.inv[static_cast<size_t>(k) * B.size + i] * r[B.offset + k];
        z[B.offset + i] = s;
      }
    });
  }

  // The loop of conjugate_gradients.h on host vectors (sequential sums, as dot()).
  struct HostCgOps {
    CpuBackend& be;
    const std::vector<double>& D2F;
    using V = std::vector<double>;
    double dot(const V& a, const V& b) { return ba::dot(a, b); }
    void precondition(const V& r, V& z) { be.applyPreconditioner(r, z); }
    void multiply(const V& p, V& q) { be.schurTimes(D2F, p, q); }
    void setZero(V& y) { std::fill(y.begin(), y.end(), 0.0); }
    void copy(const V& from, V& to) { std::copy(from.begin(), from.end(), to.begin()); }
    void xpby(const V& z, double beta, V& p) {
      for (size_t i = 0; i < p.size(); ++i) p[i] = z[i] + beta * p[i];
    }
    void axpy(double alpha, const V& p, V& y) {
      for (size_t i = 0; i < y.size(); ++i) y[i] += alpha * p[i];
    }
    void subtract(const V& b, const V& t, V& r) {
      for (size_t i = 0; i < r.size(); ++i) r[i] = b[i] - t[i];
    }
    double twiceQuadratic(const V& y, const V& b, const V& r) {
      double q = 0.0;
      for (size_t i = 0; i < y.size(); ++i) q -= y[i] * (b[i] + r[i]);
      return q;
    }
  };

  bool conjugateGradients(StepResult* res) {
    const size_t n = static_cast<size_t>(s_.nF);
    xE_.assign(static_cast<size_t>(s_.numImages) * C, 0.0);
    std::vector<double> r(n), p(n), z(n), q(n), tmp(n);
    HostCgOps ops{*this, D2F_};
    return ba::conjugateGradients(ops, CgVectors<std::vector<double>>{yF_, rhsF_, r, p, z, q, tmp},
                                  o_, res);
  }

 private:
  const Structure& s_;
  const Options& o_;
  bool explicit_;
  LossParams loss_;
  Parameters x_, cand_;
  std::vector<double> rec_, P_, u_;
  std::vector<double> scaleF_, scaleP_, scaleE_;
  std::vector<double> V0_, gP_, Vinv_, yP_, deltaP_;
  std::vector<double> gE_, colE_, rhsE_, yE_, xE_;
  std::vector<double> gF_, colF_, D2F_, rhsF_, yF_, deltaF_;
  std::vector<double> segB_;
  std::vector<int> sharedIndex_;
  std::vector<int>
      activeCols_;  // expanded columns that vary in some image (segmentBlockAvx2Active)
  std::vector<char> imageVaries_;  // any camera-side column of the image varies
  FoldMaps maps_;
  std::vector<Block> blocks_;
  Eigen::MatrixXd S_;
  StepChecks checks_;  // the step's scalars, as the phases leave them
  LinearizationScalars lin_;
};

template <CameraModel M, RotationType R>
std::unique_ptr<Backend> makeFor(const BackendInput& in) {
  constexpr int K = numIntrinsics(M);
  if (in.structure->C == kPoseDims) return std::make_unique<CpuBackend<M, R, kPoseDims>>(in);
  return std::make_unique<CpuBackend<M, R, kPoseDims + K>>(in);
}

}  // namespace

std::unique_ptr<Backend> makeCpuBackend(const BackendInput& in) {
  std::unique_ptr<Backend> b;
  dispatchModel(in.structure->model, in.structure->rotation, [&](auto mTag, auto rTag) {
    b = makeFor<decltype(mTag)::value, decltype(rTag)::value>(in);
  });
  return b;
}

}  // namespace vidmap::ba
