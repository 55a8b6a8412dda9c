// The per-pixel and per-keypoint arithmetic of SIFT, shared by the CPU backend (sift_cpu.cc,
// the oracle) and the CUDA backend (sift_cuda.cu). No CUDA types here.
//
// D. G. Lowe, "Distinctive Image Features from Scale-Invariant Keypoints", IJCV 60(2), 2004,
// in the conventions of VLFeat's vl_sift (A. Vedaldi, B. Fulkerson, 2008) as COLMAP uses it:
// octave o holds S + 3 Gaussian levels g_i of blur sigma0 * 2^(i/S) (octave pixels), DoG levels
// d_i = g_{i+1} - g_i (i = 0..S+1), extrema in d_1..d_S; the orientation histogram and the
// descriptor read the gradient of g_i at the keypoint's level i. Borders are clamped.
#pragma once

#include <cmath>
#include <cstring>

#include "vidmap/core/hd.h"
#include "vidmap/core/image.h"

namespace vidmap::features {

inline constexpr int kGaussMaxRadius = 128;  // enough for sigma 4 at 1 scale per octave
inline constexpr int kSiftBorder = 5;        // octave pixels ignored at the border (as OpenCV)
inline constexpr int kOrientationBins = 36;
inline constexpr int kRefineIterations = 5;
inline constexpr float kTwoPi = 6.283185307179586f;

// A symmetric 1D Gaussian: w[0] at the centre, w[i] at offsets +-i, i <= radius.
struct GaussKernel {
  float w[kGaussMaxRadius + 1];
  int radius;
};

VIDMAP_HD inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// ---- Elementary functions ----------------------------------------------------------------
// Polynomial forms with no library call, so that the CPU loops vectorise and both backends
// evaluate the same arithmetic (bit for bit with -fmad=false).

VIDMAP_HD inline float bitsToFloat(int i) {
#if defined(VIDMAP_ON_DEVICE)
  return __int_as_float(i);
#else
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
#endif
}

// e^x for x <= 0 (weights of Gaussian windows): 2^(x log2 e) with the fraction's power from its
// Taylor polynomial of degree 6; relative error < 1e-5 (float rounding of x log2 e). Returns 0
// below e^-87.
// Without a branch (integer selects), so that a CPU loop over it vectorises (GCC's AVX2 build
// of a loop over a float select here does not); the values of a branch that returned 0 early.
VIDMAP_HD inline float expNeg(float x) {
  const float t0 = x * 1.44269504f;
  const bool under = !(t0 > -126.0f);
  const float t = under ? 0.0f : t0;  // keeps the conversion below in range
  int i = static_cast<int>(t);
  i -= t < static_cast<float>(i) ? 1 : 0;  // floor
  const float f = t - static_cast<float>(i);
  const float p =
      1.0f + f * (0.693147181f +
                  f * (0.240226507f +
                       f * (0.0555041087f +
                            f * (0.00961812911f + f * (0.00133335581f + f * 0.000154035304f)))));
  return p * bitsToFloat(under ? 0 : (i + 127) << 23);  // p in [1, 2): p * 0 = 0
}

// atan2(y, x) in [0, 2 pi): an odd minimax polynomial of degree 11 for atan on [0, 1] and the
// octant symmetries; absolute error < 1e-5 rad (the orientation bins are 0.17 rad wide).
VIDMAP_HD inline float atan2Positive(float y, float x) {
  const float ax = fabsf(x), ay = fabsf(y);
  const float mx = ax > ay ? ax : ay, mn = ax > ay ? ay : ax;
  const float t = mn / (mx > 0 ? mx : 1.0f);  // 0 / 1 at the origin
  const float s = t * t;
  float r =
      t * (0.99997726f +
           s * (-0.33262347f +
                s * (0.19354346f + s * (-0.11643287f + s * (0.05265332f + s * -0.01172120f)))));
  r = ay > ax ? 1.57079637f - r : r;
  r = x < 0 ? 3.14159274f - r : r;
  r = y < 0 ? kTwoPi - r : r;
  return r >= kTwoPi ? 0.0f : r;
}

// ---- Scale space -------------------------------------------------------------------------

// The 2x upsampled image of the first octave -1 at (x, y): bilinear, with pixel x of the input
// at 2x of the output (VLFeat's copy_and_upsample).
VIDMAP_HD inline float upsampleAt(ImageView<const float> in, int x, int y) {
  int x0 = x >> 1, y0 = y >> 1;
  int x1 = x0 + (x & 1), y1 = y0 + (y & 1);
  x1 = x1 < in.width ? x1 : in.width - 1;
  y1 = y1 < in.height ? y1 : in.height - 1;
  float top = 0.5f * (in(x0, y0) + in(x1, y0));
  float bottom = 0.5f * (in(x0, y1) + in(x1, y1));
  return 0.5f * (top + bottom);
}

// Every second pixel: the base of octave o + 1 from level S of octave o.
VIDMAP_HD inline float downsampleAt(ImageView<const float> in, int x, int y) {
  return in(2 * x, 2 * y);
}

// One tap sum of the separable Gaussian. The order of the additions is the definition the
// CUDA kernels repeat: acc = w0 * c, then acc += w_i * (left_i + right_i) for i = 1..r.
VIDMAP_HD inline float blurRowAt(ImageView<const float> in, int x, int y, const GaussKernel& k) {
  const float* row = in.data + static_cast<long>(y) * in.stride;
  float acc = k.w[0] * row[x];
  const int last = in.width - 1;
  if (x - k.radius >= 0 && x + k.radius <= last) {
    for (int i = 1; i <= k.radius; ++i) acc += k.w[i] * (row[x - i] + row[x + i]);
  } else {
    for (int i = 1; i <= k.radius; ++i)
      acc += k.w[i] * (row[clampi(x - i, 0, last)] + row[clampi(x + i, 0, last)]);
  }
  return acc;
}

VIDMAP_HD inline float blurColAt(ImageView<const float> in, int x, int y, const GaussKernel& k) {
  const float* col = in.data + x;
  const long s = in.stride;
  float acc = k.w[0] * col[y * s];
  const int last = in.height - 1;
  if (y - k.radius >= 0 && y + k.radius <= last) {
    for (int i = 1; i <= k.radius; ++i) acc += k.w[i] * (col[(y - i) * s] + col[(y + i) * s]);
  } else {
    for (int i = 1; i <= k.radius; ++i)
      acc += k.w[i] * (col[clampi(y - i, 0, last) * s] + col[clampi(y + i, 0, last) * s]);
  }
  return acc;
}

// Gradient of a Gaussian level by central differences (clamped at the border): magnitude and
// angle in [0, 2 pi). Precomputed per level so that the orientation and the descriptor of
// overlapping keypoints do not repeat the atan2.
struct Gradient {
  float mag;
  float angle;
};

// From the differences right - left and down - up.
VIDMAP_HD inline Gradient gradientFromDifferences(float dx, float dy) {
  const float gx = 0.5f * dx, gy = 0.5f * dy;
  return {sqrtf(gx * gx + gy * gy), atan2Positive(gy, gx)};
}

VIDMAP_HD inline Gradient gradientAt(ImageView<const float> g, int x, int y) {
  int xm = x > 0 ? x - 1 : 0, xp = x < g.width - 1 ? x + 1 : g.width - 1;
  int ym = y > 0 ? y - 1 : 0, yp = y < g.height - 1 ? y + 1 : g.height - 1;
  return gradientFromDifferences(g(xp, y) - g(xm, y), g(x, yp) - g(x, ym));
}

// ---- Detection ---------------------------------------------------------------------------

// The DoG levels of one octave, level after level in one buffer.
struct DogOctave {
  const float* data;
  int width, height, stride;
  int levels;  // S + 2
  VIDMAP_HD float at(int s, int x, int y) const {
    return data[(static_cast<long>(s) * height + y) * stride + x];
  }
};

// A strict local extremum of the 3x3x3 neighbourhood in DoG level s (1 <= s <= S) with
// |value| >= prefilter (VLFeat's 0.8 * peak threshold). The caller keeps (x, y) >= 1 from the
// border.
VIDMAP_HD inline bool isExtremum(const DogOctave& d, int s, int x, int y, float prefilter) {
  const long plane = static_cast<long>(d.height) * d.stride;
  const float* c = d.data + s * plane + static_cast<long>(y) * d.stride + x;
  const float v = *c;
  if (!(v >= prefilter || v <= -prefilter)) return false;  // also rejects NaN
  const long st = d.stride;
  if (v > 0) {
    for (int ds = -1; ds <= 1; ++ds)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (ds == 0 && dy == 0 && dx == 0) continue;
          if (!(v > c[ds * plane + dy * st + dx])) return false;
        }
  } else {
    for (int ds = -1; ds <= 1; ++ds)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (ds == 0 && dy == 0 && dx == 0) continue;
          if (!(v < c[ds * plane + dy * st + dx])) return false;
        }
  }
  return true;
}

