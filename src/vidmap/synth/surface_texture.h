// The procedural texture painted on each face of a synthetic 3D scene: a colour albedo as a
// function of the face's metric coordinates (s, t), rich at every scale so that corner
// (KLT) and blob (SIFT) detectors find features from near and far:
//   - fBm of gradient noise (the quintic fade of Perlin, "Improving noise", SIGGRAPH 2002;
//     random gradients as in Perlin, "An image synthesizer", SIGGRAPH 1985), 7 octaves,
//   - a checkerboard, axis-aligned on the face,
//   - Gaussian blobs scattered one per cell of a jittered grid,
//   - flat rectangles one per cell of a second grid (L-shaped corners),
//   - a low-frequency colour tint between two colours.
// Every term can be prefiltered by the pixel footprint, so a render does not alias: the
// checker and rectangles are box-filtered exactly (integral of the square wave / the clamped
// ramp), blobs are convolved with a Gaussian (variances add), and each noise octave is
// attenuated by the Gaussian's response at its frequency (frequency clamping, Norton,
// Rockwood & Skolmoski, SIGGRAPH 1982). A footprint of 0 gives the exact point value.
//
// Deterministic: integer hashing of lattice cells (lowbias32, C. Wellons) seeded per face.
#pragma once

#include <cmath>
#include <cstdint>

#include "vidmap/core/hd.h"
#include "vidmap/synth/vec3.h"

