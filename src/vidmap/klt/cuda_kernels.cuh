// The CUDA kernels of the KLT tracker. Each kernel calls the VIDMAP_HD functions of kernels.h
// that the CPU backend (the oracle) runs, so a build with -fmad=false equals the CPU bit for
// bit. Every kernel takes the K sequences of a BatchView: blockIdx.y is the sequence.
//
// Two tracking kernels:
// - trackLaneKernel: one thread per track, trackForward/trackBackward of kernels.h unchanged
//   (the design's form, 4.3). Its TrackScratch (15 KiB) lives in local memory.
// - trackWarpKernel: one warp per track, as vilib and Basalt do: trackLoop of kernels.h (the
//   one tracking loop) with the window policy WarpWindow. Lane l holds the window pixels
//   k = l, l + 32, l + 64, ... (raster order) of the template and its gradient in registers
//   (or shared memory: WarpForm) for the whole level, and each window sum is the lane's partial
//   over its pixels in increasing k, reduced by __shfl_xor_sync with offsets 16, 8, 4, 2, 1. That
//   is exactly the lane-strided order of kernels.h (partial k % 32, then laneTreeSum), so the warp
//   variant equals trackPoint bit for bit too; every lane ends with the same sums, so the control
//   flow (convergence, loss) is uniform over the warp and no lane idles at a shuffle.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "vidmap/klt/cuda_batch_view.h"
#include "vidmap/klt/kernels.h"

namespace vidmap::klt::cuda {

inline constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------------------------------------
// Frame and pyramid

__global__ void grayFromRgbKernel(BatchView v, int slot, const std::uint8_t* rgb) {
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int seq = blockIdx.y;
  if (p >= v.pixels()) return;
  const std::uint8_t* q = rgb + 3 * (seq * v.pixels() + p);
  v.grayOf(seq, slot)[p] = grayFromRgb(q[0], q[1], q[2]);
}

__global__ void grayFromFloatKernel(BatchView v, int slot, const float* gray) {
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int seq = blockIdx.y;
  if (p >= v.pixels()) return;
  v.grayOf(seq, slot)[p] = gray[seq * v.pixels() + p];
}

// An 8-bit gray frame: v / 255 (the last step of grayFromRgb).
__global__ void grayFromByteKernel(BatchView v, int slot, const std::uint8_t* gray) {
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int seq = blockIdx.y;
  if (p >= v.pixels()) return;
  v.grayOf(seq, slot)[p] = static_cast<float>(gray[seq * v.pixels() + p]) / 255.0f;
}

// Level `level` (>= 1) of the slot from level - 1.
__global__ void pyrDownKernel(BatchView v, int slot, int level) {
  const int w = v.layout.width[level];
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= v.layout.pixels(level)) return;
  float* g = v.grayOf(blockIdx.y, slot);
  const int x = static_cast<int>(p % w), y = static_cast<int>(p / w);
  g[v.layout.offset[level] + p] = pyrDownPixel(
      g + v.layout.offset[level - 1], v.layout.width[level - 1], v.layout.height[level - 1], x, y);
}

// The Scharr gradient of every level of the slot (a flat index over the pyramid).
__global__ void scharrKernel(BatchView v, int slot) {
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= v.layout.total) return;
  int l = v.layout.levels - 1;
  while (l > 0 && p < v.layout.offset[l]) --l;
  const std::int64_t q = p - v.layout.offset[l];
  const int w = v.layout.width[l];
  const float* g = v.grayOf(blockIdx.y, slot) + v.layout.offset[l];
  float* d = v.gradOf(blockIdx.y, slot) + 2 * p;
  scharrPixel(g, w, v.layout.height[l], static_cast<int>(q % w), static_cast<int>(q / w), d, d + 1);
}

// ---------------------------------------------------------------------------------------------
// Tracking

// The tracks [begin, min(end, alive[seq])) of a sequence (alive may be null: end alone).
__device__ __forceinline__ int trackLimit(const BatchView& v, int end, bool useAlive, int seq) {
  if (!useAlive) return end;
  const int a = v.alive[seq];
  return a < end ? a : end;
}

// forward: records[1][i] = trackForward(prev, cur, records[0][i]);
// backward: records[2][i] = trackBackward(prev, cur, records[1][i]).
__global__ void __launch_bounds__(64)
    trackLaneKernel(BatchView v, int prevSlot, int curSlot, bool backward, int begin, int end,
                    bool useAlive, TrackParams p) {
  const int seq = blockIdx.y;
  const int i = begin + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= trackLimit(v, end, useAlive, seq)) return;
  TrackScratch scratch;
  const PyramidView prev = v.pyramid(seq, prevSlot), cur = v.pyramid(seq, curSlot);
  if (!backward)
    v.recordsOf(1, seq)[i] = trackForward(prev, cur, v.recordsOf(0, seq)[i], p, &scratch);
  else
    v.recordsOf(2, seq)[i] = trackBackward(prev, cur, v.recordsOf(1, seq)[i], p, &scratch);
}