// A refined extremum in octave coordinates.
struct Extremum {
  float x, y, s;  // sub-pixel position, DoG level with sub-level offset
  float value;    // D at the refined position (signed)
  int level;      // integer DoG level at which it converged (1..S); reads Gaussian g_level
  int xi, yi;     // integer sample at which it converged
};

// Solves the symmetric 3x3 system H b = -g by Cramer's rule; false when H is singular.
VIDMAP_HD inline bool solve3(const float H[6], const float g[3], float b[3]) {
  // H = [a d e; d b f; e f c] stored as {a, b, c, d, e, f}.
  const float a = H[0], bb = H[1], c = H[2], d = H[3], e = H[4], f = H[5];
  const float c00 = bb * c - f * f, c01 = e * f - d * c, c02 = d * f - bb * e;
  const float det = a * c00 + d * c01 + e * c02;
  if (!(fabsf(det) > 1e-30f)) return false;
  const float c11 = a * c - e * e, c12 = d * e - a * f, c22 = a * bb - d * d;
  const float inv = -1.0f / det;
  b[0] = inv * (c00 * g[0] + c01 * g[1] + c02 * g[2]);
  b[1] = inv * (c01 * g[0] + c11 * g[1] + c12 * g[2]);
  b[2] = inv * (c02 * g[0] + c12 * g[1] + c22 * g[2]);
  return true;
}

