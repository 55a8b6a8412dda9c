// The per-pixel and per-track arithmetic of the KLT tracker, shared by the CPU backend (the
// oracle) and the CUDA kernels. Design: docs/architecture.md (KLT: the tracker; KLT: checks and
// ends) and docs/klt_cuda.md.
//
//   Lucas and Kanade, "An Iterative Image Registration Technique...", IJCAI 1981.
//   Shi and Tomasi, "Good Features to Track", CVPR 1994 (lambda_min selection).
//   Bouguet, "Pyramidal Implementation of the Affine Lucas Kanade Feature Tracker", 2000.
//   Baker and Matthews, "Lucas-Kanade 20 Years On", IJCV 2004 (inverse compositional).
//   Kalal, Mikolajczyk and Matas, "Forward-Backward Error", ICPR 2010.
//
// Rules that make the CUDA kernels equal these functions bit for bit (built -fmad=false; the
// host builds with -ffp-contract=off):
// - float only; every expression is evaluated in the order written (left to right, with the
//   parentheses shown). Multiplications by 1/16, 1/32 and 0.5 are exact.
// - Only correctly rounded operations: + - * /, sqrtf, floorf, ceilf, fminf, fmaxf. No expf, powf,
//   rsqrtf or fast-math intrinsics.
// - Window sums use the lane-strided order of laneSum (below): window pixel k (raster order,
//   row by row) goes into partial k % 32 in increasing k, and the 32 partials are added by
//   the tree of laneTreeSum. A warp whose lane l takes pixels l, l + 32, l + 64, ... and
//   reduces with __shfl_xor_sync(mask, v, 16, 8, 4, 2, 1) gets the same bits on every lane.
// - A loop that ends early on the CPU (convergence, a lost track) runs to its fixed bound
//   on the GPU with the update masked; the masked iterations change nothing.
#pragma once

#include <math.h>

#include <cstdint>

#include "vidmap/core/hd.h"
#include "vidmap/io/color.h"
#include "vidmap/klt/layout.h"
#include "vidmap/klt/options.h"