// The sum over the warp in the order of laneTreeSum (see the file comment).
__device__ __forceinline__ float warpTreeSum(float v) {
  v = v + __shfl_xor_sync(kFullMask, v, 16);
  v = v + __shfl_xor_sync(kFullMask, v, 8);
  v = v + __shfl_xor_sync(kFullMask, v, 4);
  v = v + __shfl_xor_sync(kFullMask, v, 2);
  v = v + __shfl_xor_sync(kFullMask, v, 1);
  return v;
}

// The window pixels of one lane: k = lane + 32 s for s < PL (valid while k < n), at the
// offset (di, dj) = (i - hw, j - hw) from the window centre, k = j * size + i. Nothing is
// stored: the fast paths use the per-level offsets dj * w + di, the rare slow paths divide.
// HW > 0 is the half window known at compile time (the two of optionsFor: 7 and 10): the
// divisions by the window size become multiplications, and the pixels s that are valid on
// every lane (31 + 32 s < n) need no test, so a pass over them has no branch and the loads
// of all its pixels can be issued before the first is used. HW = 0: the half window of the
// parameters (any window), every pixel tested.
template <int PL, int HW = 0>
struct LanePixels {
  static constexpr int kSize = 2 * HW + 1, kN = kSize * kSize;
  int lane, hw, size, n;

  __device__ __forceinline__ LanePixels(int laneIndex, int halfWindow)
      : lane(laneIndex),
        hw(HW > 0 ? HW : halfWindow),
        size(HW > 0 ? kSize : 2 * halfWindow + 1),
        n(HW > 0 ? kN : size * size) {}
  // Valid on every lane, known at compile time where s is (an unrolled loop).
  __device__ __forceinline__ static constexpr bool always(int s) {
    return HW > 0 && kLanes - 1 + kLanes * s < kN;
  }
  __device__ __forceinline__ bool valid(int s) const {
    return always(s) || lane + kLanes * s < (HW > 0 ? kN : n);
  }
  __device__ __forceinline__ int di(int s) const {
    return HW > 0 ? (lane + kLanes * s) % kSize - HW : (lane + kLanes * s) % size - hw;
  }
  __device__ __forceinline__ int dj(int s) const {
    return HW > 0 ? (lane + kLanes * s) / kSize - HW : (lane + kLanes * s) / size - hw;
  }
};

// The two pyramids of a track by their buffers; both have the layout of the BatchView.
struct PyramidPair {
  const float *grayI, *gradI, *grayJ, *gradJ;
};

// A level of a pyramid with every index into the layout a compile-time constant, so that the
// layout stays in the kernel's parameter space instead of a local-memory copy.
__device__ __forceinline__ LevelView levelAt(const Layout& L, const float* gray, const float* grad,
                                             int level) {
  LevelView r;
#pragma unroll
  for (int l = 0; l < kMaxLevels; ++l)
    if (l == level) r = {gray + L.offset[l], grad + 2 * L.offset[l], L.width[l], L.height[l]};
  return r;
}

// True when every tap of a window around the bilinear origin b lies in the level, so that the
// clamps of bilinearTap are the identity: then a tap is base[off], base[off + 1], base[off + w],
// base[off + w + 1] with off = dj * w + di (the fast path of sampleTargetWindow).
__device__ __forceinline__ bool windowInside(const Bilinear& b, int hw, int w, int h) {
  return b.x0 - hw >= 0 && b.y0 - hw >= 0 && b.x0 + hw + 1 <= w - 1 && b.y0 + hw + 1 <= h - 1;
}

// The taps of the pixel whose top-left tap is base[at] (at = the origin's index in the level
// plus the pixel's offset: one 32-bit index, so that each row's address is one wide multiply-
// add instead of a 64-bit sum of two sign-extended parts). The pyramids are read-only while a
// tracking kernel runs: the loads go through the read-only path instead of generic loads.
__device__ __forceinline__ float fastTap(const float* base, int at, int w, const Bilinear& b) {
  const float* a = base + at;
  const float* c = base + (at + w);
  return bilinearCombine(b, __ldg(a), __ldg(a + 1), __ldg(c), __ldg(c + 1));
}

__device__ __forceinline__ void fastTapGrad(const float2* base, int at, int w, const Bilinear& b,
                                            float* gx, float* gy) {
  const float2* a = base + at;
  const float2* c = base + (at + w);
  const float2 g00 = __ldg(a), g10 = __ldg(a + 1), g01 = __ldg(c), g11 = __ldg(c + 1);
  *gx = bilinearCombine(b, g00.x, g10.x, g01.x, g11.x);
  *gy = bilinearCombine(b, g00.y, g10.y, g01.y, g11.y);
}