// Lowe's sub-pixel and sub-scale refinement (section 4): fit a quadratic to D at (x, y, s),
// move by the rounded offset while any component exceeds 0.5 (at most kRefineIterations
// times), then apply the contrast test |D(x^)| >= peak and the edge test on the 2x2 Hessian.
// Returns false when the point is rejected or leaves [border, size - border) or [1, S].
VIDMAP_HD inline bool refineExtremum(const DogOctave& d, int x, int y, int s, int scales,
                                     float peak, float edgeRatio, Extremum* out) {
  float g[3], H[6], b[3];
  float v = 0;
  bool converged = false;
  for (int it = 0; it < kRefineIterations; ++it) {
    v = d.at(s, x, y);
    g[0] = 0.5f * (d.at(s, x + 1, y) - d.at(s, x - 1, y));
    g[1] = 0.5f * (d.at(s, x, y + 1) - d.at(s, x, y - 1));
    g[2] = 0.5f * (d.at(s + 1, x, y) - d.at(s - 1, x, y));
    H[0] = d.at(s, x + 1, y) + d.at(s, x - 1, y) - 2.0f * v;
    H[1] = d.at(s, x, y + 1) + d.at(s, x, y - 1) - 2.0f * v;
    H[2] = d.at(s + 1, x, y) + d.at(s - 1, x, y) - 2.0f * v;
    H[3] = 0.25f * (d.at(s, x + 1, y + 1) - d.at(s, x - 1, y + 1) - d.at(s, x + 1, y - 1) +
                    d.at(s, x - 1, y - 1));
    H[4] = 0.25f * (d.at(s + 1, x + 1, y) - d.at(s + 1, x - 1, y) - d.at(s - 1, x + 1, y) +
                    d.at(s - 1, x - 1, y));
    H[5] = 0.25f * (d.at(s + 1, x, y + 1) - d.at(s + 1, x, y - 1) - d.at(s - 1, x, y + 1) +
                    d.at(s - 1, x, y - 1));
    if (!solve3(H, g, b)) return false;
    if (fabsf(b[0]) < 0.5f && fabsf(b[1]) < 0.5f && fabsf(b[2]) < 0.5f) {
      converged = true;
      break;
    }
    if (!(fabsf(b[0]) < 1e4f && fabsf(b[1]) < 1e4f && fabsf(b[2]) < 1e4f)) return false;
    x += static_cast<int>(floorf(b[0] + 0.5f));
    y += static_cast<int>(floorf(b[1] + 0.5f));
    s += static_cast<int>(floorf(b[2] + 0.5f));
    if (s < 1 || s > scales || x < kSiftBorder || x >= d.width - kSiftBorder || y < kSiftBorder ||
        y >= d.height - kSiftBorder)
      return false;
  }
  if (!converged) return false;
  const float value = v + 0.5f * (g[0] * b[0] + g[1] * b[1] + g[2] * b[2]);
  if (!(fabsf(value) >= peak)) return false;
  const float tr = H[0] + H[1];
  const float det = H[0] * H[1] - H[3] * H[3];
  const float r1 = edgeRatio + 1.0f;
  if (!(det > 0) || !(tr * tr * edgeRatio < r1 * r1 * det)) return false;
  out->x = static_cast<float>(x) + b[0];
  out->y = static_cast<float>(y) + b[1];
  out->s = static_cast<float>(s) + b[2];
  out->value = value;
  out->level = s;
  out->xi = x;
  out->yi = y;
  return true;
}

