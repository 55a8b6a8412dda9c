// The per-pixel arithmetic of PatchMatch multi-view stereo, shared by the CPU twin
// (patch_match_cpu.cc, the oracle) and the CUDA kernels (patch_match_cuda.cu).
//
// Each pixel of the reference view holds a plane hypothesis: a depth (camera z) and a unit
// normal in the reference camera frame that faces the camera. Its cost is the mean of the K
// best per-source costs, each 1 - NCC of a bilateral-weighted 6x6 window (radius 5, step 2)
// warped into the source by the plane's homography (Schoenberger et al., "Pixelwise View
// Selection for Unstructured Multi-View Stereo", ECCV 2016, for the weights and the
// geometric term; Galliani et al., "Massively Parallel Multiview Stereopsis by Surface
// Normal Diffusion", ICCV 2015, for the red-black propagation and the top-K aggregation).
// In the geometric pass each source cost adds regularizer * min(forward-backward
// reprojection error through the source's depth map, maxCost), as COLMAP's
// geom_consistency.
//
// One update visits pixels of one colour of the checkerboard ((x + y) & 1): it reads only
// the other colour's states, so all pixels of a colour update in place, in any order,
// on any number of threads, with the same result. Random numbers are a hash of (seed,
// pixel, iteration, draw), not a stateful generator, so CPU and GPU draw the same values.
// No transcendental functions: the bilateral weights come from tables built on the host,
// so the CUDA build with -fmad=false equals the CPU bit for bit. The hot loop's fused
// multiply-adds are written out (pmFma), so that build keeps them too: the device runs the
// contracted instructions and the CPU twin rounds as it does.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "vidmap/core/hd.h"