// Where a lane keeps the template of the current level (value, gradient of its PL pixels):
// in registers, or in the warp's slice of shared memory at [s * 32 + lane] (conflict-free),
// with the per-level offsets dj * w + di of its pixels.
// Each lane reads back only what it wrote itself, so the shared form needs no barrier.
template <int PL, bool kShared>
struct TemplateStore;

template <int PL>
struct TemplateStore<PL, false> {
  float t[PL], gx[PL], gy[PL];
  int off[PL];
  static constexpr int kUnroll = PL;  // register arrays need constant indices
  static constexpr int kUnrollSlow = PL;
  __device__ __forceinline__ explicit TemplateStore(float*, int) {}
  __device__ __forceinline__ int& OFF(int s) { return off[s]; }
  __device__ __forceinline__ float& T(int s) { return t[s]; }
  __device__ __forceinline__ float& GX(int s) { return gx[s]; }
  __device__ __forceinline__ float& GY(int s) { return gy[s]; }
};

template <int PL>
struct TemplateStore<PL, true> {
  float* base;                           // 4 * PL * 32 words of this warp
  static constexpr int kUnroll = 4;      // a few loads in flight, few registers, more warps
  static constexpr int kUnrollSlow = 1;  // the rare paths (border, NCC) kept small: the code
                                         // of a fully unrolled kernel overflows the i-cache
  __device__ __forceinline__ TemplateStore(float* warpSlice, int lane) : base(warpSlice + lane) {}
  __device__ __forceinline__ int& OFF(int s) {
    return reinterpret_cast<int*>(base)[(3 * PL + s) * kLanes];
  }
  __device__ __forceinline__ float& T(int s) { return base[s * kLanes]; }
  __device__ __forceinline__ float& GX(int s) { return base[(PL + s) * kLanes]; }
  __device__ __forceinline__ float& GY(int s) { return base[(2 * PL + s) * kLanes]; }
};

// bilinearTap and bilinearTapGrad of kernels.h (the same taps, the same combination) with 32-bit
// indices (a level holds fewer than 2^31 pixels) and read-only loads: the border passes of
// the warp kernels, which run for every track at the coarsest levels.
__device__ __forceinline__ float clampedTap(const float* img, int w, int h, const Bilinear& b,
                                            int i, int j) {
  const int xa = clampInt(b.x0 + i, 0, w - 1), xb = clampInt(b.x0 + i + 1, 0, w - 1);
  const int ya = clampInt(b.y0 + j, 0, h - 1) * w, yb = clampInt(b.y0 + j + 1, 0, h - 1) * w;
  return bilinearCombine(b, __ldg(img + (ya + xa)), __ldg(img + (ya + xb)), __ldg(img + (yb + xa)),
                         __ldg(img + (yb + xb)));
}

__device__ __forceinline__ void clampedTapGrad(const float* grad, int w, int h, const Bilinear& b,
                                               int i, int j, float* gx, float* gy) {
  const float2* g = reinterpret_cast<const float2*>(grad);
  const int xa = clampInt(b.x0 + i, 0, w - 1), xb = clampInt(b.x0 + i + 1, 0, w - 1);
  const int ya = clampInt(b.y0 + j, 0, h - 1) * w, yb = clampInt(b.y0 + j + 1, 0, h - 1) * w;
  const float2 g00 = __ldg(g + (ya + xa)), g10 = __ldg(g + (ya + xb)), g01 = __ldg(g + (yb + xa)),
               g11 = __ldg(g + (yb + xb));
  *gx = bilinearCombine(b, g00.x, g10.x, g01.x, g11.x);
  *gy = bilinearCombine(b, g00.y, g10.y, g01.y, g11.y);
}

// The forms of the warp kernels: where a lane keeps the template of a level and how the rare
// window paths (a window across the level's border: at the coarsest levels the common case)
// run. kFormRegisters: the template in registers, every pass unrolled (89 KB of code at
// 21 x 21, 105-110 KB before the 32-bit taps: more than the instruction cache held); kFormShared:
// the template in shared memory, the passes unrolled by 4 (fewer registers, more instructions);
// kFormStaged: the template in registers and the fast passes unrolled as in kFormRegisters, the
// border passes rolled loops that put their samples in the warp's slice of shared memory, from
// which an unrolled loop of a few instructions a pixel takes them (the same values, the same sums
// in the same order).
enum WarpForm : int { kFormRegisters = 0, kFormShared = 1, kFormStaged = 2 };