// A detected point with one orientation, before its descriptor: the unit both backends pass
// from detection to description.
struct SiftPoint {
  float x, y, s;    // octave coordinates, DoG level coordinate
  float value;      // signed D(x^)
  float sigma;      // scale in octave pixels
  float angle;      // orientation, radians
  int level;        // integer level: reads the gradient of Gaussian level `level`
  int octaveIndex;  // index into the plan's octaves
};

// Sigma of a point at DoG level coordinate s (with its sub-level offset), octave pixels:
// sigma0 2^(s / S). The power in double, rounded once to float, so that the host's and the
// device's results agree (their exp2f round differently in the last bit).
VIDMAP_HD inline float keypointSigmaAt(float sigma0, int scales, float s) {
  return sigma0 * static_cast<float>(exp2(static_cast<double>(s / static_cast<float>(scales))));
}

// cos and sin of an orientation, in double and rounded once, for the same reason.
VIDMAP_HD inline void angleCosSin(float angle, float* c, float* s) {
  *c = static_cast<float>(cos(static_cast<double>(angle)));
  *s = static_cast<float>(sin(static_cast<double>(angle)));
}

// The order in which points are kept (sift_select.h): strongest |value| first; ties by octave,
// level, y, x and angle, so the order does not depend on the order of detection.
VIDMAP_HD inline bool strongerPoint(const SiftPoint& a, const SiftPoint& b) {
  const float ra = fabsf(a.value), rb = fabsf(b.value);
  if (ra != rb) return ra > rb;
  if (a.octaveIndex != b.octaveIndex) return a.octaveIndex < b.octaveIndex;
  if (a.level != b.level) return a.level < b.level;
  if (a.y != b.y) return a.y < b.y;
  if (a.x != b.x) return a.x < b.x;
  return a.angle < b.angle;
}

// ---- Orientation -------------------------------------------------------------------------

// The gradient of Gaussian level `level` of an octave: (mag, angle) pairs, row-major.
struct GradientLevel {
  const Gradient* data;
  int width, height, stride;
  VIDMAP_HD const Gradient& at(int x, int y) const {
    return data[static_cast<long>(y) * stride + x];
  }
};

// Lowe's orientation histogram (section 5) as VLFeat computes it: 36 bins over a disc of
// radius 3 * 1.5 sigma, Gaussian weight of sigma 1.5 sigma, magnitude split linearly between
// the two nearest bins (bin i is centred at (i + 0.5) * 10 degrees). x, y, sigma in octave
// units. The window and its pixels are separate so that a warp can share one window's pixels
// among its lanes (sift_cuda.cu); the CPU adds them in row-major order.
struct OrientationWindow {
  float x, y;
  int xi, yi, W;
  float limit;  // r^2 below which a pixel counts
  float norm;   // -1 / (2 sigma_w^2)
};

VIDMAP_HD inline OrientationWindow orientationWindow(float x, float y, float sigma) {
  OrientationWindow w;
  const float sigmaw = 1.5f * sigma;
  const int r = static_cast<int>(floorf(3.0f * sigmaw));
  w.x = x;
  w.y = y;
  w.W = r > 1 ? r : 1;
  w.xi = static_cast<int>(floorf(x + 0.5f));
  w.yi = static_cast<int>(floorf(y + 0.5f));
  w.limit = static_cast<float>(w.W * w.W) + 0.6f;
  w.norm = -1.0f / (2.0f * sigmaw * sigmaw);
  return w;
}