namespace vidmap::mvs {

constexpr int kMaxSources = 12;
constexpr int kMaxTopK = 4;
constexpr int kWindowRadius = 5;
constexpr int kWindowStep = 2;
constexpr int kWindowSide = 6;  // offsets -5, -3, -1, 1, 3, 5
constexpr int kWindowSamples = kWindowSide * kWindowSide;
constexpr float kMaxCost = 2.0f;  // 1 - NCC of anti-correlated or unusable windows
constexpr int kNumNeighbours = 8;

// Pinhole intrinsics with pixel centres at integer coordinates (OpenCV's convention).
struct PmCamera {
  float fx = 1, fy = 1, cx = 0, cy = 0;
};

struct PmGray {
  const std::uint8_t* data = nullptr;
  int width = 0, height = 0, stride = 0;
  // Bilinear weights as the texture unit computes them: 8 fractional bits (pmSample).
  int hwFilter = 0;
  // CUDA only: a texture object over `data` with linear filtering and normalised-float reads
  // (hwFilter is then 1); 0 reads `data` directly.
  unsigned long long tex = 0;
};

struct PmDepth {
  const float* data = nullptr;  // camera z; <= 0 where invalid
  int width = 0, height = 0, stride = 0;
};

// One source view as the reference sees it. The relative poses are computed once per pass.
struct PmSource {
  PmGray gray;
  PmCamera K;
  float R[9];  // reference camera -> source camera: x_s = R x_r + t (row-major)
  float t[3];
  // The plane-induced homography's parts that do not depend on the plane (pmHomography):
  // A = K_s R K_r^-1 and nb = -K_s t, computed on the host in double.
  float A[9];
  float nb[3];
  float Rinv[9];  // source camera -> reference camera
  float tinv[3];
  PmDepth depth;  // the source's photometric depth (geometric pass only)
};

struct PmParams {
  PmGray ref;
  PmCamera K;
  float ifx = 1, ify = 1;  // 1 / K.fx, 1 / K.fy (pmPlane)
  int numSources = 0;
  int topK = 3;
  int geometric = 0;
  float depthMin = 0, depthMax = 1;
  float perturbation = 0.1f;  // relative depth perturbation of this iteration
  float geomRegularizer = 0.3f;
  float geomMaxCost = 3.0f;
  std::uint32_t seed = 1;
  // 1: hypotheses stop scoring sources once they cannot win (exact: pmHypothesisCost); 0 for
  // the measurement of what that saves.
  int earlyExit = 1;
  float colorWeight[256];               // exp(-dI^2 / (2 sigma_c^2)) for |dI| in grey levels
  float spatialWeight[kWindowSamples];  // exp(-r^2 / (2 sigma_s^2)) per window sample
  PmSource src[kMaxSources];
};

// The hypotheses of the reference view, planar arrays of width * height (stride = width).
struct PmState {
  float* depth = nullptr;
  float* nx = nullptr;
  float* ny = nullptr;
  float* nz = nullptr;
  float* cost = nullptr;
  int width = 0, height = 0;
};

// ---- counter-based random numbers -------------------------------------------------------

VIDMAP_HD inline std::uint32_t pmHash(std::uint32_t a, std::uint32_t b, std::uint32_t c,
                                      std::uint32_t d) {
  // Murmur3's finaliser over a chained mix of the four words.
  std::uint32_t h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u);
  h = (h ^ (h >> 16)) * 0x85EBCA6Bu;
  h ^= c * 0xC2B2AE35u;
  h = (h ^ (h >> 13)) * 0xC2B2AE35u;
  h ^= d * 0x27D4EB2Fu;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// A uniform float in [0, 1) from draw `k` of pixel (x, y) at iteration `it`.
VIDMAP_HD inline float pmUniform(const PmParams& P, int x, int y, int it, int k) {
  std::uint32_t h = pmHash(P.seed, static_cast<std::uint32_t>(y) * 65536u + x,
                           static_cast<std::uint32_t>(it), static_cast<std::uint32_t>(k));
  return static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
}

// ---- small geometry ---------------------------------------------------------------------

// a * b + c rounded once, on both sides (the CPU's std::fma is the correctly rounded
// fused multiply-add that the device's FFMA is).
VIDMAP_HD inline float pmFma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

VIDMAP_HD inline float pmBitsToFloat(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

VIDMAP_HD inline void pmRay(const PmCamera& K, float x, float y, float* r) {
  r[0] = (x - K.cx) / K.fx;
  r[1] = (y - K.cy) / K.fy;
  r[2] = 1.0f;
}

// Normalises n and turns it to face the camera along the ray; false for a zero vector.
VIDMAP_HD inline bool pmOrientNormal(float* n, const float* ray) {
  float l2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
  if (!(l2 > 1e-12f)) return false;
  float inv = 1.0f / sqrtf(l2);
  n[0] *= inv, n[1] *= inv, n[2] *= inv;
  if (n[0] * ray[0] + n[1] * ray[1] + n[2] * ray[2] > 0) n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
  return true;
}

// A random unit normal facing the camera (a normalised point of the cube, then oriented).
VIDMAP_HD inline void pmRandomNormal(const PmParams& P, int x, int y, int it, int k,
                                     const float* ray, float* n) {
  for (int tries = 0; tries < 4; ++tries) {
    n[0] = 2.0f * pmUniform(P, x, y, it, k + 3 * tries) - 1.0f;
    n[1] = 2.0f * pmUniform(P, x, y, it, k + 3 * tries + 1) - 1.0f;
    n[2] = 2.0f * pmUniform(P, x, y, it, k + 3 * tries + 2) - 1.0f;
    if (pmOrientNormal(n, ray)) return;
  }
  n[0] = 0, n[1] = 0, n[2] = -1;
}

// ---- images -----------------------------------------------------------------------------

VIDMAP_HD inline float pmGrayAt(const PmGray& g, int x, int y) {
  x = x < 0 ? 0 : (x >= g.width ? g.width - 1 : x);
  y = y < 0 ? 0 : (y >= g.height ? g.height - 1 : y);
  return static_cast<float>(g.data[static_cast<long>(y) * g.stride + x]);
}

// The texture unit's bilinear weight: the fraction in 1.8 fixed point (CUDA C++ Programming
// Guide, "Texture fetching", linear filtering), rounded to the nearest 1/256.
VIDMAP_HD inline float pmHwFraction(float f) { return floorf(f * 256.0f + 0.5f) * (1.0f / 256.0f); }

// Bilinear sample at any (x, y): the coordinates are clamped to the image, so a sample
// outside reads the border (the caller has dropped such windows: pmPhotometricCost decides
// validity from the window's corners). Inside the image the clamp changes nothing. With
// hwFilter the weights are rounded as the texture unit rounds them, and on the device a
// texture fetch does the whole sample at (x, y) in texel-centre coordinates (the caller adds
// the 0.5) and returns the blend / 255 (normalised-float reads: the caller scales the sums);
// its blend is not specified bit for bit, so the CPU twin models it to within a stated
// tolerance (patch_match_cuda_test.cc). Clamped addressing makes any coordinate safe there.
VIDMAP_HD inline float pmSample(const PmGray& g, float x, float y) {
#if defined(__CUDA_ARCH__)
  if (g.tex) return tex2D<float>(static_cast<cudaTextureObject_t>(g.tex), x, y);
#endif
  // Comparisons rather than fminf / fmaxf (library calls on the CPU); a NaN becomes 0.
  const float xMax = g.width - 1.0f, yMax = g.height - 1.0f;
  x = x > 0.0f ? (x < xMax ? x : xMax) : 0.0f;
  y = y > 0.0f ? (y < yMax ? y : yMax) : 0.0f;
  int x0 = static_cast<int>(x), y0 = static_cast<int>(y);
  int x1 = x0 + 1 < g.width ? x0 + 1 : x0;
  int y1 = y0 + 1 < g.height ? y0 + 1 : y0;
  float fx = x - x0, fy = y - y0;
  if (g.hwFilter) fx = pmHwFraction(fx), fy = pmHwFraction(fy);
  const std::uint8_t* r0 = g.data + static_cast<long>(y0) * g.stride;
  const std::uint8_t* r1 = g.data + static_cast<long>(y1) * g.stride;
  float top = (1.0f - fx) * r0[x0] + fx * r0[x1];
  float bottom = (1.0f - fx) * r1[x0] + fx * r1[x1];
  return (1.0f - fy) * top + fy * bottom;
}

// ---- the reference window, read once per pixel and iteration ------------------------------

// Grey levels are whole numbers: four to a word, so the window takes 9 registers rather than
// 36 on the device (the update kernel's register count decides its occupancy). The 36
// weights live where the caller puts them, sample k at w[k * Stride]: on the CPU a local
// array (Stride 1); on the device shared memory interleaved over the block's threads
// (Stride = threads per block: no bank conflicts), which keeps them out of the thread's local
// memory, whose 1024 resident stacks per SM overflowed the L1 and went to L2 at every sample.
// VStride 0 keeps the 9 words of grey levels in the struct (registers on the device); else
// they live at words[i * VStride] like the weights (shared memory), which takes 9 live values
// off the update kernel's 64 registers and most of its spills (patch_match_cuda.cu).
// Same arithmetic either way.
template <int Stride, int VStride = 0>
struct PmWindow {
  std::uint32_t v[VStride == 0 ? kWindowSamples / 4 : 1];  // sample k in byte k % 4 of word k / 4
  std::uint32_t* words = nullptr;                          // VStride > 0: the grey levels
  float* w = nullptr;                                      // bilateral weights
  float sumW = 0, sumWV = 0, sumWVV = 0;
  VIDMAP_HD float weight(int k) const { return w[k * Stride]; }
  VIDMAP_HD std::uint32_t word(int i) const {
    if constexpr (VStride == 0)
      return v[i];
    else
      return words[i * VStride];
  }
  VIDMAP_HD void setWord(int i, std::uint32_t value) {
    if constexpr (VStride == 0)
      v[i] = value;
    else
      words[i * VStride] = value;
  }
};

// Grey level k as a float, exactly: the byte in the low mantissa bits of 2^23 is 2^23 + b,
// less 2^23 (a byte permute and an add; the device converts integers at a quarter of the
// rate of its FP32 arithmetic, on the pipe its reciprocals use).
template <int Stride, int VStride>
VIDMAP_HD inline float pmWindowValue(const PmWindow<Stride, VStride>& win, int k) {
  const std::uint32_t b = (win.word(k >> 2) >> (8 * (k & 3))) & 0xFFu;
  return pmBitsToFloat(0x4B000000u | b) - 8388608.0f;
}

VIDMAP_HD inline int pmWindowOffset(int i) { return -kWindowRadius + kWindowStep * i; }

// Reads the window of (x, y) into win, its weights into `weights` (kWindowSamples * Stride)
// and, when VStride > 0, its grey levels into `words` (kWindowSamples / 4 * VStride).
template <int Stride, int VStride>
VIDMAP_HD inline void pmLoadWindow(const PmParams& P, int x, int y, float* weights,
                                   PmWindow<Stride, VStride>* win, std::uint32_t* words = nullptr) {
  float centre = pmGrayAt(P.ref, x, y);
  float sw = 0, swv = 0, swvv = 0;
  win->w = weights;
  win->words = words;
  std::uint32_t word = 0;
  for (int j = 0; j < kWindowSide; ++j) {
    for (int i = 0; i < kWindowSide; ++i) {
      int k = j * kWindowSide + i;
      float v = pmGrayAt(P.ref, x + pmWindowOffset(i), y + pmWindowOffset(j));
      float d = v - centre;
      int di = static_cast<int>(d < 0 ? -d : d);
      float w = P.colorWeight[di] * P.spatialWeight[k];
      word |= static_cast<std::uint32_t>(v) << (8 * (k & 3));
      if ((k & 3) == 3) win->setWord(k >> 2, word), word = 0;
      weights[k * Stride] = w;
      sw += w;
      swv += w * v;
      swvv += w * v * v;
    }
  }
  win->sumW = sw, win->sumWV = swv, win->sumWVV = swvv;
}

// ---- costs --------------------------------------------------------------------------------

// The plane n . X + delta = 0 through the reference point X (depth * ray), as reference
// pixels see it: q = K_r^-T n / delta, once per hypothesis for all its sources. False for a
// plane through the reference centre or seen edge-on.
VIDMAP_HD inline bool pmPlane(const PmParams& P, const float* X, const float* n, float* q) {
  float delta = -(n[0] * X[0] + n[1] * X[1] + n[2] * X[2]);
  if (!(delta > 1e-7f)) return false;
  const float id = 1.0f / delta;
  const float a = n[0] * P.ifx, b = n[1] * P.ify;
  q[0] = a * id;
  q[1] = b * id;
  q[2] = pmFma(-a, P.K.cx, pmFma(-b, P.K.cy, n[2])) * id;
  return true;
}

// H = K_s (R - t n^T / delta) K_r^-1 = A - (K_s t) q^T: nine fused multiply-adds per source.
VIDMAP_HD inline void pmHomography(const PmSource& s, const float* q, float* H) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) H[3 * r + c] = pmFma(s.nb[r], q[c], s.A[3 * r + c]);
}