// The words of shared memory a warp's slice holds (4 PL a lane; kFormStaged uses 3 PL).
__host__ __device__ constexpr int sliceWords(int form, int pl) {
  return form == kFormRegisters ? 0 : 4 * pl * kLanes;
}

// The template mask of pixel s as the float factor m of kernels.h (1 or 0).
__device__ __forceinline__ float maskOf(unsigned mask, int s) {
  return (mask >> s) & 1u ? 1.0f : 0.0f;
}

// The window policy of trackLoop (kernels.h) for one warp (PL >= ceil(n / 32) window pixels a
// lane): each lane samples its pixels of the template (kept in the TemplateStore for the
// level) and of each target window, adds them into its partials with the terms of kernels.h,
// and the partials are added by warpTreeSum. Every lane ends with the same sums, so trackLoop's
// control flow is uniform over the warp.
template <int PL, int Form, int HW = 0>
struct WarpWindow {
  static constexpr bool kShared = Form == kFormShared, kStaged = Form == kFormStaged;
  static constexpr int kUnroll = TemplateStore<PL, kShared>::kUnroll;
  static constexpr int kUnrollSlow = TemplateStore<PL, kShared>::kUnrollSlow;
  const Layout& L;
  PyramidPair P;
  const TrackParams& p;
  LanePixels<PL, HW> px;
  TemplateStore<PL, kShared> tw;
  unsigned mask = 0u;     // bit s: pixel s of the lane lies in the level (the m of kernels.h)
  bool fullMask = false;  // every pixel of the window lies in the level
  LevelView lj;           // the target level of the template's level (read once a level)
  float* stage;           // kStaged: this lane's words of the warp's slice, [q * 32]

  __device__ __forceinline__ WarpWindow(const Layout& layout, const PyramidPair& pair,
                                        const TrackParams& params, int lane, float* slice)
      : L(layout),
        P(pair),
        p(params),
        px(lane, params.halfWindow),
        tw(slice, lane),
        stage(kStaged ? slice + lane : nullptr) {}
  __device__ __forceinline__ float& S(int q) { return stage[q * kLanes]; }