// Adds the pixel at (xi + dx, yi + dy), |dx|, |dy| <= W, to hist.
VIDMAP_HD inline void orientationPixel(const GradientLevel& gl, const OrientationWindow& w, int dx,
                                       int dy, float* hist) {
  const int px = w.xi + dx, py = w.yi + dy;
  if (px < 1 || px > gl.width - 2 || py < 1 || py > gl.height - 2) return;
  const float rx = static_cast<float>(px) - w.x, ry = static_cast<float>(py) - w.y;
  const float r2 = rx * rx + ry * ry;
  if (r2 >= w.limit) return;
  const Gradient gr = gl.at(px, py);
  const float wgt = expNeg(r2 * w.norm) * gr.mag;
  const float fbin = kOrientationBins * gr.angle * (1.0f / kTwoPi);
  const int bin = static_cast<int>(floorf(fbin - 0.5f));
  const float rbin = fbin - static_cast<float>(bin) - 0.5f;
  hist[(bin + kOrientationBins) % kOrientationBins] += (1.0f - rbin) * wgt;
  hist[(bin + 1) % kOrientationBins] += rbin * wgt;
}

VIDMAP_HD inline void orientationHistogram(const GradientLevel& gl, float x, float y, float sigma,
                                           float hist[kOrientationBins]) {
  for (int i = 0; i < kOrientationBins; ++i) hist[i] = 0;
  const OrientationWindow w = orientationWindow(x, y, sigma);
  for (int dy = -w.W; dy <= w.W; ++dy)
    for (int dx = -w.W; dx <= w.W; ++dx) orientationPixel(gl, w, dx, dy, hist);
}

// Six passes of the circular box filter [1 1 1] / 3 (VLFeat).
VIDMAP_HD inline void smoothHistogram(float hist[kOrientationBins]) {
  for (int iter = 0; iter < 6; ++iter) {
    const float first = hist[0];
    float prev = hist[kOrientationBins - 1];
    for (int i = 0; i < kOrientationBins; ++i) {
      const float cur = hist[i];
      const float next = i + 1 < kOrientationBins ? hist[i + 1] : first;
      hist[i] = (prev + cur + next) / 3.0f;
      prev = cur;
    }
  }
}

// The peaks of the smoothed histogram that reach 0.8 of its maximum, strongest first (ties:
// lower bin first), at most maxOut, each refined by a parabola through the three bins.
// Returns the number written to angles (radians in [0, 2 pi)).
VIDMAP_HD inline int orientationPeaks(const float hist[kOrientationBins], int maxOut,
                                      float* angles) {
  float maxh = 0;
  for (int i = 0; i < kOrientationBins; ++i) maxh = hist[i] > maxh ? hist[i] : maxh;
  if (!(maxh > 0)) return 0;
  float peakValue[4];
  int n = 0;
  for (int i = 0; i < kOrientationBins; ++i) {
    const float h0 = hist[i];
    const float hm = hist[(i + kOrientationBins - 1) % kOrientationBins];
    const float hp = hist[(i + 1) % kOrientationBins];
    if (!(h0 > 0.8f * maxh && h0 > hm && h0 > hp)) continue;
    const float di = -0.5f * (hp - hm) / (hp + hm - 2.0f * h0);
    float th = kTwoPi * (static_cast<float>(i) + di + 0.5f) / kOrientationBins;
    if (th >= kTwoPi) th -= kTwoPi;
    if (th < 0) th += kTwoPi;
    // Insert by strength (stable for equal strengths), keep at most maxOut.
    int pos = n;
    while (pos > 0 && peakValue[pos - 1] < h0) --pos;
    if (pos >= maxOut) continue;
    const int end = n < maxOut ? n : maxOut - 1;
    for (int j = end; j > pos; --j) {
      peakValue[j] = peakValue[j - 1];
      angles[j] = angles[j - 1];
    }
    peakValue[pos] = h0;
    angles[pos] = th;
    if (n < maxOut) ++n;
  }
  return n;
}

// ---- Descriptor --------------------------------------------------------------------------