namespace vidmap::klt {

// Host-only vector types for the hot window sums (GCC/Clang vector extensions, SSE2 on
// x86-64): the same IEEE single-precision operations lane by lane, so the results equal the
// generic loops below bit for bit (a test checks it). The device compiles the generic loops.
#if !defined(__CUDA_ARCH__) && (defined(__GNUC__) || defined(__clang__))
#define VIDMAP_KLT_HOST_VECTORS 1
namespace hostvec {
typedef float v4 __attribute__((vector_size(16)));
inline v4 load(const float* p) {
  v4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, v4 v) { __builtin_memcpy(p, &v, sizeof v); }
}  // namespace hostvec
#endif

// ---------------------------------------------------------------------------------------------
// Records and the status word

// One track in a buffer of records (16 bytes): the position, a measure (zero-mean NCC after
// tracking, forward-backward error after the check) and the status word held exactly in a
// float: bit 0 alive, bits 1-4 the end reason, bits 16-23 the iterations used at level 0.
struct TrackRecord {
  float x = 0.0f;
  float y = 0.0f;
  float measure = 0.0f;
  float status = 0.0f;
};
static_assert(sizeof(TrackRecord) == 16, "a track record is four floats");

VIDMAP_HD inline float makeStatus(int reason, int iterationsLevel0) {
  const int word = (reason == 0 ? 1 : 0) | (reason << 1) | (iterationsLevel0 << 16);
  return static_cast<float>(word);  // exact: word < 2^24
}
VIDMAP_HD inline int statusWord(float status) { return static_cast<int>(status); }
VIDMAP_HD inline bool statusAlive(float status) { return (statusWord(status) & 1) != 0; }
VIDMAP_HD inline int statusReason(float status) { return (statusWord(status) >> 1) & 15; }
VIDMAP_HD inline int statusIterations(float status) { return (statusWord(status) >> 16) & 255; }

// A new track at a pixel (selection): alive, measure = its lambda_min.
VIDMAP_HD inline TrackRecord seedRecord(float x, float y, float score) {
  return {x, y, score, makeStatus(0, 0)};
}

// ---------------------------------------------------------------------------------------------
// Small helpers

VIDMAP_HD inline int clampInt(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Inside the frame with a margin: margin <= x <= w - 1 - margin, same for y. False for NaN.
VIDMAP_HD inline bool insideMargin(float x, float y, int w, int h, int margin) {
  return x >= static_cast<float>(margin) && y >= static_cast<float>(margin) &&
         x <= static_cast<float>(w - 1 - margin) && y <= static_cast<float>(h - 1 - margin);
}

// ---------------------------------------------------------------------------------------------
// Frame conversion and the pyramid

// Rec. 601 luma of an 8-bit RGB pixel, in [0, 1]: io's one definition (io/color.h).
VIDMAP_HD inline float grayFromRgb(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  return io::lumaRec601(r, g, b);
}

// The 5-tap [1 4 6 4 1] / 16 filter: ((((a + 4b) + 6c) + 4d) + e) * (1/16).
VIDMAP_HD inline float binomial5(float a, float b, float c, float d, float e) {
  return ((((a + 4.0f * b) + 6.0f * c) + 4.0f * d) + e) * 0.0625f;
}

// The x blur of one source row at output column x: the taps 2x - 2 .. 2x + 2 clamped to the
// row. (The CPU backend calls binomial5 directly where no tap is clamped: the same values.)
VIDMAP_HD inline float pyrDownX(const float* row, int sw, int x) {
  return binomial5(row[clampInt(2 * x - 2, 0, sw - 1)], row[clampInt(2 * x - 1, 0, sw - 1)],
                   row[clampInt(2 * x, 0, sw - 1)], row[clampInt(2 * x + 1, 0, sw - 1)],
                   row[clampInt(2 * x + 2, 0, sw - 1)]);
}

// One pixel (x, y) of level l + 1 from level l (src, sw x sh): the x blur (pyrDownX, rounded
// to float) of the five source rows 2y - 2 .. 2y + 2 (clamped), then the y blur of the five
// (binomial5). A backend may run it as two passes with a scratch image of x blurs: the same
// arithmetic.
VIDMAP_HD inline float pyrDownPixel(const float* src, int sw, int sh, int x, int y) {
  float h[5];
  for (int r = 0; r < 5; ++r)
    h[r] =
        pyrDownX(src + static_cast<std::int64_t>(clampInt(2 * y + r - 2, 0, sh - 1)) * sw, sw, x);
  return binomial5(h[0], h[1], h[2], h[3], h[4]);
}

// The Scharr derivatives from the six taps they read (rows y - 1, y, y + 1 = r0, r1, r2 and
// columns x - 1, x, x + 1 = m, c, p), per pixel (the 3-10-3 kernel / 32):
//   gx = ((3 (r0p - r0m) + 10 (r1p - r1m)) + 3 (r2p - r2m)) / 32
//   gy = ((3 (r2m - r0m) + 10 (r2c - r0c)) + 3 (r2p - r0p)) / 32
VIDMAP_HD inline float scharrX(float r0m, float r0p, float r1m, float r1p, float r2m, float r2p) {
  return ((3.0f * (r0p - r0m) + 10.0f * (r1p - r1m)) + 3.0f * (r2p - r2m)) * 0.03125f;
}
VIDMAP_HD inline float scharrY(float r0m, float r2m, float r0c, float r2c, float r0p, float r2p) {
  return ((3.0f * (r2m - r0m) + 10.0f * (r2c - r0c)) + 3.0f * (r2p - r0p)) * 0.03125f;
}

// The Scharr derivative of pixel (x, y), coordinates clamped to the image.
VIDMAP_HD inline void scharrPixel(const float* src, int w, int h, int x, int y, float* gx,
                                  float* gy) {
  const int xm = clampInt(x - 1, 0, w - 1), xp = clampInt(x + 1, 0, w - 1);
  const float* r0 = src + static_cast<std::int64_t>(clampInt(y - 1, 0, h - 1)) * w;
  const float* r1 = src + static_cast<std::int64_t>(y) * w;
  const float* r2 = src + static_cast<std::int64_t>(clampInt(y + 1, 0, h - 1)) * w;
  *gx = scharrX(r0[xm], r0[xp], r1[xm], r1[xp], r2[xm], r2[xp]);
  *gy = scharrY(r0[xm], r2[xm], r0[x], r2[x], r0[xp], r2[xp]);
}

// ---------------------------------------------------------------------------------------------
// Bilinear sampling. A window around a point shares the fractional part of the point, so the
// four weights are computed once and each window pixel (i, j) reads the taps at
// (x0 + i, y0 + j), (x0 + i + 1, ...), ... clamped to the image (border replication):
//   v = ((w00 p00 + w10 p10) + w01 p01) + w11 p11
// with fx = x - floor(x), w00 = (1 - fx)(1 - fy), w10 = fx (1 - fy), w01 = (1 - fx) fy,
// w11 = fx fy. The caller keeps x and y within a few windows of the image (see trackLoop).

struct Bilinear {
  int x0 = 0, y0 = 0;
  float w00 = 0, w10 = 0, w01 = 0, w11 = 0;
};

VIDMAP_HD inline Bilinear bilinearAt(float x, float y) {
  const float fx0 = floorf(x), fy0 = floorf(y);
  const float fx = x - fx0, fy = y - fy0;
  Bilinear b;
  b.x0 = static_cast<int>(fx0);
  b.y0 = static_cast<int>(fy0);
  b.w00 = (1.0f - fx) * (1.0f - fy);
  b.w10 = fx * (1.0f - fy);
  b.w01 = (1.0f - fx) * fy;
  b.w11 = fx * fy;
  return b;
}

VIDMAP_HD inline float bilinearCombine(const Bilinear& b, float p00, float p10, float p01,
                                       float p11) {
  return ((b.w00 * p00 + b.w10 * p10) + b.w01 * p01) + b.w11 * p11;
}

// The sample at (x0 + i, y0 + j) plus the weights' fraction, clamped.
VIDMAP_HD inline float bilinearTap(const float* img, int w, int h, const Bilinear& b, int i,
                                   int j) {
  const int xa = clampInt(b.x0 + i, 0, w - 1), xb = clampInt(b.x0 + i + 1, 0, w - 1);
  const std::int64_t ya = static_cast<std::int64_t>(clampInt(b.y0 + j, 0, h - 1)) * w;
  const std::int64_t yb = static_cast<std::int64_t>(clampInt(b.y0 + j + 1, 0, h - 1)) * w;
  return bilinearCombine(b, img[ya + xa], img[ya + xb], img[yb + xa], img[yb + xb]);
}

// The same for the interleaved gradient (gx, gy) of a level.
VIDMAP_HD inline void bilinearTapGrad(const float* grad, int w, int h, const Bilinear& b, int i,
                                      int j, float* gx, float* gy) {
  const int xa = clampInt(b.x0 + i, 0, w - 1), xb = clampInt(b.x0 + i + 1, 0, w - 1);
  const std::int64_t ya = static_cast<std::int64_t>(clampInt(b.y0 + j, 0, h - 1)) * w;
  const std::int64_t yb = static_cast<std::int64_t>(clampInt(b.y0 + j + 1, 0, h - 1)) * w;
  *gx = bilinearCombine(b, grad[2 * (ya + xa)], grad[2 * (ya + xb)], grad[2 * (yb + xa)],
                        grad[2 * (yb + xb)]);
  *gy = bilinearCombine(b, grad[2 * (ya + xa) + 1], grad[2 * (ya + xb) + 1],
                        grad[2 * (yb + xa) + 1], grad[2 * (yb + xb) + 1]);
}

VIDMAP_HD inline float bilinearSample(const float* img, int w, int h, float x, float y) {
  return bilinearTap(img, w, h, bilinearAt(x, y), 0, 0);
}

// ---------------------------------------------------------------------------------------------
// Window sums in the lane-strided order

inline constexpr int kLanes = 32;

// Adds the 32 partials by the tree m = 16, 8, 4, 2, 1: acc[i] = acc[i] + acc[i + m] for
// i < m. Lane 0 of an xor butterfly (offsets 16, 8, 4, 2, 1) computes the same additions, and
// every lane gets the same bits because float addition is commutative.
VIDMAP_HD inline float laneTreeSum(float* acc) {
  // Written out step by step (constant trip counts) so that the host compiler vectorises it.
  for (int i = 0; i < 16; ++i) acc[i] = acc[i] + acc[i + 16];
  for (int i = 0; i < 8; ++i) acc[i] = acc[i] + acc[i + 8];
  for (int i = 0; i < 4; ++i) acc[i] = acc[i] + acc[i + 4];
  acc[0] = acc[0] + acc[2];
  acc[1] = acc[1] + acc[3];
  return acc[0] + acc[1];
}

// Calls f(k, l) for the window pixels k in [0, n), l = k % kLanes, in increasing k for each
// l (the order of the additions into partial l). The host runs the full blocks of kLanes one
// group of 8 lanes at a time, so the partials of a group stay in vector registers, then the
// tail; every partial sees its pixels in the same order as a warp lane does.
template <class F>
VIDMAP_HD inline void forEachLane(int n, F&& f) {
  const int full = n / kLanes * kLanes;
  for (int g = 0; g < kLanes; g += 8)
    for (int k = 0; k < full; k += kLanes)
      for (int l = g; l < g + 8; ++l) f(k + l, l);
  for (int l = 0; full + l < n; ++l) f(full + l, l);
}

// The smallest eigenvalue of the symmetric 2x2 matrix [gxx gxy; gxy gyy]:
//   ((gxx + gyy) - sqrtf((gxx - gyy)^2 + 4 gxy^2)) * 0.5, clamped at 0.
VIDMAP_HD inline float minEigen2x2(float gxx, float gxy, float gyy) {
  const float d = gxx - gyy;
  const float l = ((gxx + gyy) - sqrtf(d * d + 4.0f * (gxy * gxy))) * 0.5f;
  return l > 0.0f ? l : 0.0f;  // NaN -> 0
}

// ---------------------------------------------------------------------------------------------
// Tracking (docs/architecture.md, KLT: the tracker): inverse compositional Gauss-Newton on a
// translation, coarse to fine, one point per call.

struct TrackParams {
  int levels = 5;
  int halfWindow = 7;
  int maxIterations = 20;
  int photometric = 2;
  float epsilonPx = 0.03f;
  float minEigThreshold = 1e-6f;
};

VIDMAP_HD inline TrackParams trackParams(const Options& o) {
  TrackParams p;
  p.levels = o.levels;
  p.halfWindow = o.halfWindow;
  p.maxIterations = o.maxIterations;
  p.photometric = o.photometric;
  p.epsilonPx = o.epsilonPx;
  p.minEigThreshold = o.minEigThreshold;
  return p;
}

// The template window of one level: samples and gradients in raster order (k = j * win + i)
// and the sums taken from them once per level. All sums are lane-strided (laneTreeSum).
struct TemplateWindow {
  float t[kMaxWindowPixels];   // I at c + (i - hw, j - hw), bilinear
  float gx[kMaxWindowPixels];  // its gradient, bilinear from the Scharr level
  float gy[kMaxWindowPixels];
  float m[kMaxWindowPixels];  // 1 where c + (i - hw, j - hw) lies in the level, else 0
  bool allValid = true;       // every m is 1 (the sums then skip the multiply by m: same bits)
};

struct TemplateSums {
  float n = 0;                      // window pixels
  float meanT = 0;                  // sum(T) / n
  float sumTc = 0;                  // sum(T - meanT)
  float varTn = 0;                  // sum((T - meanT)^2)
  float gxx = 0, gxy = 0, gyy = 0;  // G = sum(g g^T)
  float sgx = 0, sgy = 0;           // sum(g)
  float ax = 0, ay = 0;             // sum(T g) for photometric 0, sum((T - meanT) g) for 1 and 2
  float lambdaPerPixel = 0;         // lambda_min(G) / n
  float invDet = 0;                 // 1 / (gxx gyy - gxy^2)
  bool usable = false;              // lambdaPerPixel >= minEigThreshold and det > 0 (finite)
};

// The end of sampleTemplate, once the window sums are in s (the warp kernel calls it too):
// lambdaPerPixel = lambda_min(G) / n, det = gxx*gyy - gxy*gxy, usable, invDet = 1 / det.
VIDMAP_HD inline void finishTemplateSums(TemplateSums* s, float minEigThreshold) {
  s->lambdaPerPixel = minEigen2x2(s->gxx, s->gxy, s->gyy) / s->n;
  const float det = s->gxx * s->gyy - s->gxy * s->gxy;
  s->usable = s->lambdaPerPixel >= minEigThreshold && det > 0.0f && det <= 3.0e38f;
  s->invDet = s->usable ? 1.0f / det : 0.0f;
}

// ---------------------------------------------------------------------------------------------
// The per-pixel terms of the window sums, written once for every backend. V is one lane's
// partial: a float (the generic loop, a warp lane) or four lanes of a host vector. A backend
// chooses only which pixels go into which partial (the lane-strided order above) and how the
// 32 partials are added (laneTreeSum, or a warp's shuffles: the same tree). The terms of one
// partial are independent, so their order inside a pixel does not matter.

// Pass 2 of a template window: tc = (T - meanT) m, a = T (photometric 0) or tc. The nine
// partials acc[q * stride], q in TemplateTerm order.
enum TemplateTerm {
  kTermTc,
  kTermTt,
  kTermGxx,
  kTermGxy,
  kTermGyy,
  kTermGx,
  kTermGy,
  kTermAx,
  kTermAy,
  kTemplateTerms
};

template <class V>
VIDMAP_HD inline void addTemplateTerms(V t, V tc, V gx, V gy, bool plainSsd, V* acc, int stride) {
  const V a = plainSsd ? t : tc;
  acc[kTermTc * stride] += tc;
  acc[kTermTt * stride] += tc * tc;
  acc[kTermGxx * stride] += gx * gx;
  acc[kTermGxy * stride] += gx * gy;
  acc[kTermGyy * stride] += gy * gy;
  acc[kTermGx * stride] += gx;
  acc[kTermGy * stride] += gy;
  acc[kTermAx * stride] += a * gx;
  acc[kTermAy * stride] += a * gy;
}

// One target pixel j (masked: j m) against the template gradient: sum(J), sum(J J),
// sum(J gx), sum(J gy).
template <class V>
VIDMAP_HD inline void addTargetTerms(V j, V gx, V gy, V& sj, V& sjj, V& sjgx, V& sjgy) {
  sj += j;
  sjj += j * j;
  sjgx += j * gx;
  sjgy += j * gy;
}

// One pixel of the final NCC window: sum(J), sum(J J), sum(tc J) with tc = T - meanT.
template <class V>
VIDMAP_HD inline void addNccTerms(V j, V tc, V& sj, V& sjj, V& stj) {
  sj += j;
  sjj += j * j;
  stj += tc * j;
}

// The sums of pass 2 from the nine reduced terms.
VIDMAP_HD inline void setTemplateTerms(const float* r, TemplateSums* s) {
  s->sumTc = r[kTermTc];
  s->varTn = r[kTermTt];
  s->gxx = r[kTermGxx];
  s->gxy = r[kTermGxy];
  s->gyy = r[kTermGyy];
  s->sgx = r[kTermGx];
  s->sgy = r[kTermGy];
  s->ax = r[kTermAx];
  s->ay = r[kTermAy];
}

// The sums of a sampled template window (s->n set): pass 1 sums T, meanT = sum / n; pass 2,
// with tc = (T - meanT) m, adds the terms of addTemplateTerms. Generic loop (the device's,
// and the definition):
VIDMAP_HD inline void templateWindowSumsGeneric(const TemplateWindow& win, int n, int photometric,
                                                TemplateSums* s) {
  float a[kLanes] = {};
  forEachLane(n, [&](int k, int l) { a[l] += win.t[k]; });
  s->meanT = laneTreeSum(a) / s->n;
  float acc[kTemplateTerms][kLanes] = {};
  const float mt = s->meanT;
  forEachLane(n, [&](int k, int l) {
    const float t = win.t[k];
    const float tc = win.allValid ? t - mt : (t - mt) * win.m[k];
    addTemplateTerms(t, tc, win.gx[k], win.gy[k], photometric == 0, &acc[0][l], kLanes);
  });
  float r[kTemplateTerms];
  for (int q = 0; q < kTemplateTerms; ++q) r[q] = laneTreeSum(acc[q]);
  setTemplateTerms(r, s);
}

#if defined(VIDMAP_KLT_HOST_VECTORS)
inline void templateWindowSumsHost(const TemplateWindow& win, int n, int photometric,
                                   TemplateSums* s) {
  using hostvec::load;
  using hostvec::v4;
  const int full = n / kLanes * kLanes;
  float a[kLanes];
  for (int g = 0; g < kLanes; g += 4) {
    v4 va = {0, 0, 0, 0};
    for (int k = g; k < full; k += kLanes) va += load(win.t + k);
    hostvec::store(a + g, va);
  }
  for (int l = 0; full + l < n; ++l) a[l] += win.t[full + l];
  s->meanT = laneTreeSum(a) / s->n;
  const float mt = s->meanT;
  float acc[kTemplateTerms][kLanes];
  const v4 vmt = {mt, mt, mt, mt};
  for (int g = 0; g < kLanes; g += 4) {
    v4 v[kTemplateTerms];
    for (auto& x : v) x = v4{0, 0, 0, 0};
    for (int k = g; k < full; k += kLanes) {
      const v4 t = load(win.t + k);
      const v4 tc = win.allValid ? t - vmt : (t - vmt) * load(win.m + k);
      addTemplateTerms(t, tc, load(win.gx + k), load(win.gy + k), photometric == 0, v, 1);
    }
    for (int q = 0; q < kTemplateTerms; ++q) hostvec::store(acc[q] + g, v[q]);
  }
  for (int l = 0; full + l < n; ++l) {
    const int k = full + l;
    const float t = win.t[k];
    const float tc = win.allValid ? t - mt : (t - mt) * win.m[k];
    addTemplateTerms(t, tc, win.gx[k], win.gy[k], photometric == 0, &acc[0][l], kLanes);
  }
  float r[kTemplateTerms];
  for (int q = 0; q < kTemplateTerms; ++q) r[q] = laneTreeSum(acc[q]);
  setTemplateTerms(r, s);
}
#endif

VIDMAP_HD inline void templateWindowSums(const TemplateWindow& win, int n, int photometric,
                                         TemplateSums* s) {
#if defined(VIDMAP_KLT_HOST_VECTORS)
  templateWindowSumsHost(win, n, photometric, s);
#else
  templateWindowSumsGeneric(win, n, photometric, s);
#endif
}

// Samples the template window of level lv around (cx, cy) and takes its sums.
// Order: pass 1 sums T (-> meanT = sum / n); pass 2, per pixel with tc = T - meanT, sums
// tc, tc*tc, gx*gx, gx*gy, gy*gy, gx, gy, and a*gx, a*gy with a = T (mode 0) or tc (1, 2).
// det = gxx*gyy - gxy*gxy; invDet = 1 / det.
VIDMAP_HD inline TemplateSums sampleTemplate(const LevelView& lv, float cx, float cy, int hw,
                                             int photometric, float minEigThreshold,
                                             TemplateWindow* win) {
  const int size = 2 * hw + 1, n = size * size;
  const Bilinear b = bilinearAt(cx, cy);
  int valid = 0;
  if (b.x0 - hw >= 0 && b.y0 - hw >= 0 && b.x0 + hw + 1 <= lv.width - 1 &&
      b.y0 + hw + 1 <= lv.height - 1) {
    // Fast path: every tap inside, so no clamp and every mask is 1 (same values as below).
    for (int j = 0; j < size; ++j) {
      const std::int64_t row = static_cast<std::int64_t>(b.y0 + j - hw) * lv.width + b.x0 - hw;
      const float* ra = lv.gray + row;
      const float* rb = ra + lv.width;
      const float* ga = lv.grad + 2 * row;
      const float* gb = ga + 2 * lv.width;
      const int k0 = j * size;
      // The gradient row is interleaved (gx, gy): element e of the output pair row reads
      // taps e and e + 2, so gx of pixel i is e = 2i and gy is e = 2i + 1.
      float g2[2 * (2 * kMaxHalfWindow + 1)];
      for (int e = 0; e < 2 * size; ++e)
        g2[e] = bilinearCombine(b, ga[e], ga[e + 2], gb[e], gb[e + 2]);
      for (int i = 0; i < size; ++i) {
        win->t[k0 + i] = bilinearCombine(b, ra[i], ra[i + 1], rb[i], rb[i + 1]);
        win->gx[k0 + i] = g2[2 * i];
        win->gy[k0 + i] = g2[2 * i + 1];
        win->m[k0 + i] = 1.0f;
      }
    }
    valid = n;
  } else {
    // Window pixels outside the level are masked. Validity is separable: a column is valid
    // when x = cx + (i - hw) is in [0, w - 1], a row when y = cy + (j - hw) is in [0, h - 1];
    // the taps of a valid pixel are clamped as in bilinearTap.
    const float hx = static_cast<float>(lv.width - 1), hy = static_cast<float>(lv.height - 1);
    int xa[2 * kMaxHalfWindow + 1], xb[2 * kMaxHalfWindow + 1];
    bool colValid[2 * kMaxHalfWindow + 1];
    int validCols = 0, iLo = size, iHi = -1;
    for (int i = 0; i < size; ++i) {
      const float x = cx + static_cast<float>(i - hw);
      colValid[i] = x >= 0.0f && x <= hx;
      if (colValid[i]) {
        ++validCols;
        iLo = i < iLo ? i : iLo;
        iHi = i;
      }
      xa[i] = clampInt(b.x0 + i - hw, 0, lv.width - 1);
      xb[i] = clampInt(b.x0 + i - hw + 1, 0, lv.width - 1);
    }
    // The valid columns are a range; inside it the taps are unclamped (xa = x0 + i - hw,
    // xb = xa + 1) except perhaps at the last column, which the loops below then take apart.
    // Both loops compute what the per-pixel form computes.
    const bool contiguous = validCols > 0 && b.x0 + iLo - hw >= 0 && validCols == iHi - iLo + 1;
    const int iEnd = contiguous && xb[iHi] == xa[iHi] ? iHi - 1 : iHi;  // last unclamped column
    for (int j = 0; j < size; ++j) {
      const int k0 = j * size;
      for (int i = 0; i < size; ++i)
        win->t[k0 + i] = win->gx[k0 + i] = win->gy[k0 + i] = win->m[k0 + i] = 0.0f;
      const float y = cy + static_cast<float>(j - hw);
      if (!(y >= 0.0f && y <= hy)) continue;
      const std::int64_t ya =
          static_cast<std::int64_t>(clampInt(b.y0 + j - hw, 0, lv.height - 1)) * lv.width;
      const std::int64_t yb =
          static_cast<std::int64_t>(clampInt(b.y0 + j - hw + 1, 0, lv.height - 1)) * lv.width;
      const float *ra = lv.gray + ya, *rb = lv.gray + yb;
      const float *ga = lv.grad + 2 * ya, *gb = lv.grad + 2 * yb;
      int from = 0, to = size - 1;  // columns left to the per-pixel loop
      if (contiguous) {
        const int x = xa[iLo], cnt = iEnd - iLo + 1;
        float g2[2 * (2 * kMaxHalfWindow + 1)];
        for (int e = 0; e < 2 * cnt; ++e)
          g2[e] = bilinearCombine(b, ga[2 * x + e], ga[2 * x + e + 2], gb[2 * x + e],
                                  gb[2 * x + e + 2]);
        for (int o = 0; o < cnt; ++o) {
          win->t[k0 + iLo + o] =
              bilinearCombine(b, ra[x + o], ra[x + o + 1], rb[x + o], rb[x + o + 1]);
          win->gx[k0 + iLo + o] = g2[2 * o];
          win->gy[k0 + iLo + o] = g2[2 * o + 1];
          win->m[k0 + iLo + o] = 1.0f;
        }
        from = iEnd + 1;
        to = iHi;
      }
      for (int i = from; i <= to; ++i) {
        if (!colValid[i]) continue;
        const int p = xa[i], q = xb[i];
        win->t[k0 + i] = bilinearCombine(b, ra[p], ra[q], rb[p], rb[q]);
        win->gx[k0 + i] = bilinearCombine(b, ga[2 * p], ga[2 * q], gb[2 * p], gb[2 * q]);
        win->gy[k0 + i] =
            bilinearCombine(b, ga[2 * p + 1], ga[2 * q + 1], gb[2 * p + 1], gb[2 * q + 1]);
        win->m[k0 + i] = 1.0f;
      }
      valid += validCols;
    }
  }
  win->allValid = valid == n;
  TemplateSums s;
  s.n = static_cast<float>(valid > 0 ? valid : 1);
  templateWindowSums(*win, n, photometric, &s);
  finishTemplateSums(&s, minEigThreshold);
  return s;
}

// Samples the target window of a level at the point (px, py) into jw (raster order). The
// fast path (all taps inside) reads the same values as the clamped path.
VIDMAP_HD inline void sampleTargetWindow(const LevelView& lv, float px, float py, int hw,
                                         float* jw) {
  const int size = 2 * hw + 1;
  const Bilinear b = bilinearAt(px, py);
  if (b.x0 - hw >= 0 && b.y0 - hw >= 0 && b.x0 + hw + 1 <= lv.width - 1 &&
      b.y0 + hw + 1 <= lv.height - 1) {
    for (int j = 0; j < size; ++j) {
      const float* ra = lv.gray + static_cast<std::int64_t>(b.y0 + j - hw) * lv.width + b.x0 - hw;
      const float* rb = ra + lv.width;
      float* out = jw + j * size;
      for (int i = 0; i < size; ++i)
        out[i] = ((b.w00 * ra[i] + b.w10 * ra[i + 1]) + b.w01 * rb[i]) + b.w11 * rb[i + 1];
    }
    return;
  }
  // Clamped taps (as bilinearTap), with the clamped columns computed once per window.
  int xa[2 * kMaxHalfWindow + 1], xb[2 * kMaxHalfWindow + 1];
  for (int i = 0; i < size; ++i) {
    xa[i] = clampInt(b.x0 + i - hw, 0, lv.width - 1);
    xb[i] = clampInt(b.x0 + i - hw + 1, 0, lv.width - 1);
  }
  for (int j = 0; j < size; ++j) {
    const float* ra =
        lv.gray + static_cast<std::int64_t>(clampInt(b.y0 + j - hw, 0, lv.height - 1)) * lv.width;
    const float* rb =
        lv.gray +
        static_cast<std::int64_t>(clampInt(b.y0 + j - hw + 1, 0, lv.height - 1)) * lv.width;
    for (int i = 0; i < size; ++i)
      jw[j * size + i] = bilinearCombine(b, ra[xa[i]], ra[xb[i]], rb[xa[i]], rb[xb[i]]);
  }
}

// The sums of one target window: sum(J), sum(J*J), sum(J*gx), sum(J*gy), lane-strided.
struct TargetSums {
  float sj = 0, sjj = 0, sjgx = 0, sjgy = 0;
};

// The generic loop (the device's, and the definition).
VIDMAP_HD inline TargetSums targetSumsGeneric(const float* jw, const TemplateWindow& win, int n) {
  float a[kLanes] = {}, b[kLanes] = {}, c[kLanes] = {}, d[kLanes] = {};
  forEachLane(n, [&](int k, int l) {
    const float j = win.allValid ? jw[k] : jw[k] * win.m[k];
    addTargetTerms(j, win.gx[k], win.gy[k], a[l], b[l], c[l], d[l]);
  });
  TargetSums s;
  s.sj = laneTreeSum(a);
  s.sjj = laneTreeSum(b);
  s.sjgx = laneTreeSum(c);
  s.sjgy = laneTreeSum(d);
  return s;
}

#if defined(VIDMAP_KLT_HOST_VECTORS)
// The same sums with 4 lanes a vector: for each group of 4 partials, the full blocks of 32
// pixels in order, then the tail pixels one by one.
inline TargetSums targetSumsHost(const float* jw, const TemplateWindow& win, int n) {
  using hostvec::load;
  float a[kLanes], b[kLanes], c[kLanes], d[kLanes];
  const int full = n / kLanes * kLanes;
  for (int g = 0; g < kLanes; g += 4) {
    hostvec::v4 va = {0, 0, 0, 0}, vb = va, vc = va, vd = va;
    if (win.allValid) {
      for (int k = g; k < full; k += kLanes) {
        addTargetTerms(load(jw + k), load(win.gx + k), load(win.gy + k), va, vb, vc, vd);
      }
    } else {
      for (int k = g; k < full; k += kLanes) {
        addTargetTerms(load(jw + k) * load(win.m + k), load(win.gx + k), load(win.gy + k), va, vb,
                       vc, vd);
      }
    }
    hostvec::store(a + g, va);
    hostvec::store(b + g, vb);
    hostvec::store(c + g, vc);
    hostvec::store(d + g, vd);
  }
  for (int l = 0; full + l < n; ++l) {
    const int k = full + l;
    const float j = win.allValid ? jw[k] : jw[k] * win.m[k];
    addTargetTerms(j, win.gx[k], win.gy[k], a[l], b[l], c[l], d[l]);
  }
  TargetSums s;
  s.sj = laneTreeSum(a);
  s.sjj = laneTreeSum(b);
  s.sjgx = laneTreeSum(c);
  s.sjgy = laneTreeSum(d);
  return s;
}
#endif

VIDMAP_HD inline TargetSums targetSums(const float* jw, const TemplateWindow& win, int n) {
#if defined(VIDMAP_KLT_HOST_VECTORS)
  return targetSumsHost(jw, win, n);
#else
  return targetSumsGeneric(jw, win, n);
#endif
}

// One Gauss-Newton step from the sums: b = sum(r g) for the residual of the mode,
//   mode 0: r = T - J                         b = a - sJg
//   mode 1: r = (T - mT) - (J - mJ)           b = a - (sJg - mJ sg)
//   mode 2: r = (T - mT) - s (J - mJ)         b = a - s (sJg - mJ sg)
// with mJ = sJ / n, varJn = max(sJJ - sJ mJ, 0), s = sqrtf(varTn / varJn) (1 when varJn = 0),
// and the step G^-1 b: sx = (gyy bx - gxy by) invDet, sy = (gxx by - gxy bx) invDet.
VIDMAP_HD inline void gaussNewtonStep(const TemplateSums& t, const TargetSums& j, int photometric,
                                      float* sx, float* sy) {
  float bx, by;
  if (photometric == 0) {
    bx = t.ax - j.sjgx;
    by = t.ay - j.sjgy;
  } else {
    const float mj = j.sj / t.n;
    const float cx = j.sjgx - mj * t.sgx;
    const float cy = j.sjgy - mj * t.sgy;
    if (photometric == 1) {
      bx = t.ax - cx;
      by = t.ay - cy;
    } else {
      const float v = j.sjj - j.sj * mj;
      const float varjn = v > 0.0f ? v : 0.0f;
      const float s = varjn > 0.0f ? sqrtf(t.varTn / varjn) : 1.0f;
      bx = t.ax - s * cx;
      by = t.ay - s * cy;
    }
  }
  *sx = (t.gyy * bx - t.gxy * by) * t.invDet;
  *sy = (t.gxx * by - t.gxy * bx) * t.invDet;
}

// The end of windowNcc from the sums sum(J), sum(J J) and sum(tc J) (the warp kernel calls it).
VIDMAP_HD inline float nccFromSums(float sj, float sjj, float stj, const TemplateSums& t) {
  const float mj = sj / t.n;
  const float v = sjj - sj * mj;
  const float varjn = v > 0.0f ? v : 0.0f;
  const float num = stj - mj * t.sumTc;
  const float den = sqrtf(t.varTn * varjn);
  return den > 0.0f ? num / den : 0.0f;
}

// The zero-mean NCC of the template and a target window:
//   num = sum(tc J) - mJ sumTc, den = sqrtf(varTn varJn), ncc = num / den (0 when den = 0),
// with sum(tc J), sum(J), sum(J J) lane-strided and mJ, varJn as in gaussNewtonStep.
VIDMAP_HD inline float windowNcc(const float* jw, const TemplateWindow& win, const TemplateSums& t,
                                 int n) {
  float a[kLanes] = {}, b[kLanes] = {}, c[kLanes] = {};
  forEachLane(n, [&](int k, int l) { addNccTerms(jw[k], win.t[k] - t.meanT, a[l], b[l], c[l]); });
  return nccFromSums(laneTreeSum(a), laneTreeSum(b), laneTreeSum(c), t);
}

// ---------------------------------------------------------------------------------------------
// The tracking loop, once for every backend. A window policy W does the window work of one
// track and returns the sums; the loop does the rest (levels, iterations, loss, end reason):
//
//   TemplateSums W::sampleTemplate(int level, float cx, float cy)
//       the template window of level `level` of I around (cx, cy) and its sums (sampleTemplate
//       above; the policy keeps the window for the calls that follow, until the next level);
//   TargetSums W::targetSums(int level, float px, float py)
//       the target window of level `level` of J at (px, py), masked as the template, summed
//       against the template's gradient (sampleTargetWindow, then targetSums);
//   float W::ncc(float x, float y, const TemplateSums& t0)
//       the zero-mean NCC of the level-0 window of J at (x, y) against the kept level-0
//       template (sampleTargetWindow, then windowNcc).
//
// SerialWindow (below) is the CPU's (lane-strided sums over a scratch window, host vectors
// where they exist); the CUDA warp kernel's WarpWindow (cuda_kernels.cuh) spreads the pixels
// over the lanes of a warp and adds the partials with shuffles. Both follow the summation
// order of this file, so the loop computes the same bits with either.
//
// The loop (from the seed (ux, uy) in I, of layout LI, into J, of layout LJ): for level
// L = levels - 1 down to 0: c = u * 2^-L; the template window and its sums are taken once. If
// the level is not usable (lambda_min / n below minEigThreshold, or det <= 0) the level is
// skipped (at level 0 the track ends with reason 2). Otherwise for it = 0 .. maxIterations - 1:
// p = c + d; if p is not in [0, w - 1] x [0, h - 1] of the level (or NaN) the level's result
// is discarded (d back to its value at the level's start) or, at level 0, the track is lost
// (reason 1) and nothing is updated after; else the target window at p gives the step
// (gaussNewtonStep), d = d + step, and the level converges when sx*sx + sy*sy < eps*eps
// (eps = epsilonPx, squared in float). After a level, d = 2 d. The iterations used at level 0
// are those run up to and including the converging one (maxIterations when none converged).
//
// The result: x = ux + d.x, y = uy + d.y; the reason 1 (lost, or the final point within
// halfWindow of the level-0 border, or the seed within it: then d = 0 and nothing is sampled),
// else 2 (level 0 not usable), else 3 (level 0 not converged), else 0; the measure is the NCC
// of the final level-0 window unless the reason is 1 (then 0).
// The width and height of a level, read with constant indices: a CUDA kernel's layout then
// stays in its parameter space (a dynamic index would copy it to local memory).
VIDMAP_HD inline void levelSize(const Layout& L, int level, int* w, int* h) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int l = 0; l < kMaxLevels; ++l)
    if (l == level) {
      *w = L.width[l];
      *h = L.height[l];
    }
}

