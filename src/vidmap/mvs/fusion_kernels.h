// The per-pixel test of fusion (fusion.h), shared by the CPU (the oracle, fusion.cc) and the
// CUDA kernel (fusion_cuda.cu): for a pixel of the reference with a depth, the pixel of each
// source that agrees with it (COLMAP's stereo_fusion tests: the source pixel the point
// projects to has a depth within a relative error of the point's, the source point
// reprojects into the reference within a pixel error, the normals differ by less than an
// angle). A pure function of the depth and normal maps; in double precision, every sum and
// product written out in one order, so the CUDA build (fusion_cuda.cu is compiled with
// -fmad=false) gives the CPU's result bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "vidmap/core/hd.h"
#include "vidmap/mvs/patch_match_kernels.h"

namespace vidmap::mvs {

struct FuCamera {
  double fx = 0, fy = 0, cx = 0, cy = 0;
};

// One source of a reference: the relative pose both ways (x_s = A x_r + b, x_r = Ai x_s +
// bi, row-major), its camera and its maps (depth; normal as three planes of width * height;
// host or device addresses). depth == nullptr: the source has no map.
struct FuSource {
  double A[9], b[3], Ai[9], bi[3];
  FuCamera K;
  const float* depth = nullptr;
  const float* normal = nullptr;
  int width = 0, height = 0;
};

struct FuParams {
  FuCamera K;  // the reference's camera
  const float* depth = nullptr;
  const float* normal = nullptr;
  int width = 0, height = 0;
  int numSources = 0;
  int minPixels = 3;
  double maxDepthError = 0.01, maxReproj2 = 4, cosMax = 0.98;
  FuSource src[kMaxSources];
};

// y = M x + t, each row summed left to right.
VIDMAP_HD inline void fuAffine(const double* M, const double* x, const double* t, double* y) {
  for (int i = 0; i < 3; ++i)
    y[i] = M[3 * i] * x[0] + M[3 * i + 1] * x[1] + M[3 * i + 2] * x[2] + t[i];
}

// The agreeing source pixel of reference pixel (x, y) per source, or -1, into q; returns how
// many agree. The pixel must have a depth (> 0).
VIDMAP_HD inline int fuMatchPixel(const FuParams& P, int x, int y, std::int32_t* q) {
  const std::int64_t np = static_cast<std::int64_t>(P.width) * P.height;
  const std::int64_t p = static_cast<std::int64_t>(y) * P.width + x;
  const double d = P.depth[p];
  const double X[3] = {(x - P.K.cx) / P.K.fx * d, (y - P.K.cy) / P.K.fy * d, d};
  const double N[3] = {P.normal[p], P.normal[np + p], P.normal[2 * np + p]};
  int agree = 0;
  for (int k = 0; k < P.numSources; ++k) {
    q[k] = -1;
    const FuSource& S = P.src[k];
    if (!S.depth) continue;
    double xs[3];
    fuAffine(S.A, X, S.b, xs);
    if (!(xs[2] > 0)) continue;
    // The bounds are tested in double: a point far off the image (or a NaN) converted to int
    // first would be undefined, and the CPU and the GPU convert such values differently.
    const double uf = floor(S.K.fx * xs[0] / xs[2] + S.K.cx + 0.5);
    const double vf = floor(S.K.fy * xs[1] / xs[2] + S.K.cy + 0.5);
    if (!(uf >= 0 && vf >= 0 && uf < S.width && vf < S.height)) continue;
    const int u = static_cast<int>(uf), v = static_cast<int>(vf);
    const std::int64_t qs = static_cast<std::int64_t>(v) * S.width + u;
    const double ds = S.depth[qs];
    if (!(ds > 0)) continue;
    if (fabs(ds - xs[2]) > P.maxDepthError * xs[2]) continue;
    const double Xs[3] = {(u - S.K.cx) / S.K.fx * ds, (v - S.K.cy) / S.K.fy * ds, ds};
    double back[3];
    fuAffine(S.Ai, Xs, S.bi, back);
    if (!(back[2] > 0)) continue;
    const double eu = P.K.fx * back[0] / back[2] + P.K.cx - x;
    const double ev = P.K.fy * back[1] / back[2] + P.K.cy - y;
    if (eu * eu + ev * ev > P.maxReproj2) continue;
    // The reference normal in the source's frame against the source's normal.
    const std::int64_t nps = static_cast<std::int64_t>(S.width) * S.height;
    const double* A = S.A;
    const double m0 = A[0] * N[0] + A[1] * N[1] + A[2] * N[2];
    const double m1 = A[3] * N[0] + A[4] * N[1] + A[5] * N[2];
    const double m2 = A[6] * N[0] + A[7] * N[1] + A[8] * N[2];
    const double dot = S.normal[qs] * m0 + S.normal[nps + qs] * m1 + S.normal[2 * nps + qs] * m2;
    if (dot < P.cosMax) continue;
    q[k] = static_cast<std::int32_t>(qs);
    ++agree;
  }
  return agree;
}

}  // namespace vidmap::mvs