// 1 - bilateral-weighted NCC of the reference window and its warp into source s. The window
// is valid when its four corner samples are in front of the source and inside its image: the
// homography's denominator is affine in the pixel, and the image of the window's square is
// the convex quadrilateral of its corners' images (hz > 0 over it), so then every sample is
// inside too, up to rounding (a sample that rounds outside reads the border). No exit between
// the samples, so the device issues their fetches back to back. Per sample: three fused
// multiply-adds along the window's rows (the row's terms once per row), one division, the
// fetch and three accumulations; on the texture path the texel-centre offset is folded into
// H's first two rows (0.5 times the third).
template <int Stride, int VStride>
VIDMAP_HD inline float pmPhotometricCost(const PmWindow<Stride, VStride>& win, const PmSource& s,
                                         const float* H, int x, int y) {
  const PmGray& g = s.gray;
  float h0 = H[0], h1 = H[1], h2 = H[2], h3 = H[3], h4 = H[4], h5 = H[5];
  float lo = 0.0f, scale = 1.0f;
#if defined(__CUDA_ARCH__)
  if (g.tex) {
    h0 = pmFma(0.5f, H[6], h0), h1 = pmFma(0.5f, H[7], h1), h2 = pmFma(0.5f, H[8], h2);
    h3 = pmFma(0.5f, H[6], h3), h4 = pmFma(0.5f, H[7], h4), h5 = pmFma(0.5f, H[8], h5);
    lo = 0.5f, scale = 255.0f;
  }
#endif
  const float hiU = g.width - 1.0f + lo, hiV = g.height - 1.0f + lo;
  float sws = 0, swss = 0, swrs = 0;
  bool valid = true;
  for (int j = 0; j < kWindowSide; ++j) {
    const float v = static_cast<float>(y + pmWindowOffset(j));
    const float bz = pmFma(H[7], v, H[8]);
    const float bu = pmFma(h1, v, h2);
    const float bv = pmFma(h4, v, h5);
    for (int i = 0; i < kWindowSide; ++i) {
      const float u = static_cast<float>(x + pmWindowOffset(i));
      const float hz = pmFma(H[6], u, bz);
      const float iz = 1.0f / hz;  // one division per sample, not two
      const float su = pmFma(h0, u, bu) * iz;
      const float sv = pmFma(h3, u, bv) * iz;
      if ((i == 0 || i == kWindowSide - 1) && (j == 0 || j == kWindowSide - 1))
        valid = valid & (hz > 1e-7f) & (su >= lo) & (sv >= lo) & (su <= hiU) & (sv <= hiV);
      const float gs = pmSample(g, su, sv);
      const int k = j * kWindowSide + i;
      const float w = win.weight(k);
      const float wg = w * gs;
      sws = pmFma(w, gs, sws);
      swss = pmFma(wg, gs, swss);
      swrs = pmFma(wg, pmWindowValue(win, k), swrs);
    }
  }
  if (!valid) return kMaxCost;
  sws *= scale, swss *= scale * scale, swrs *= scale;  // texture path: grey levels
  float inv = 1.0f / win.sumW;
  float mr = win.sumWV * inv, ms = sws * inv;
  float varR = win.sumWVV * inv - mr * mr;
  float varS = swss * inv - ms * ms;
  float cov = swrs * inv - mr * ms;
  // Flat windows (below about 1.5 grey levels of deviation) say nothing about depth.
  const float kMinVar = 2.0f;
  if (!(varR > kMinVar && varS > kMinVar)) return kMaxCost;
  float ncc = cov / sqrtf(varR * varS);
  ncc = ncc > 1.0f ? 1.0f : (ncc < -1.0f ? -1.0f : ncc);
  return 1.0f - ncc;
}