#if defined(__CUDACC__)
#pragma nv_exec_check_disable  // W's methods are __device__ only for the CUDA policy
#endif
template <class W>
VIDMAP_HD inline TrackRecord trackLoop(W& w, const Layout& LI, const Layout& LJ, float ux, float uy,
                                       const TrackParams& p) {
  const int hw = p.halfWindow;
  const float eps2 = p.epsilonPx * p.epsilonPx;
  if (!insideMargin(ux, uy, LI.width[0], LI.height[0], hw))
    return {ux, uy, 0.0f, makeStatus(static_cast<int>(EndReason::kOutOfFrame), 0)};

  float dx = 0.0f, dy = 0.0f;
  bool lost = false, usable0 = false, converged0 = false;
  int iterations0 = 0;
  TemplateSums t0;
  for (int level = p.levels - 1; level >= 0; --level) {
    if (lost) {  // frozen: nothing is sampled; d is still doubled as below
      if (level > 0) {
        dx = dx * 2.0f;
        dy = dy * 2.0f;
      }
      continue;
    }
    const float scale = 1.0f / static_cast<float>(1 << level);  // exact
    const float cx = ux * scale, cy = uy * scale;
    const TemplateSums t = w.sampleTemplate(level, cx, cy);
    if (level == 0) {
      t0 = t;
      usable0 = t.usable;
    }
    if (t.usable) {
      int wj = 0, hj = 0;
      levelSize(LJ, level, &wj, &hj);
      const float hix = static_cast<float>(wj - 1), hiy = static_cast<float>(hj - 1);
      const float startX = dx, startY = dy;
      for (int it = 0; it < p.maxIterations; ++it) {
        const float px = cx + dx, py = cy + dy;
        if (!(px >= 0.0f && py >= 0.0f && px <= hix && py <= hiy)) {
          if (level > 0) {  // the level's result is discarded
            dx = startX;
            dy = startY;
          } else {
            lost = true;
          }
          break;
        }
        const TargetSums s = w.targetSums(level, px, py);
        float sx, sy;
        gaussNewtonStep(t, s, p.photometric, &sx, &sy);
        dx = dx + sx;
        dy = dy + sy;
        if (level == 0) iterations0 = it + 1;
        if (sx * sx + sy * sy < eps2) {
          if (level == 0) converged0 = true;
          break;
        }
      }
    }
    if (level > 0) {
      dx = dx * 2.0f;
      dy = dy * 2.0f;
    }
  }
  const float x = ux + dx, y = uy + dy;
  int reason = 0;
  if (lost || !insideMargin(x, y, LJ.width[0], LJ.height[0], hw))
    reason = static_cast<int>(EndReason::kOutOfFrame);
  else if (!usable0)
    reason = static_cast<int>(EndReason::kLowStructure);
  else if (!converged0)
    reason = static_cast<int>(EndReason::kNoConvergence);
  // Level 0 was sampled when the track is not out of frame: the policy holds its template.
  const float ncc = reason != static_cast<int>(EndReason::kOutOfFrame) ? w.ncc(x, y, t0) : 0.0f;
  return {x, y, ncc, makeStatus(reason, iterations0)};
}