  // sampleTemplate of kernels.h: the window (pixels outside the level masked), then pass 1
  // (mean) and pass 2 (the other sums). The offset of a pixel past the window (k >= n) is 0,
  // so that the fast paths may load it (inside the level) and drop it without a branch.
  __device__ __forceinline__ TemplateSums sampleTemplate(int level, float cx, float cy) {
    const int hw = px.hw;
    const LevelView li = levelAt(L, P.grayI, P.gradI, level);
    lj = levelAt(L, P.grayJ, P.gradJ, level);
    const Bilinear b = bilinearAt(cx, cy);
    float st = 0.0f;
    int valid = 0;
    mask = 0u;
#pragma unroll kUnrollSlow
    for (int s = 0; s < PL; ++s) tw.OFF(s) = px.valid(s) ? px.dj(s) * li.width + px.di(s) : 0;
    if (windowInside(b, hw, li.width, li.height)) {
      // Every pixel lies in the level (cx - hw >= x0 - hw >= 0, cx + hw < x0 + hw + 1 <= w - 1).
      const int o = b.y0 * li.width + b.x0;
      const float2* d = reinterpret_cast<const float2*>(li.grad);
#pragma unroll kUnroll
      for (int s = 0; s < PL; ++s) {
        const bool v = px.valid(s);
        float t = fastTap(li.gray, o + tw.OFF(s), li.width, b), gx, gy;
        fastTapGrad(d, o + tw.OFF(s), li.width, b, &gx, &gy);
        tw.T(s) = v ? t : 0.0f;
        tw.GX(s) = v ? gx : 0.0f;
        tw.GY(s) = v ? gy : 0.0f;
        mask |= v ? 1u << s : 0u;
        st = v ? st + t : st;
      }
      valid = px.n;                  // every pixel of the window (uniform: no reduction)
    } else if constexpr (kStaged) {  // the same as below, rolled, through the stage
      const float hx = static_cast<float>(li.width - 1), hy = static_cast<float>(li.height - 1);
#pragma unroll 1
      for (int s = 0; s < PL; ++s) {
        float t = 0.0f, gx = 0.0f, gy = 0.0f;
        if (px.valid(s)) {
          const float x = cx + static_cast<float>(px.di(s)), y = cy + static_cast<float>(px.dj(s));
          if (x >= 0.0f && y >= 0.0f && x <= hx && y <= hy) {
            t = clampedTap(li.gray, li.width, li.height, b, px.di(s), px.dj(s));
            clampedTapGrad(li.grad, li.width, li.height, b, px.di(s), px.dj(s), &gx, &gy);
            mask |= 1u << s;
            ++valid;
          }
          st += t;
        }
        S(3 * s) = t;
        S(3 * s + 1) = gx;
        S(3 * s + 2) = gy;
      }
#pragma unroll
      for (int s = 0; s < PL; ++s) {
        tw.T(s) = S(3 * s);
        tw.GX(s) = S(3 * s + 1);
        tw.GY(s) = S(3 * s + 2);
      }
      valid = __reduce_add_sync(kFullMask, valid);
    } else {
      const float hx = static_cast<float>(li.width - 1), hy = static_cast<float>(li.height - 1);
#pragma unroll kUnrollSlow
      for (int s = 0; s < PL; ++s) {
        tw.T(s) = tw.GX(s) = tw.GY(s) = 0.0f;
        if (px.valid(s)) {
          const float x = cx + static_cast<float>(px.di(s)), y = cy + static_cast<float>(px.dj(s));
          if (x >= 0.0f && y >= 0.0f && x <= hx && y <= hy) {
            tw.T(s) = clampedTap(li.gray, li.width, li.height, b, px.di(s), px.dj(s));
            clampedTapGrad(li.grad, li.width, li.height, b, px.di(s), px.dj(s), &tw.GX(s),
                           &tw.GY(s));
            mask |= 1u << s;
            ++valid;
          }
          st += tw.T(s);
        }
      }
      valid = __reduce_add_sync(kFullMask, valid);
    }
    fullMask = valid == px.n;  // uniform: then m = 1 everywhere and j * m = j
    TemplateSums ts;
    ts.n = static_cast<float>(valid > 0 ? valid : 1);
    ts.meanT = warpTreeSum(st) / ts.n;
    float acc[kTemplateTerms] = {};
    const bool plainSsd = p.photometric == 0;
    if (fullMask) {  // m = 1: tc = T - meanT (the CPU's allValid form, the same bits)
#pragma unroll kUnroll
      for (int s = 0; s < PL; ++s)
        if (px.valid(s))
          addTemplateTerms(tw.T(s), tw.T(s) - ts.meanT, tw.GX(s), tw.GY(s), plainSsd, acc, 1);
    } else {
#pragma unroll kUnrollSlow
      for (int s = 0; s < PL; ++s)
        if (px.valid(s))
          addTemplateTerms(tw.T(s), (tw.T(s) - ts.meanT) * maskOf(mask, s), tw.GX(s), tw.GY(s),
                           plainSsd, acc, 1);
    }
#pragma unroll
    for (int q = 0; q < kTemplateTerms; ++q) acc[q] = warpTreeSum(acc[q]);
    setTemplateTerms(acc, &ts);
    finishTemplateSums(&ts, p.minEigThreshold);
    return ts;
  }

  // sampleTargetWindow and targetSums of kernels.h (trackLoop asks for the level of the last
  // template, whose target level sampleTemplate kept). The fast path loads every pixel of the
  // lane before the first sum (a pixel past the window reads offset 0 and is not added).
  __device__ __forceinline__ TargetSums targetSums(int, float qx, float qy) {
    const Bilinear b = bilinearAt(qx, qy);
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    if (fullMask && windowInside(b, px.hw, lj.width, lj.height)) {
      const int o = b.y0 * lj.width + b.x0;
#pragma unroll kUnroll
      for (int s = 0; s < PL; ++s) {
        const float j = fastTap(lj.gray, o + tw.OFF(s), lj.width, b);
        if (px.always(s)) {
          addTargetTerms(j, tw.GX(s), tw.GY(s), a0, a1, a2, a3);
        } else {
          float b0 = a0, b1 = a1, b2 = a2, b3 = a3;
          addTargetTerms(j, tw.GX(s), tw.GY(s), b0, b1, b2, b3);
          const bool v = px.valid(s);
          a0 = v ? b0 : a0;
          a1 = v ? b1 : a1;
          a2 = v ? b2 : a2;
          a3 = v ? b3 : a3;
        }
      }
    } else if constexpr (kStaged) {  // the samples by a rolled loop, the sums unrolled
#pragma unroll 1
      for (int s = 0; s < PL; ++s)
        S(s) = px.valid(s) ? clampedTap(lj.gray, lj.width, lj.height, b, px.di(s), px.dj(s)) *
                                 maskOf(mask, s)
                           : 0.0f;
#pragma unroll
      for (int s = 0; s < PL; ++s)
        if (px.valid(s)) addTargetTerms(S(s), tw.GX(s), tw.GY(s), a0, a1, a2, a3);
    } else {
#pragma unroll kUnrollSlow
      for (int s = 0; s < PL; ++s)
        if (px.valid(s))
          addTargetTerms(
              clampedTap(lj.gray, lj.width, lj.height, b, px.di(s), px.dj(s)) * maskOf(mask, s),
              tw.GX(s), tw.GY(s), a0, a1, a2, a3);
    }
    TargetSums js;
    js.sj = warpTreeSum(a0);
    js.sjj = warpTreeSum(a1);
    js.sjgx = warpTreeSum(a2);
    js.sjgy = warpTreeSum(a3);
    return js;
  }