// Forward-backward reprojection error (pixels) of the reference point X through the source's
// depth map, capped at P.geomMaxCost (also for points that leave the source or have no depth).
VIDMAP_HD inline float pmGeometricError(const PmParams& P, const PmSource& s, const float* X, int x,
                                        int y) {
  const float* R = s.R;
  float xs[3] = {R[0] * X[0] + R[1] * X[1] + R[2] * X[2] + s.t[0],
                 R[3] * X[0] + R[4] * X[1] + R[5] * X[2] + s.t[1],
                 R[6] * X[0] + R[7] * X[1] + R[8] * X[2] + s.t[2]};
  if (!(xs[2] > 0)) return P.geomMaxCost;
  float us = s.K.fx * xs[0] / xs[2] + s.K.cx;
  float vs = s.K.fy * xs[1] / xs[2] + s.K.cy;
  int iu = static_cast<int>(floorf(us + 0.5f)), iv = static_cast<int>(floorf(vs + 0.5f));
  if (iu < 0 || iv < 0 || iu >= s.depth.width || iv >= s.depth.height) return P.geomMaxCost;
  float ds = s.depth.data[static_cast<long>(iv) * s.depth.stride + iu];
  if (!(ds > 0)) return P.geomMaxCost;
  float ps[3];
  pmRay(s.K, static_cast<float>(iu), static_cast<float>(iv), ps);
  ps[0] *= ds, ps[1] *= ds, ps[2] = ds;
  const float* Ri = s.Rinv;
  float xr[3] = {Ri[0] * ps[0] + Ri[1] * ps[1] + Ri[2] * ps[2] + s.tinv[0],
                 Ri[3] * ps[0] + Ri[4] * ps[1] + Ri[5] * ps[2] + s.tinv[1],
                 Ri[6] * ps[0] + Ri[7] * ps[1] + Ri[8] * ps[2] + s.tinv[2]};
  if (!(xr[2] > 0)) return P.geomMaxCost;
  float du = P.K.fx * xr[0] / xr[2] + P.K.cx - static_cast<float>(x);
  float dv = P.K.fy * xr[1] / xr[2] + P.K.cy - static_cast<float>(y);
  float e = sqrtf(du * du + dv * dv);
  return e < P.geomMaxCost ? e : P.geomMaxCost;
}