// Lowe's 4x4x8 descriptor (section 6) as VLFeat computes it: spatial bins of 3 sigma, a square
// window of half-size floor(sqrt(2) * 3 sigma * 5 / 2 + 0.5) pixels, Gaussian weight of sigma
// 2 bins, each gradient split trilinearly over (row bin, column bin, orientation bin). x, y,
// sigma in octave units; ct, st: cos and sin of the orientation from angleCosSin (the device's
// sinf/cosf round differently from the host's). As for the orientation, window and pixel
// are separate so that a warp can share the pixels of one window.
struct DescriptorWindow {
  float x, y, angle, ct, st, invSbp;
  int xi, yi, W;
};

VIDMAP_HD inline DescriptorWindow descriptorWindow(float x, float y, float sigma, float angle,
                                                   float ct, float st) {
  DescriptorWindow w;
  const float sbp = 3.0f * sigma;
  // VLFeat's window half-size, cut to the bounding box of the rotated 5 x 5 bin square (the
  // pixels outside it add nothing).
  int W = static_cast<int>(floorf(1.41421356f * sbp * 2.5f + 0.5f));
  const int tight = static_cast<int>(2.5f * sbp * (fabsf(ct) + fabsf(st)) + 0.5f) + 1;
  w.W = tight < W ? tight : W;
  w.x = x;
  w.y = y;
  w.angle = angle;
  w.ct = ct;
  w.st = st;
  w.invSbp = 1.0f / sbp;
  w.xi = static_cast<int>(floorf(x + 0.5f));
  w.yi = static_cast<int>(floorf(y + 0.5f));
  return w;
}

// Adds the pixel at (xi + dx, yi + dy) to the 128 bins of desc.
// The trilinear spread of one pixel's weight over the 4 x 4 x 8 bins: the bin below (bx, by,
// bt) and the fractions past it (rx, ry, rt), from the position nx, ny and the orientation nt
// in bins.
VIDMAP_HD inline void descriptorAdd(float mod, float nx, float ny, float nt, float* desc) {
  const int bx = static_cast<int>(floorf(nx - 0.5f));
  const int by = static_cast<int>(floorf(ny - 0.5f));
  const int bt = static_cast<int>(floorf(nt));
  const float rx_ = nx - (static_cast<float>(bx) + 0.5f);
  const float ry_ = ny - (static_cast<float>(by) + 0.5f);
  const float rt = nt - static_cast<float>(bt);
  for (int dby = 0; dby < 2; ++dby) {
    const int iy = by + dby + 2;
    if (iy < 0 || iy >= 4) continue;
    const float wy = dby ? ry_ : 1.0f - ry_;
    for (int dbx = 0; dbx < 2; ++dbx) {
      const int ix = bx + dbx + 2;
      if (ix < 0 || ix >= 4) continue;
      const float wxy = wy * (dbx ? rx_ : 1.0f - rx_) * mod;
      const int base = (iy * 4 + ix) * 8;
      desc[base + (bt & 7)] += wxy * (1.0f - rt);
      desc[base + ((bt + 1) & 7)] += wxy * rt;
    }
  }
}

VIDMAP_HD inline void descriptorPixel(const GradientLevel& gl, const DescriptorWindow& w, int dx,
                                      int dy, float* desc) {
  const int px = w.xi + dx, py = w.yi + dy;
  if (px < 1 || px > gl.width - 2 || py < 1 || py > gl.height - 2) return;
  const float rx = static_cast<float>(px) - w.x, ry = static_cast<float>(py) - w.y;
  // Position in the keypoint frame, in bins; bin centres at -1.5, -0.5, 0.5, 1.5.
  const float nx = (w.ct * rx + w.st * ry) * w.invSbp;
  const float ny = (-w.st * rx + w.ct * ry) * w.invSbp;
  if (!(nx > -2.5f && nx < 2.5f && ny > -2.5f && ny < 2.5f)) return;
  const Gradient gr = gl.at(px, py);
  float theta = gr.angle - w.angle;
  if (theta < 0) theta += kTwoPi;
  if (theta >= kTwoPi) theta -= kTwoPi;
  const float nt = 8.0f * theta * (1.0f / kTwoPi);
  const float win = expNeg((nx * nx + ny * ny) * (-1.0f / 8.0f));  // window sigma = 2 bins
  descriptorAdd(gr.mag * win, nx, ny, nt, desc);
}