// Scratch of one trackPoint call (about 15 KiB; the CPU keeps it on the stack).
struct TrackScratch {
  TemplateWindow win;
  float jw[kMaxWindowPixels];
};

// The window policy of the CPU (and of the CUDA lane kernel): the windows in a scratch, the
// sums in the lane-strided order by one thread.
struct SerialWindow {
  const PyramidView& I;
  const PyramidView& J;
  const TrackParams& p;
  TrackScratch* scratch;

  VIDMAP_HD int pixels() const { return (2 * p.halfWindow + 1) * (2 * p.halfWindow + 1); }
  VIDMAP_HD TemplateSums sampleTemplate(int level, float cx, float cy) {
    return klt::sampleTemplate(I.level(level), cx, cy, p.halfWindow, p.photometric,
                               p.minEigThreshold, &scratch->win);
  }
  VIDMAP_HD TargetSums targetSums(int level, float px, float py) {
    sampleTargetWindow(J.level(level), px, py, p.halfWindow, scratch->jw);
    return klt::targetSums(scratch->jw, scratch->win, pixels());
  }
  VIDMAP_HD float ncc(float x, float y, const TemplateSums& t0) {
    sampleTargetWindow(J.level(0), x, y, p.halfWindow, scratch->jw);
    return windowNcc(scratch->jw, scratch->win, t0, pixels());
  }
};