  // sampleTargetWindow and windowNcc of kernels.h at level 0 (the store holds the level-0
  // template: trackLoop asks only when level 0 was sampled).
  __device__ __forceinline__ float ncc(float x, float y, const TemplateSums& t0) {
    const LevelView l0 = levelAt(L, P.grayJ, P.gradJ, 0);
    const Bilinear b = bilinearAt(x, y);
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f;
    if (windowInside(b, px.hw, l0.width, l0.height)) {  // the taps unclamped: fastTap
      const int o = b.y0 * l0.width + b.x0;
#pragma unroll kUnroll
      for (int s = 0; s < PL; ++s) {
        const float j = fastTap(l0.gray, o + tw.OFF(s), l0.width, b);  // OFF: level 0's
        if (px.valid(s)) addNccTerms(j, tw.T(s) - t0.meanT, a0, a1, a2);
      }
    } else if constexpr (kStaged) {
#pragma unroll 1
      for (int s = 0; s < PL; ++s)
        S(s) = px.valid(s) ? clampedTap(l0.gray, l0.width, l0.height, b, px.di(s), px.dj(s)) : 0.0f;
#pragma unroll
      for (int s = 0; s < PL; ++s)
        if (px.valid(s)) addNccTerms(S(s), tw.T(s) - t0.meanT, a0, a1, a2);
    } else {
#pragma unroll kUnrollSlow
      for (int s = 0; s < PL; ++s)
        if (px.valid(s))
          addNccTerms(clampedTap(l0.gray, l0.width, l0.height, b, px.di(s), px.dj(s)),
                      tw.T(s) - t0.meanT, a0, a1, a2);
    }
    return nccFromSums(warpTreeSum(a0), warpTreeSum(a1), warpTreeSum(a2), t0);
  }
};

// trackPoint of kernels.h by one warp: trackLoop with the warp's window policy. Every lane
// returns the same record.
template <int PL, int Form, int HW>
__device__ TrackRecord trackPointWarp(const Layout& L, const PyramidPair& P, float ux, float uy,
                                      const TrackParams& p, int lane, float* slice) {
  WarpWindow<PL, Form, HW> w(L, P, p, lane, slice);
  return trackLoop(w, L, L, ux, uy, p);
}

// One warp per track; blockDim.x is a multiple of 32. A warp past the range exits whole.
// Form: WarpForm (the shared forms take sliceWords(Form, PL) words of dynamic shared memory a
// warp). HW: the half window at compile time, or 0 (LanePixels).
// The register and staged forms keep the loads of a whole window pass in flight (168
// registers, 12 warps a multiprocessor); the shared form unrolls by 4 and keeps 72 registers.
template <int PL, int Form, int HW>
__global__ void __launch_bounds__(128)
    trackWarpKernel(BatchView v, int prevSlot, int curSlot, bool backward, int begin, int end,
                    bool useAlive, TrackParams p) {
  extern __shared__ float warpSlices[];
  const int seq = blockIdx.y;
  const int lane = threadIdx.x & (kLanes - 1);
  const int i = begin + static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / kLanes);
  if (i >= trackLimit(v, end, useAlive, seq)) return;  // uniform over the warp
  float* slice =
      Form != kFormRegisters ? warpSlices + (threadIdx.x / kLanes) * sliceWords(Form, PL) : nullptr;
  // One call site, so that the (large) tracking code is inlined once.
  const int a = backward ? curSlot : prevSlot, b = backward ? prevSlot : curSlot;
  const PyramidPair P{v.grayOf(seq, a), v.gradOf(seq, a), v.grayOf(seq, b), v.gradOf(seq, b)};
  const TrackRecord in = v.recordsOf(backward ? 1 : 0, seq)[i];
  TrackRecord r = in;  // a dead forward record is copied by the backward pass
  if (!backward || statusAlive(in.status))
    r = trackPointWarp<PL, Form, HW>(v.layout, P, in.x, in.y, p, lane, slice);
  if (lane == 0) v.recordsOf(backward ? 2 : 1, seq)[i] = r;
}