// The columns dx of row dy that can fall inside the rotated 5 x 5 bin square, widened by one
// pixel on each side so that float rounding never drops a pixel (descriptorPixel still tests
// each one): a loop bound only, it changes no result.
VIDMAP_HD inline void descriptorRowSpan(const DescriptorWindow& w, int dy, int* lo, int* hi) {
  const float R = 2.5f / w.invSbp;
  const float ry = static_cast<float>(w.yi + dy) - w.y;
  float a = -1e30f, b = 1e30f;
  // |ct rx + st ry| < R and |-st rx + ct ry| < R, each an interval of rx unless its
  // coefficient vanishes.
  const float coef[2] = {w.ct, -w.st}, off[2] = {w.st * ry, w.ct * ry};
  for (int k = 0; k < 2; ++k) {
    if (fabsf(coef[k]) < 1e-4f) continue;
    float u = (-R - off[k]) / coef[k], v = (R - off[k]) / coef[k];
    if (u > v) {
      const float t = u;
      u = v;
      v = t;
    }
    a = u > a ? u : a;
    b = v < b ? v : b;
  }
  const float base = w.x - static_cast<float>(w.xi);  // dx = rx + base
  const float l = floorf(a + base) - 1.0f, h = ceilf(b + base) + 1.0f;
  *lo = l > static_cast<float>(-w.W) ? static_cast<int>(l) : -w.W;
  *hi = h < static_cast<float>(w.W) ? static_cast<int>(h) : w.W;
}

// The unnormalised descriptor: the window's pixels in row-major order.
VIDMAP_HD inline void describeKeypoint(const GradientLevel& gl, float x, float y, float sigma,
                                       float angle, float ct, float st, float desc[128]) {
  for (int i = 0; i < 128; ++i) desc[i] = 0;
  const DescriptorWindow w = descriptorWindow(x, y, sigma, angle, ct, st);
  for (int dy = -w.W; dy <= w.W; ++dy) {
    int lo, hi;
    descriptorRowSpan(w, dy, &lo, &hi);
    for (int dx = lo; dx <= hi; ++dx) descriptorPixel(gl, w, dx, dy, desc);
  }
}

// L2 normalisation, clamp at 0.2, L2 again; then RootSIFT when l1root: L1 normalisation and
// the square root (the result has unit L2 norm). An all-zero descriptor stays zero.
VIDMAP_HD inline void normalizeDescriptor(float desc[128], bool l1root) {
  float n2 = 0;
  for (int i = 0; i < 128; ++i) n2 += desc[i] * desc[i];
  if (!(n2 > 0)) return;
  float inv = 1.0f / sqrtf(n2);
  n2 = 0;
  for (int i = 0; i < 128; ++i) {
    float v = desc[i] * inv;
    v = v < 0.2f ? v : 0.2f;
    desc[i] = v;
    n2 += v * v;
  }
  inv = 1.0f / sqrtf(n2);
  for (int i = 0; i < 128; ++i) desc[i] *= inv;
  if (!l1root) return;
  float n1 = 0;
  for (int i = 0; i < 128; ++i) n1 += desc[i];
  inv = 1.0f / n1;
  for (int i = 0; i < 128; ++i) desc[i] = sqrtf(desc[i] * inv);
}

// ---- Per point ---------------------------------------------------------------------------

// The orientations from a raw histogram (smoothed here): up to maxOut copies of p with their
// angles, strongest first. Returns the number written.
VIDMAP_HD inline int orientFromHistogram(float hist[kOrientationBins], const SiftPoint& p,
                                         int maxOut, SiftPoint* out) {
  float angles[4] = {0, 0, 0, 0};
  smoothHistogram(hist);
  const int k = orientationPeaks(hist, maxOut, angles);
  for (int j = 0; j < k; ++j) {
    out[j] = p;
    out[j].angle = angles[j];
  }
  return k;
}

// The orientations of a detected point (sigma filled); one copy at angle 0 when upright.
VIDMAP_HD inline int orientPoint(const GradientLevel& gl, const SiftPoint& p, int maxOut,
                                 bool upright, SiftPoint* out) {
  if (upright) {
    out[0] = p;
    out[0].angle = 0;
    return 1;
  }
  float hist[kOrientationBins];
  orientationHistogram(gl, p.x, p.y, p.sigma, hist);
  return orientFromHistogram(hist, p, maxOut, out);
}

}  // namespace vidmap::features