// Tracks the point (ux, uy) of the template pyramid I into the target pyramid J (trackLoop
// with the serial window).
VIDMAP_HD inline TrackRecord trackPoint(const PyramidView& I, const PyramidView& J, float ux,
                                        float uy, const TrackParams& p, TrackScratch* scratch) {
  SerialWindow w{I, J, p, scratch};
  return trackLoop(w, I.layout, J.layout, ux, uy, p);
}

// The forward pass from a seed (positions in the previous frame) into the current frame.
VIDMAP_HD inline TrackRecord trackForward(const PyramidView& prev, const PyramidView& cur,
                                          const TrackRecord& seed, const TrackParams& p,
                                          TrackScratch* scratch) {
  return trackPoint(prev, cur, seed.x, seed.y, p, scratch);
}

// The backward pass from a forward result back into the previous frame. A forward record
// that is not alive is copied (the check ends it with the forward reason).
VIDMAP_HD inline TrackRecord trackBackward(const PyramidView& prev, const PyramidView& cur,
                                           const TrackRecord& fwd, const TrackParams& p,
                                           TrackScratch* scratch) {
  if (!statusAlive(fwd.status)) return fwd;
  return trackPoint(cur, prev, fwd.x, fwd.y, p, scratch);
}

// The check (docs/architecture.md, KLT: checks and ends): x, y of the forward record, measure =
// forward-backward error sqrtf(dx*dx + dy*dy) with d = backward - seed, and the status: the forward
// reason if the forward track ended; else 4 if the error is not <= fbThresholdPx (the backward
// status aside); else 5 if the forward NCC is not >= nccThreshold; else alive. Bits 16-23 keep the
// forward pass's iterations at level 0.
VIDMAP_HD inline TrackRecord checkTrack(const TrackRecord& seed, const TrackRecord& fwd,
                                        const TrackRecord& bwd, float fbThresholdPx,
                                        float nccThreshold) {
  const float ex = bwd.x - seed.x, ey = bwd.y - seed.y;
  const float fb = sqrtf(ex * ex + ey * ey);
  int reason = statusReason(fwd.status);
  if (reason == 0) {
    if (!(fb <= fbThresholdPx))
      reason = static_cast<int>(EndReason::kForwardBackward);
    else if (!(fwd.measure >= nccThreshold))
      reason = static_cast<int>(EndReason::kNcc);
  }
  return {fwd.x, fwd.y, fb, makeStatus(reason, statusIterations(fwd.status))};
}