namespace vidmap::synth {

struct SurfaceTexture {
  std::uint32_t seed = 1;
  Vec3 tintA{1, 1, 1};  // the two colours the tint noise blends, components in [0, 1]
  Vec3 tintB{1, 1, 1};
  double shade = 1;              // view-independent brightness of the face (fixed light)
  double noiseWavelength = 0.8;  // metres, the coarsest octave
  int noiseOctaves = 6;          // each next octave halves the wavelength
  double noiseAmp = 0.22;
  double checkerPeriod = 0.3;  // metres, one black and one white square
  double checkerAmp = 0.1;
  double blobCell = 0.12;  // metres
  double blobAmp = 0.35;
  double rectCell = 0.35;  // metres
  double rectAmp = 0.22;
};

// Box widths of the pixel footprint along s and t, in metres (0 = point sample).
struct Footprint {
  double ws = 0;
  double wt = 0;
};

VIDMAP_HD inline std::uint32_t hashU32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

VIDMAP_HD inline std::uint32_t hashCell(std::int64_t i, std::int64_t j, std::uint32_t seed) {
  std::uint32_t hj = hashU32(static_cast<std::uint32_t>(j) ^ (seed * 0x85ebca77U));
  return hashU32(static_cast<std::uint32_t>(i) * 0x9e3779b1U ^ hj);
}

// A uniform number in [0, 1) from the high 24 bits of a hash.
VIDMAP_HD inline double unitFromHash(std::uint32_t h) { return (h >> 8) * (1.0 / 16777216.0); }

VIDMAP_HD inline double clamp01(double v) { return v < 0 ? 0 : (v > 1 ? 1 : v); }

// floor() without a library call (the x86-64 baseline has no rounding instruction).
VIDMAP_HD inline double floorFast(double x) {
  double f = static_cast<double>(static_cast<std::int64_t>(x));
  return f - (f > x ? 1.0 : 0.0);
}

// The gradient of a lattice corner from its hash, dotted with (dx, dy): a random vector in
// [-1, 1]^2 (Perlin's original, "An image synthesizer", SIGGRAPH 1985), chosen without
// branches so that random corners cost no mispredictions.
VIDMAP_HD inline double cornerGradient(std::uint32_t h, double dx, double dy) {
  double gx = static_cast<double>(static_cast<int>(h & 0xffffU) - 32768) * (1.0 / 32768.0);
  double gy = static_cast<double>(static_cast<int>(h >> 16) - 32768) * (1.0 / 32768.0);
  return gx * dx + gy * dy;
}

// 2D gradient noise on the unit lattice with the quintic fade, in about [-1, 1].
VIDMAP_HD inline double gradientNoise(double x, double y, std::uint32_t seed) {
  double fx0 = floorFast(x), fy0 = floorFast(y);
  std::uint32_t ix = static_cast<std::uint32_t>(static_cast<std::int64_t>(fx0));
  std::uint32_t iy = static_cast<std::uint32_t>(static_cast<std::int64_t>(fy0));
  double fx = x - fx0, fy = y - fy0;
  // hashCell(i, j, seed) with the row hashes shared by the two corners of a row.
  std::uint32_t r0 = hashU32(iy ^ (seed * 0x85ebca77U));
  std::uint32_t r1 = hashU32((iy + 1U) ^ (seed * 0x85ebca77U));
  std::uint32_t c0 = ix * 0x9e3779b1U, c1 = (ix + 1U) * 0x9e3779b1U;
  double n00 = cornerGradient(hashU32(c0 ^ r0), fx, fy);
  double n10 = cornerGradient(hashU32(c1 ^ r0), fx - 1, fy);
  double n01 = cornerGradient(hashU32(c0 ^ r1), fx, fy - 1);
  double n11 = cornerGradient(hashU32(c1 ^ r1), fx - 1, fy - 1);
  double u = fx * fx * fx * (fx * (fx * 6 - 15) + 10);
  double v = fy * fy * fy * (fy * (fy * 6 - 15) + 10);
  double a = n00 + (n10 - n00) * u;
  double b = n01 + (n11 - n01) * u;
  return 1.75 * (a + (b - a) * v);
}

// fBm with frequency clamping: octave k (wavelength lambda) is weighted by exp(-2 pi^2
// sigma^2 / lambda^2), the response of a Gaussian of variance sigma2 at frequency 1/lambda.
// Octaves are turned by the 3-4-5 rotation so the lattices do not line up.
VIDMAP_HD inline double fbm(double s, double t, double wavelength, int octaves, double gain,
                            double sigma2, std::uint32_t seed) {
  double x = s / wavelength, y = t / wavelength;
  double amp = 1, sum = 0, norm = 0;
  // The attenuation of octave k + 1 is that of octave k to the 4th power (half wavelength).
  double att = exp(-19.739208802178716 * sigma2 / (wavelength * wavelength));
  for (int k = 0; k < octaves; ++k) {
    norm += amp;
    if (att > 1e-2) {  // below: less than 0.1 grey level
      sum += amp * att * gradientNoise(x + 17.31 * k, y - 5.77 * k, seed + 101U * k);
      att *= att;
      att *= att;
    }
    double nx = 0.8 * x - 0.6 * y, ny = 0.6 * x + 0.8 * y;
    x = 2 * nx;
    y = 2 * ny;
    amp *= gain;
  }
  return sum / norm;
}

// The integral from 0 to x of the square wave of period 2 that is +1 on [0, 1).
VIDMAP_HD inline double squareWaveIntegral(double x) {
  double f = x * 0.5 - floorFast(x * 0.5);
  return 1 - fabs(2 * f - 1);
}

// The square wave (period 2, in units of half periods) box-filtered over width w.
VIDMAP_HD inline double filteredSquareWave(double x, double w) {
  if (w < 1e-9) return (x * 0.5 - floorFast(x * 0.5)) < 0.5 ? 1.0 : -1.0;
  return (squareWaveIntegral(x + 0.5 * w) - squareWaveIntegral(x - 0.5 * w)) / w;
}

// The step x >= 0 box-filtered over width w.
VIDMAP_HD inline double filteredStep(double x, double w) {
  if (w < 1e-12) return x >= 0 ? 1.0 : 0.0;
  return clamp01(x / w + 0.5);
}

VIDMAP_HD inline double blobField(const SurfaceTexture& tx, double s, double t, double sigma2f) {
  const double c = tx.blobCell;
  double fs = floorFast(s / c), ft = floorFast(t / c);
  std::int64_t ci = static_cast<std::int64_t>(fs), cj = static_cast<std::int64_t>(ft);
  // Blob centres lie in [0.25, 0.75] of their cell and sigma <= 0.15 cell: a cell whose
  // centre box is farther than 3.5 of the widest blurred sigmas adds less than 0.1 / 255.
  double reach = 3.5 * sqrt(0.0225 * c * c + sigma2f);
  double sum = 0;
  for (int dj = -1; dj <= 1; ++dj) {
    double lo = (ft + dj + 0.25) * c, hi = (ft + dj + 0.75) * c;
    if (t < lo - reach || t > hi + reach) continue;
    for (int di = -1; di <= 1; ++di) {
      double los = (fs + di + 0.25) * c, his = (fs + di + 0.75) * c;
      if (s < los - reach || s > his + reach) continue;
      std::uint32_t h = hashCell(ci + di, cj + dj, tx.seed ^ 0xb10b5eedU);
      if (unitFromHash(h) > 0.75) continue;
      std::uint32_t h2 = hashU32(h), h3 = hashU32(h2);
      double bx = (fs + di + 0.25 + 0.5 * ((h2 & 0xffffU) * (1.0 / 65536.0))) * c;
      double by = (ft + dj + 0.25 + 0.5 * ((h2 >> 16) * (1.0 / 65536.0))) * c;
      double sigma = c * (0.06 + 0.09 * ((h3 & 0xffffU) * (1.0 / 65536.0)));
      double sigma2 = sigma * sigma, total = sigma2 + sigma2f;
      double d2 = (s - bx) * (s - bx) + (t - by) * (t - by);
      if (d2 > 12.25 * total) continue;
      double amp = tx.blobAmp * (0.6 + 0.4 * ((h3 >> 17) * (1.0 / 32768.0)));
      if (h3 & 0x10000U) amp = -amp;
      sum += amp * (sigma2 / total) * exp(-0.5 * d2 / total);
    }
  }
  return sum;
}

VIDMAP_HD inline double rectField(const SurfaceTexture& tx, double s, double t, Footprint fp) {
  const double c = tx.rectCell;
  double fs = floorFast(s / c), ft = floorFast(t / c);
  std::int64_t ci = static_cast<std::int64_t>(fs), cj = static_cast<std::int64_t>(ft);
  double sum = 0;
  for (int dj = -1; dj <= 1; ++dj) {
    // A rectangle lies in [0.05, 1] of its cell; the filter reaches half a width beyond.
    if (t < (ft + dj + 0.05) * c - 0.5 * fp.wt || t > (ft + dj + 1) * c + 0.5 * fp.wt) continue;
    for (int di = -1; di <= 1; ++di) {
      if (s < (fs + di + 0.05) * c - 0.5 * fp.ws || s > (fs + di + 1) * c + 0.5 * fp.ws) continue;
      std::uint32_t h = hashCell(ci + di, cj + dj, tx.seed ^ 0x5ec7a9e1U);
      if (unitFromHash(h) > 0.55) continue;
      std::uint32_t h2 = hashU32(h), h3 = hashU32(h2), h4 = hashU32(h3);
      // Origin in [0.05, 0.5] and size in [0.2, 0.5] of the cell: cells never overlap.
      double x0 = (fs + di + 0.05 + 0.45 * ((h2 & 0xffffU) * (1.0 / 65536.0))) * c;
      double y0 = (ft + dj + 0.05 + 0.45 * ((h2 >> 16) * (1.0 / 65536.0))) * c;
      double x1 = x0 + (0.2 + 0.3 * ((h3 & 0xffffU) * (1.0 / 65536.0))) * c;
      double y1 = y0 + (0.2 + 0.3 * ((h3 >> 16) * (1.0 / 65536.0))) * c;
      double cx = filteredStep(s - x0, fp.ws) - filteredStep(s - x1, fp.ws);
      if (cx <= 0) continue;
      double cy = filteredStep(t - y0, fp.wt) - filteredStep(t - y1, fp.wt);
      if (cy <= 0) continue;
      double amp = tx.rectAmp * (0.5 + 0.5 * ((h4 >> 9) * (1.0 / 8388608.0)));
      if (h4 & 1U) amp = -amp;
      sum += amp * cx * cy;
    }
  }
  return sum;
}

// The albedo (linear RGB in [0, 1], shade applied) at (s, t) filtered by the footprint.
VIDMAP_HD inline Vec3 evalSurfaceTexture(const SurfaceTexture& tx, double s, double t,
                                         Footprint fp) {
  // The Gaussian with the variance of the footprint's box (w^2 / 12 per axis, averaged).
  double sigma2f = (fp.ws * fp.ws + fp.wt * fp.wt) / 24.0;
  double lum = 0.5;
  lum += tx.noiseAmp * fbm(s, t, tx.noiseWavelength, tx.noiseOctaves, 0.7, sigma2f, tx.seed);
  double half = 0.5 * tx.checkerPeriod;
  lum += tx.checkerAmp * filteredSquareWave(s / half, fp.ws / half) *
         filteredSquareWave(t / half, fp.wt / half);
  lum += blobField(tx, s, t, sigma2f);
  lum += rectField(tx, s, t, fp);
  lum = lum < 0.03 ? 0.03 : (lum > 0.97 ? 0.97 : lum);
  double mixw =
      clamp01(0.5 + 1.2 * fbm(s, t, 2.5 * tx.noiseWavelength, 1, 0.5, sigma2f, tx.seed ^ 0xc0105U));
  Vec3 tint = lerp(tx.tintA, tx.tintB, mixw);
  Vec3 c = tint * (lum * tx.shade);
  return {clamp01(c.x), clamp01(c.y), clamp01(c.z)};
}

}  // namespace vidmap::synth