// Costs below this are "not rejected": the bound of a hypothesis that is scored in full.
constexpr float kNoBound = 3.0e38f;

// The aggregated cost of hypothesis (depth, n) at pixel (x, y): the mean of the topK
// smallest per-source costs. Depths outside [depthMin, depthMax] cost more than any other.
//
// `bound` is the cost the hypothesis must beat (the pixel's best so far). Every per-source
// cost is >= 0, so once fewer than topK sources are left, the mean of the k best can be no
// lower than the mean with zeros in the places the sources left could take; when that lower
// bound already reaches `bound`, the rest is not scored and the bound is returned (>= bound:
// the hypothesis loses, as it would have). The lower bound is summed in the order the full
// mean is, zeros first, so in floating point too it never exceeds the full mean (rounding is
// monotone): an exact early exit, the kept hypotheses and their costs are unchanged (ACMM and
// Gipuma score every source of every hypothesis; COLMAP samples sources instead).
template <int Stride, int VStride>
VIDMAP_HD inline float pmHypothesisCost(const PmParams& P, const PmWindow<Stride, VStride>& win,
                                        int x, int y, float depth, const float* n,
                                        float bound = kNoBound) {
  const float kRejected = 1e6f;
  if (!(depth >= P.depthMin && depth <= P.depthMax)) return kRejected;
  float ray[3];
  pmRay(P.K, static_cast<float>(x), static_cast<float>(y), ray);
  // Planes seen nearly edge-on (cos < 0.1 along the ray) are rejected.
  float rn = n[0] * ray[0] + n[1] * ray[1] + n[2] * ray[2];
  float rl2 = ray[0] * ray[0] + ray[1] * ray[1] + 1.0f;
  if (!(rn < 0 && rn * rn > 0.01f * rl2)) return kRejected;
  float X[3] = {ray[0] * depth, ray[1] * depth, depth};
  float q[3];
  const bool plane = pmPlane(P, X, n, q);
  // The kMaxTopK best costs in ascending order, in fixed places (registers on the device);
  // the first k are the aggregate's.
  float best[kMaxTopK];
  const int k = P.topK < P.numSources ? P.topK : P.numSources;
  for (int i = 0; i < kMaxTopK; ++i) best[i] = kRejected;
  for (int si = 0; si < P.numSources; ++si) {
    const PmSource& s = P.src[si];
    float c = kMaxCost;
    if (plane) {
      float H[9];
      pmHomography(s, q, H);
      c = pmPhotometricCost(win, s, H, x, y);
    }
    if (P.geometric) c += P.geomRegularizer * pmGeometricError(P, s, X, x, y);
    // Insert into the sorted list (a NaN cost is never inserted).
    for (int i = 0; i < kMaxTopK; ++i) {
      if (c < best[i]) {
        float t = best[i];
        best[i] = c;
        c = t;
      }
    }
    const int left = P.numSources - 1 - si;
    if (left > 0 && left < k) {
      float lower = 0;
      for (int i = 0; i < kMaxTopK; ++i)
        if (i < k - left) lower += best[i];
      lower = lower / static_cast<float>(k);
      if (lower >= bound) return lower;
    }
  }
  float sum = 0;
  for (int i = 0; i < kMaxTopK; ++i)
    if (i < k) sum += best[i];
  return sum / static_cast<float>(k);
}