// The end rule of a push, for every tracker (the CPU Tracker's and CudaBatchTracker's table
// update, the device's compaction of the alive tracks): the reason of the checked record, else
// 7 (age) when the track's age after this push exceeds maxAgeFrames, else 0 (it survives).
VIDMAP_HD inline int pushEndReason(float checkedStatus, int ageAfterPush, int maxAgeFrames) {
  const int reason = statusReason(checkedStatus);
  if (reason == 0 && ageAfterPush > maxAgeFrames) return static_cast<int>(EndReason::kAge);
  return reason;
}

// ---------------------------------------------------------------------------------------------
// Selection (docs/architecture.md, KLT: the tracker)

// lambda_min of the blockSize x blockSize block of level-0 gradients around (x, y):
// gxx, gxy, gyy summed in raster order over the block (rows dy = -r..r, then dx = -r..r),
// then minEigen2x2. Zero within halfWindow of the border (a track there ends out of frame).
VIDMAP_HD inline float minEigenPixel(const float* grad, int w, int h, int x, int y, int blockSize,
                                     int halfWindow) {
  if (x < halfWindow || y < halfWindow || x > w - 1 - halfWindow || y > h - 1 - halfWindow)
    return 0.0f;
  const int r = blockSize / 2;
  float gxx = 0.0f, gxy = 0.0f, gyy = 0.0f;
  for (int dy = -r; dy <= r; ++dy) {
    const int yy = clampInt(y + dy, 0, h - 1);
    for (int dx = -r; dx <= r; ++dx) {
      const std::int64_t q = 2 * (static_cast<std::int64_t>(yy) * w + clampInt(x + dx, 0, w - 1));
      const float gx = grad[q], gy = grad[q + 1];
      gxx += gx * gx;
      gxy += gx * gy;
      gyy += gy * gy;
    }
  }
  return minEigen2x2(gxx, gxy, gyy);
}