// Forward, backward and check of each track by one warp in one launch (the batched push):
// the same functions on the same data as trackWarpKernel twice and checkKernel, so the same
// bits; no kernel boundary between the passes, so a slow forward track does not hold back the
// backward passes of the others. One body, two kernels that differ only in their launch bounds.
template <int PL, int Form, int HW>
__device__ __forceinline__ void trackFused(const BatchView& v, int prevSlot, int curSlot, int begin,
                                           int end, bool useAlive, const TrackParams& p,
                                           float fbThresholdPx, float nccThreshold,
                                           float* warpSlices) {
  const int seq = blockIdx.y;
  const int lane = threadIdx.x & (kLanes - 1);
  const int i = begin + static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / kLanes);
  if (i >= trackLimit(v, end, useAlive, seq)) return;  // uniform over the warp
  float* slice =
      Form != kFormRegisters ? warpSlices + (threadIdx.x / kLanes) * sliceWords(Form, PL) : nullptr;
  const TrackRecord seed = v.recordsOf(0, seq)[i];
  TrackRecord in = seed, fwd = seed, bwd = seed;
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {  // one call site: the tracking code is inlined once
    const bool backward = pass == 1;
    const int a = backward ? curSlot : prevSlot, b = backward ? prevSlot : curSlot;
    const PyramidPair P{v.grayOf(seq, a), v.gradOf(seq, a), v.grayOf(seq, b), v.gradOf(seq, b)};
    TrackRecord r = in;  // a dead forward record is copied by the backward pass
    if (!backward || statusAlive(in.status))
      r = trackPointWarp<PL, Form, HW>(v.layout, P, in.x, in.y, p, lane, slice);
    if (backward) {
      bwd = r;
    } else {
      fwd = r;
      in = r;
    }
  }
  if (lane == 0) {
    v.recordsOf(1, seq)[i] = fwd;
    v.recordsOf(2, seq)[i] = bwd;
    v.recordsOf(3, seq)[i] = checkTrack(seed, fwd, bwd, fbThresholdPx, nccThreshold);
  }
}

// The default bounds: ptxas picks the registers (168 for the register and staged forms at
// 21 x 21, 12 warps a multiprocessor; docs/benchmarks.md, helper klt3).
template <int PL, int Form, int HW>
__global__ void __launch_bounds__(128)
    trackFusedKernel(BatchView v, int prevSlot, int curSlot, int begin, int end, bool useAlive,
                     TrackParams p, float fbThresholdPx, float nccThreshold) {
  extern __shared__ float warpSlices[];
  trackFused<PL, Form, HW>(v, prevSlot, curSlot, begin, end, useAlive, p, fbThresholdPx,
                           nccThreshold, warpSlices);
}

// Explicit blocks a multiprocessor, which sets the register budget to 65536 / (128 MinBlocks)
// (ptxas of nvcc 13.0, sm_90, 21 x 21): MinBlocks = 1 lets the register and staged forms take
// 255 registers (8 warps a multiprocessor: faster within one wave, slower beyond); 4 caps the
// staged form at 128 (16 warps, 128 bytes of spill stores), 5 at 96 (20 warps, 350 bytes).
template <int PL, int Form, int HW, int MinBlocks>
__global__ void __launch_bounds__(128, MinBlocks)
    trackFusedBoundedKernel(BatchView v, int prevSlot, int curSlot, int begin, int end,
                            bool useAlive, TrackParams p, float fbThresholdPx, float nccThreshold) {
  extern __shared__ float warpSlices[];
  trackFused<PL, Form, HW>(v, prevSlot, curSlot, begin, end, useAlive, p, fbThresholdPx,
                           nccThreshold, warpSlices);
}

__global__ void checkKernel(BatchView v, int begin, int end, bool useAlive, float fbThresholdPx,
                            float nccThreshold) {
  const int seq = blockIdx.y;
  const int i = begin + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= trackLimit(v, end, useAlive, seq)) return;
  v.recordsOf(3, seq)[i] = checkTrack(v.recordsOf(0, seq)[i], v.recordsOf(1, seq)[i],
                                      v.recordsOf(2, seq)[i], fbThresholdPx, nccThreshold);
}

// ---------------------------------------------------------------------------------------------
// Selection

// The lambda_min map of level 0 and its maximum (eigMax must be zeroed before). The values
// are >= 0 and never -0, so the bits of a float order as unsigned integers and the maximum
// does not depend on the order of the atomics.
__global__ void eigenMapKernel(BatchView v, int slot, int blockSize, int halfWindow) {
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int seq = blockIdx.y;
  float e = 0.0f;
  if (p < v.pixels()) {
    const int x = static_cast<int>(p % v.width), y = static_cast<int>(p / v.width);
    e = minEigenPixel(v.gradOf(seq, slot), v.width, v.height, x, y, blockSize, halfWindow);
    v.eig[seq * v.pixels() + p] = e;
  }
  unsigned bits = e > 0.0f ? __float_as_uint(e) : 0u;
  for (int o = 16; o >= 1; o >>= 1) {
    const unsigned other = __shfl_xor_sync(kFullMask, bits, o);
    bits = other > bits ? other : bits;
  }
  if ((threadIdx.x & (kLanes - 1)) == 0 && bits != 0u) atomicMax(&v.eigMax[seq], bits);
}