// ---- the updates --------------------------------------------------------------------------
// Each takes the storage of the pixel's window weights (kWindowSamples * Stride floats) and,
// when VStride > 0, of its grey levels (kWindowSamples / 4 * VStride words).

// A random hypothesis (depth uniform in the range, normal facing the camera) and its cost.
template <int Stride, int VStride = 0>
VIDMAP_HD inline void pmInitPixel(const PmParams& P, const PmState& S, int x, int y, float* weights,
                                  std::uint32_t* words = nullptr) {
  long i = static_cast<long>(y) * S.width + x;
  float ray[3], n[3];
  pmRay(P.K, static_cast<float>(x), static_cast<float>(y), ray);
  float d = P.depthMin + (P.depthMax - P.depthMin) * pmUniform(P, x, y, 0xFFFF, 0);
  pmRandomNormal(P, x, y, 0xFFFF, 1, ray, n);
  PmWindow<Stride, VStride> win;
  pmLoadWindow(P, x, y, weights, &win, words);
  S.depth[i] = d, S.nx[i] = n[0], S.ny[i] = n[1], S.nz[i] = n[2];
  S.cost[i] = pmHypothesisCost(P, win, x, y, d, n);
}

// The cost of the pixel's present hypothesis (the geometric pass starts from the photometric
// result with costs that include the geometric term).
template <int Stride, int VStride = 0>
VIDMAP_HD inline void pmRescorePixel(const PmParams& P, const PmState& S, int x, int y,
                                     float* weights, std::uint32_t* words = nullptr) {
  long i = static_cast<long>(y) * S.width + x;
  float n[3] = {S.nx[i], S.ny[i], S.nz[i]};
  PmWindow<Stride, VStride> win;
  pmLoadWindow(P, x, y, weights, &win, words);
  S.cost[i] = pmHypothesisCost(P, win, x, y, S.depth[i], n);
}