// The cells of selection: squares of cellPx = ceil(minDistancePx) pixels, so that a point
// closer than minDistancePx to a point of a cell lies in that cell or one of its 8 neighbours.
struct CellGrid {
  int cellPx = 8;
  int cellsX = 0;
  int cellsY = 0;
  VIDMAP_HD int count() const { return cellsX * cellsY; }
};

VIDMAP_HD inline CellGrid makeCellGrid(int w, int h, float minDistancePx) {
  CellGrid g;
  const int c = static_cast<int>(ceilf(minDistancePx));
  g.cellPx = c < 1 ? 1 : c;
  g.cellsX = (w + g.cellPx - 1) / g.cellPx;
  g.cellsY = (h + g.cellPx - 1) / g.cellPx;
  return g;
}

// The cell of a point (clamped to the grid): floorf(x / cellPx), floorf(y / cellPx).
VIDMAP_HD inline int cellOf(const CellGrid& g, float x, float y) {
  const float c = static_cast<float>(g.cellPx);
  const float fx = fminf(fmaxf(floorf(x / c), 0.0f), static_cast<float>(g.cellsX - 1));
  const float fy = fminf(fmaxf(floorf(y / c), 0.0f), static_cast<float>(g.cellsY - 1));
  return static_cast<int>(fy) * g.cellsX + static_cast<int>(fx);
}