// Counts the alive tracks of each cell (cellCount zeroed before).
__global__ void bucketCountKernel(BatchView v) {
  const int seq = blockIdx.y;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= v.alive[seq]) return;
  const TrackRecord r = v.recordsOf(0, seq)[i];
  const int c = cellOf(v.sel.grid, r.x, r.y);
  v.sel.trackCell[static_cast<std::int64_t>(seq) * v.capacity + i] = c;
  atomicAdd(&v.sel.cellCount[seq * v.sel.grid.count() + c], 1);
}

// Puts each alive track into its cell's bucket (the order inside a bucket does not matter to
// keepPick); cellCount counts down to 0 as a cursor.
__global__ void bucketScatterKernel(BatchView v) {
  const int seq = blockIdx.y;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= v.alive[seq]) return;
  const TrackRecord r = v.recordsOf(0, seq)[i];
  const int gc =
      seq * v.sel.grid.count() + v.sel.trackCell[static_cast<std::int64_t>(seq) * v.capacity + i];
  const int slot = v.sel.trackStart[gc] + atomicSub(&v.sel.cellCount[gc], 1) - 1;
  v.sel.trackXY[2 * slot] = r.x;
  v.sel.trackXY[2 * slot + 1] = r.y;
}

__global__ void selectCellKernel(BatchView v, float qualityLevel) {
  const int seq = blockIdx.y, cells = v.sel.grid.count();
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= cells) return;
  const int gc = seq * cells + c;
  const float threshold = qualityLevel * __uint_as_float(v.eigMax[seq]);
  const bool occupied = v.sel.trackStart[gc + 1] > v.sel.trackStart[gc];
  v.sel.picks[gc] =
      selectCell(v.eig + seq * v.pixels(), v.width, v.height, v.sel.grid, c, threshold, occupied);
}

// The sort key of a cell: sequence (bits 52..63), the complement of the score's bits
// (bits 20..51; larger scores first, no pick last) and the cell (bits 0..19; lower first on a
// tie), so an ascending sort puts each sequence's picks in pickStronger order.
__device__ inline std::uint64_t pickKey(int seq, float score, bool kept, int cell) {
  const std::uint32_t s = kept ? ~__float_as_uint(score) : 0xffffffffu;
  return (static_cast<std::uint64_t>(seq) << 52) | (static_cast<std::uint64_t>(s) << 20) |
         static_cast<std::uint64_t>(cell);
}

__global__ void keepPickKernel(BatchView v, float minDistancePx) {
  const int seq = blockIdx.y, cells = v.sel.grid.count();
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= cells) return;
  const int gc = seq * cells + c;
  const Pick pk = v.sel.picks[gc];
  const bool kept =
      pk.score > 0.0f && keepPick(v.sel.picks + seq * cells, v.sel.grid, c, minDistancePx,
                                  v.sel.trackStart + seq * cells, v.sel.trackXY);
  v.sel.keys[gc] = pickKey(seq, pk.score, kept, c);
  if (kept) atomicAdd(&v.sel.selected[seq], 1);
}

// From the sorted keys: take the `capacity - alive` strongest kept picks of each sequence.
__global__ void rankPickKernel(BatchView v) {
  const int cells = v.sel.grid.count();
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= static_cast<std::int64_t>(cells) * v.sequences) return;
  const std::uint64_t key = v.sel.sorted[j];
  const int seq = static_cast<int>(key >> 52);
  const int c = static_cast<int>(key & 0xfffffu);
  const bool kept = ((key >> 20) & 0xffffffffu) != 0xffffffffu;
  const std::int64_t rank = j - static_cast<std::int64_t>(seq) * cells;
  const int room = v.capacity - v.alive[seq];
  v.sel.take[seq * cells + c] = kept && rank < room ? 1 : 0;
}

// Appends the taken picks of each sequence in cell order after its alive seeds.
__global__ void compactPickKernel(BatchView v) {
  const int seq = blockIdx.y, cells = v.sel.grid.count();
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= cells) return;
  const int gc = seq * cells + c;
  const int first = v.sel.takePos[seq * cells];
  if (c == 0) v.sel.appended[seq] = v.sel.takePos[(seq + 1) * cells] - first;
  if (!v.sel.take[gc]) return;
  const Pick pk = v.sel.picks[gc];
  v.recordsOf(0, seq)[v.alive[seq] + v.sel.takePos[gc] - first] = seedRecord(pk.x, pk.y, pk.score);
}

}  // namespace vidmap::klt::cuda
