// The per-row and per-pair arithmetic of descriptor matching, shared by the CPU matcher
// (matcher.cc, the oracle) and the CUDA matcher (match_cuda.cu). No CUDA types here.
//
// Distances come from the matrix product of the descriptors: |a - b|^2 = |a|^2 + |b|^2 - 2 a.b
// (the product is the GEMM of either backend). Ties go to the lower index.
#pragma once

#include <cmath>

#include "vidmap/core/hd.h"

namespace vidmap::features {

inline constexpr float kNoDistance = 3.4e38f;

// |d|^2 of one descriptor, summed in index order on both backends.
VIDMAP_HD inline float descriptorSquaredNorm(const float* d) {
  float s = 0;
  for (int i = 0; i < 128; ++i) s += d[i] * d[i];
  return s;
}

VIDMAP_HD inline float squaredDistance(float normA, float normB, float dot) {
  const float d = normA + normB - 2.0f * dot;
  return d > 0 ? d : 0.0f;
}

// The two smallest squared distances of a row (or column) and the index of the smallest.
struct Top2 {
  float d1 = kNoDistance;
  float d2 = kNoDistance;
  int j1 = -1;
};

// Visits candidate j at squared distance d. Visiting in increasing j keeps the lowest index
// among equal smallest distances.
VIDMAP_HD inline void top2Push(Top2& t, float d, int j) {
  if (d < t.d1 || (d == t.d1 && j < t.j1)) {
    t.d2 = t.d1;
    t.d1 = d;
    t.j1 = j;
  } else if (d < t.d2) {
    t.d2 = d;
  }
}

// The top-2 of the union of two disjoint candidate sets (a reduction step of the GPU).
VIDMAP_HD inline Top2 top2Merge(const Top2& a, const Top2& b) {
  Top2 r;
  const bool aFirst = a.d1 < b.d1 || (a.d1 == b.d1 && a.j1 >= 0 && (b.j1 < 0 || a.j1 < b.j1));
  const Top2& w = aFirst ? a : b;
  const Top2& l = aFirst ? b : a;
  r.d1 = w.d1;
  r.j1 = w.j1;
  r.d2 = w.d2 < l.d1 ? w.d2 : l.d1;
  return r;
}

// Lowe's ratio test on distances (not squared) and the optional absolute limit: accepts the
// best candidate when d1 < ratio d2 and d1 <= maxDistance (maxDistance <= 0: no limit). A row
// with one candidate passes the ratio test.
VIDMAP_HD inline bool acceptBest(const Top2& t, float ratio, float maxDistance) {
  if (t.j1 < 0) return false;
  if (!(t.d2 >= kNoDistance) && !(t.d1 < ratio * ratio * t.d2)) return false;
  if (maxDistance > 0 && !(t.d1 <= maxDistance * maxDistance)) return false;
  return true;
}

// The whole decision on row i's best candidate in one image (Top2 t over that image's columns):
// acceptBest, then with mutual that the column's nearest row (colBest, over all rows of A) is
// i. Both backends' last step (decideMatches on the host, kDecide on the device).
VIDMAP_HD inline bool isMatch(const Top2& t, const int* colBest, int i, float ratio,
                              float maxDistance, bool mutual) {
  return acceptBest(t, ratio, maxDistance) && (!mutual || colBest[t.j1] == i);
}

// Distance of a pair (point a in image A, point b in image B) from the epipolar geometry
// x_b^T F x_a = 0, F row-major, in pixels.
//   sampson: the first-order geometric (Sampson) distance, sqrt of
//            (x_b^T F x_a)^2 / ((F x_a)_1^2 + (F x_a)_2^2 + (F^T x_b)_1^2 + (F^T x_b)_2^2);
//   otherwise the distance of b from the epipolar line F x_a.
VIDMAP_HD inline double epipolarDistance(const double F[9], double xa, double ya, double xb,
                                         double yb, bool sampson) {
  const double l0 = F[0] * xa + F[1] * ya + F[2];
  const double l1 = F[3] * xa + F[4] * ya + F[5];
  const double l2 = F[6] * xa + F[7] * ya + F[8];
  const double e = xb * l0 + yb * l1 + l2;
  if (!sampson) {
    const double n = l0 * l0 + l1 * l1;
    return n > 0 ? fabs(e) / sqrt(n) : 1e300;
  }
  const double m0 = F[0] * xb + F[3] * yb + F[6];
  const double m1 = F[1] * xb + F[4] * yb + F[7];
  const double n = l0 * l0 + l1 * l1 + m0 * m0 + m1 * m1;
  return n > 0 ? fabs(e) / sqrt(n) : 1e300;
}

}  // namespace vidmap::features