// A candidate of one cell: the pixel position and its lambda_min; score 0 means no pick.
struct Pick {
  float x = 0.0f;
  float y = 0.0f;
  float score = 0.0f;
};

// The best pixel of a cell (greatest lambda_min; the first in raster order on a tie) if the
// cell holds no alive track and its lambda_min is > 0 and >= threshold (qualityLevel * max).
VIDMAP_HD inline Pick selectCell(const float* eig, int w, int h, const CellGrid& g, int cell,
                                 float threshold, bool occupied) {
  Pick p;
  if (occupied) return p;
  const int cx = cell % g.cellsX, cy = cell / g.cellsX;
  const int x0 = cx * g.cellPx, y0 = cy * g.cellPx;
  const int x1 = x0 + g.cellPx < w ? x0 + g.cellPx : w;
  const int y1 = y0 + g.cellPx < h ? y0 + g.cellPx : h;
  float best = 0.0f;
  int bx = -1, by = -1;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const float v = eig[static_cast<std::int64_t>(y) * w + x];
      if (v > best) {
        best = v;
        bx = x;
        by = y;
      }
    }
  if (bx >= 0 && best >= threshold) {
    p.x = static_cast<float>(bx);
    p.y = static_cast<float>(by);
    p.score = best;
  }
  return p;
}

// The order of picks: a is stronger than b when its score is greater, or equal with a lower
// cell index.
VIDMAP_HD inline bool pickStronger(float scoreA, int cellA, float scoreB, int cellB) {
  return scoreA > scoreB || (scoreA == scoreB && cellA < cellB);
}

VIDMAP_HD inline bool closerThan(float ax, float ay, float bx, float by, float minDist2) {
  const float dx = ax - bx, dy = ay - by;
  return dx * dx + dy * dy < minDist2;
}

// The suppression of 3.4 for the pick of `cell` (which must have score > 0): it is kept
// unless a stronger pick of one of the 8 neighbouring cells, or an alive track of the cell or
// a neighbouring cell, is closer than minDistancePx (squared distance < minDistancePx^2 in
// float). The picks are those of selectCell before any suppression. Alive tracks are given
// bucketed by cell: the tracks of cell c are trackXY[2 * i], trackXY[2 * i + 1] for
// i in [trackStart[c], trackStart[c + 1]). The order inside a bucket does not matter.
VIDMAP_HD inline bool keepPick(const Pick* picks, const CellGrid& g, int cell, float minDistancePx,
                               const int* trackStart, const float* trackXY) {
  const Pick p = picks[cell];
  const float minDist2 = minDistancePx * minDistancePx;
  const int cx = cell % g.cellsX, cy = cell / g.cellsX;
  for (int ny = cy - 1; ny <= cy + 1; ++ny) {
    if (ny < 0 || ny >= g.cellsY) continue;
    for (int nx = cx - 1; nx <= cx + 1; ++nx) {
      if (nx < 0 || nx >= g.cellsX) continue;
      const int nc = ny * g.cellsX + nx;
      if (nc != cell) {
        const Pick q = picks[nc];
        if (q.score > 0.0f && pickStronger(q.score, nc, p.score, cell) &&
            closerThan(p.x, p.y, q.x, q.y, minDist2))
          return false;
      }
      for (int i = trackStart[nc]; i < trackStart[nc + 1]; ++i)
        if (closerThan(p.x, p.y, trackXY[2 * i], trackXY[2 * i + 1], minDist2)) return false;
    }
  }
  return true;
}

}  // namespace vidmap::klt