// Neighbours of the other colour: the four at distance 1 and the four at distance 5.
VIDMAP_HD inline void pmNeighbourOffset(int k, int* dx, int* dy) {
  const int d = k < 4 ? 1 : 5;
  const int dir = k & 3;
  *dx = dir == 0 ? -d : (dir == 1 ? d : 0);
  *dy = dir == 2 ? -d : (dir == 3 ? d : 0);
}

// One red-black update of pixel (x, y): the hypotheses of its eight neighbours, a random
// perturbation of its own and a fresh random one; keeps the cheapest. Each candidate is
// scored against the best so far (pmHypothesisCost's exact early exit).
template <int Stride, int VStride = 0>
VIDMAP_HD inline void pmUpdatePixel(const PmParams& P, const PmState& S, int x, int y, int it,
                                    float* weights, std::uint32_t* words = nullptr) {
  long i = static_cast<long>(y) * S.width + x;
  PmWindow<Stride, VStride> win;
  pmLoadWindow(P, x, y, weights, &win, words);
  float bestD = S.depth[i];
  float bestN[3] = {S.nx[i], S.ny[i], S.nz[i]};
  float bestC = S.cost[i];
  for (int k = 0; k < kNumNeighbours; ++k) {
    int dx, dy;
    pmNeighbourOffset(k, &dx, &dy);
    int qx = x + dx, qy = y + dy;
    if (qx < 0 || qy < 0 || qx >= S.width || qy >= S.height) continue;
    long q = static_cast<long>(qy) * S.width + qx;
    float n[3] = {S.nx[q], S.ny[q], S.nz[q]};
    float d = S.depth[q];
    // Propagation copies planes verbatim, so neighbours often hold the best plane itself:
    // its cost is bestC exactly and it cannot win; skipping it changes no result.
    if (d == bestD && n[0] == bestN[0] && n[1] == bestN[1] && n[2] == bestN[2]) continue;
    float c = pmHypothesisCost(P, win, x, y, d, n, P.earlyExit ? bestC : kNoBound);
    if (c < bestC) bestC = c, bestD = d, bestN[0] = n[0], bestN[1] = n[1], bestN[2] = n[2];
  }
  float ray[3];
  pmRay(P.K, static_cast<float>(x), static_cast<float>(y), ray);
  {  // perturbation of the best so far
    float n[3];
    float e = P.perturbation;
    float d = bestD * (1.0f + e * (2.0f * pmUniform(P, x, y, it, 0) - 1.0f));
    n[0] = bestN[0] + e * (2.0f * pmUniform(P, x, y, it, 1) - 1.0f);
    n[1] = bestN[1] + e * (2.0f * pmUniform(P, x, y, it, 2) - 1.0f);
    n[2] = bestN[2] + e * (2.0f * pmUniform(P, x, y, it, 3) - 1.0f);
    if (pmOrientNormal(n, ray)) {
      float c = pmHypothesisCost(P, win, x, y, d, n, P.earlyExit ? bestC : kNoBound);
      if (c < bestC) bestC = c, bestD = d, bestN[0] = n[0], bestN[1] = n[1], bestN[2] = n[2];
    }
  }
  {  // a fresh random hypothesis
    float n[3];
    float d = P.depthMin + (P.depthMax - P.depthMin) * pmUniform(P, x, y, it, 4);
    pmRandomNormal(P, x, y, it, 5, ray, n);
    float c = pmHypothesisCost(P, win, x, y, d, n, P.earlyExit ? bestC : kNoBound);
    if (c < bestC) bestC = c, bestD = d, bestN[0] = n[0], bestN[1] = n[1], bestN[2] = n[2];
  }
  S.depth[i] = bestD, S.nx[i] = bestN[0], S.ny[i] = bestN[1], S.nz[i] = bestN[2];
  S.cost[i] = bestC;
}

// Pixel p of colour c in a row-major walk over one colour: (x, y) with (x + y) & 1 == c.
VIDMAP_HD inline bool pmColourPixel(int p, int colour, int width, int height, int* x, int* y) {
  int half = (width + 1) / 2;
  *y = p / half;
  *x = 2 * (p % half) + ((*y + colour) & 1);
  return *y < height && *x < width;
}

}  // namespace vidmap::mvs
