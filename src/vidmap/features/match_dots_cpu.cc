#include "vidmap/features/match_dots_cpu.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "vidmap/core/cpu_features.h"
#include "vidmap/core/parallel.h"
#include "vidmap/features/features.h"

namespace vidmap::features {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr int kD = kDescriptorSize;  // 128
constexpr int kPanel = 16;           // columns of B per panel: two AVX2 vectors
constexpr int kTileRows = 6;         // rows of A per tile: 12 accumulators + 2 of B + 1 of A

// The baseline: Eigen's product, as matcher.cc computed it before.
void eigenDots(const float* a, int na, const float* b, int nb, float* s) {
  Eigen::Map<const RowMatrix> A(a, na, kD);
  Eigen::Map<const RowMatrix> B(b, nb, kD);
  Eigen::Map<RowMatrix> S(s, na, nb);
  S.noalias() = A * B.transpose();
}

// The kernel replicates the order of Eigen's SSE2 kernel; a build that gives Eigen wider
// vectors or FMA (-march=...) has another order, and Eigen's own product is then vectorised.
#if defined(__AVX__) || defined(__FMA__)
constexpr bool kEigenIsSse2 = false;
#else
constexpr bool kEigenIsSse2 = true;
#endif

#if defined(__x86_64__) && defined(__GNUC__)
typedef float V8 __attribute__((vector_size(32)));

// R rows of A (row stride 128) against one packed panel: s[r][c] = sum over k in increasing
// order of a[r][k] b[c][k], starting from 0 as Eigen's accumulators do. c < cols are stored.
template <int R>
__attribute__((target("avx2"), always_inline)) inline void tile(const float* a, const float* panel,
                                                                float* s, long lds, int cols) {
  V8 acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = V8{};
  for (int k = 0; k < kD; ++k) {
    V8 b0, b1;
    std::memcpy(&b0, panel + k * kPanel, sizeof b0);
    std::memcpy(&b1, panel + k * kPanel + 8, sizeof b1);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const float x = a[r * kD + k];
      acc[r][0] = acc[r][0] + x * b0;
      acc[r][1] = acc[r][1] + x * b1;
    }
  }
  for (int r = 0; r < R; ++r) {
    float* row = s + r * lds;
    if (cols == kPanel) {
      std::memcpy(row, &acc[r][0], sizeof(V8));
      std::memcpy(row + 8, &acc[r][1], sizeof(V8));
    } else {
      float out[kPanel];
      std::memcpy(out, &acc[r][0], sizeof(V8));
      std::memcpy(out + 8, &acc[r][1], sizeof(V8));
      std::copy(out, out + cols, row);
    }
  }
}

__attribute__((target("avx2"))) void panelDots(const float* a, int na, const float* panel, float* s,
                                               long lds, int cols) {
  int i = 0;
  for (; i + kTileRows <= na; i += kTileRows)
    tile<kTileRows>(a + static_cast<long>(i) * kD, panel, s + i * lds, lds, cols);
  const float* ar = a + static_cast<long>(i) * kD;
  float* sr = s + i * lds;
  switch (na - i) {
    case 5:
      tile<5>(ar, panel, sr, lds, cols);
      break;
    case 4:
      tile<4>(ar, panel, sr, lds, cols);
      break;
    case 3:
      tile<3>(ar, panel, sr, lds, cols);
      break;
    case 2:
      tile<2>(ar, panel, sr, lds, cols);
      break;
    case 1:
      tile<1>(ar, panel, sr, lds, cols);
      break;
    default:
      break;
  }
}

typedef int I8 __attribute__((vector_size(32)));

__attribute__((target("avx2"), always_inline)) inline bool anyLane(I8 mask) {
  __m256i v;
  std::memcpy(&v, &mask, sizeof v);
  return !_mm256_testz_si256(v, v);
}

__attribute__((target("avx2"))) void scanRowAvx2(const float* s, float normA, const float* normB,
                                                 int j0, int j1, int i, Top2* t, float* cd,
                                                 int* ci) {
  const V8 na = V8{} + normA, zero = V8{};
  const I8 row = I8{} + i;
  int j = j0;
  for (; j + 8 <= j1; j += 8) {
    V8 dot, nb, c;
    I8 ic;
    std::memcpy(&dot, s + j, sizeof dot);
    std::memcpy(&nb, normB + j, sizeof nb);
    V8 d = (na + nb) - 2.0f * dot;  // squaredDistance, element by element
    d = d > zero ? d : zero;
    std::memcpy(&c, cd + j, sizeof c);
    const I8 nearer = d < c;
    if (anyLane(nearer)) {
      std::memcpy(&ic, ci + j, sizeof ic);
      c = nearer ? d : c;
      ic = nearer ? row : ic;
      std::memcpy(cd + j, &c, sizeof c);
      std::memcpy(ci + j, &ic, sizeof ic);
    }
    const I8 below = d < (V8{} + t->d2);
    if (anyLane(below))
      for (int l = 0; l < 8; ++l) top2Push(*t, d[l], j + l);
  }
  for (; j < j1; ++j) {
    const float d = squaredDistance(normA, normB[j], s[j]);
    top2Push(*t, d, j);
    if (d < cd[j]) cd[j] = d, ci[j] = i;
  }
}

// Four distances of squaredDistances128: each 8-wide accumulator is Eigen's even (lanes 0-3)
// and odd (lanes 4-7) packet accumulators, started from the first packets as Eigen's are.
__attribute__((target("avx2"))) void distances4(const float* a, const float* const b[4],
                                                float out[4]) {
  V8 acc[4];
  V8 x;
  std::memcpy(&x, a, sizeof x);
  for (int m = 0; m < 4; ++m) {
    V8 y;
    std::memcpy(&y, b[m], sizeof y);
    const V8 d = x - y;
    acc[m] = d * d;
  }
  for (int k = 8; k < kD; k += 8) {
    std::memcpy(&x, a + k, sizeof x);
    for (int m = 0; m < 4; ++m) {
      V8 y;
      std::memcpy(&y, b[m] + k, sizeof y);
      const V8 d = x - y;
      acc[m] = acc[m] + d * d;
    }
  }
  for (int m = 0; m < 4; ++m) {
    const float r0 = acc[m][0] + acc[m][4], r1 = acc[m][1] + acc[m][5];
    const float r2 = acc[m][2] + acc[m][6], r3 = acc[m][3] + acc[m][7];
    out[m] = (r0 + r2) + (r1 + r3);
  }
}

// The product of row i of A and row j >= nb8 of B in the order of Eigen's SSE2 kernel
// (GeneralBlockPanelKernel.h, 3.4): row j is in its one-packet block when j < nb4 = nb / 4 * 4,
// else among the last rows; column i (of its nr = 4 groups) is in a group of 4 when i < na / 4
// * 4, else among the remaining columns, which always sum in increasing k.
float tailDot(const float* a, const float* b, int i, int j, int na, int nb) {
  float c[4] = {0, 0, 0, 0};
  if (i >= na / 4 * 4) {
    for (int k = 0; k < kD; ++k) c[0] += a[k] * b[k];
    return c[0];
  }
  if (j < nb / 4 * 4) {  // even k in one accumulator, odd k in another (lhs_process_one_packet)
    for (int k = 0; k < kD; k += 2) c[0] += a[k] * b[k], c[1] += a[k + 1] * b[k + 1];
    return c[0] + c[1];
  }
  // k mod 4 in four accumulators, then (C0 + C1) + (C2 + C3) (the swapped last-rows path)
  for (int k = 0; k < kD; k += 4)
    for (int m = 0; m < 4; ++m) c[m] += a[k + m] * b[k + m];
  return (c[0] + c[1]) + (c[2] + c[3]);
}
#endif

}  // namespace

void scanRow(const float* s, float normA, const float* normB, int j0, int j1, int i, Top2* t,
             float* cd, int* ci, bool avx2) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (avx2 && cpuHasAvx2()) return scanRowAvx2(s, normA, normB, j0, j1, i, t, cd, ci);
#endif
  for (int j = j0; j < j1; ++j) {
    const float d = squaredDistance(normA, normB[j], s[j]);
    top2Push(*t, d, j);
    if (d < cd[j]) cd[j] = d, ci[j] = i;
  }
}

namespace {

float eigenDistance(const float* a, const float* b) {
  using V = Eigen::Matrix<float, kD, 1>;
  return (Eigen::Map<const V>(a) - Eigen::Map<const V>(b)).squaredNorm();
}

}  // namespace

void squaredDistances128(const float* a, const float* b, const int* pos, int n, float* out,
                         bool avx2) {
  int m = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if (kEigenIsSse2 && avx2 && cpuHasAvx2()) {
    for (; m + 4 <= n; m += 4) {
      const float* bs[4];
      for (int q = 0; q < 4; ++q) bs[q] = b + static_cast<long>(pos[m + q]) * kD;
      distances4(a, bs, out + m);
    }
    if (m < n) {  // the remainder padded with copies of its first row
      const float* bs[4];
      float o[4];
      for (int q = 0; q < 4; ++q)
        bs[q] = b + static_cast<long>(pos[m + std::min(q, n - m - 1)]) * kD;
      distances4(a, bs, o);
      std::copy(o, o + (n - m), out + m);
    }
    return;
  }
#endif
  for (; m < n; ++m) out[m] = eigenDistance(a, b + static_cast<long>(pos[m]) * kD);
}

std::vector<int> productRowBlocks(int na, int nb) {
  constexpr int kRows = 512, kMinRows = 192;
  constexpr long kBelowCap = (32L << 20) - (1L << 16);  // a margin for the allocator's header
  const long fit = kBelowCap / (static_cast<long>(sizeof(float)) * std::max(nb, 1));
  // Fewer rows re-read the packed B more often: past kMinRows, 512 as before.
  const int rows = fit >= kMinRows && fit < kRows ? static_cast<int>(fit) : kRows;
  const int alone = na % kRows == 1 ? 1 : 0;
  const int n = na - alone;
  std::vector<int> starts;
  for (int r0 = 0; r0 < n;) {
    int rb = std::min(rows, n - r0);
    if (n - r0 - rb == 1) --rb;  // leave two rows for the last block, not one
    starts.push_back(r0);
    r0 += rb;
  }
  if (alone) starts.push_back(n);
  starts.push_back(na);
  return starts;
}

DescriptorDots::DescriptorDots(const float* b, int nb, bool avx2) : b_(b), nb_(nb) {
  // Eigen's product has one column of B at nb = 1 (a matrix-vector product, another order);
  // below 16 rows there is nothing to gain.
  avx2_ = kEigenIsSse2 && avx2 && cpuHasAvx2() && nb >= 16;
  if (!avx2_) return;
  nb8_ = nb / 8 * 8;
  const int panels = (nb8_ + kPanel - 1) / kPanel;
  packed_.assign(static_cast<size_t>(panels) * kD * kPanel, 0.0f);
  parallelFor(panels, [&](std::int64_t p) {
    float* dst = packed_.data() + p * kD * kPanel;
    const int j0 = static_cast<int>(p) * kPanel, j1 = std::min(j0 + kPanel, nb8_);
    for (int j = j0; j < j1; ++j) {
      const float* row = b + static_cast<long>(j) * kD;
      for (int k = 0; k < kD; ++k) dst[k * kPanel + (j - j0)] = row[k];
    }
  });
}

void DescriptorDots::operator()(const float* a, int na, float* s) const {
  if (na <= 0 || nb_ <= 0) return;
#if defined(__x86_64__) && defined(__GNUC__)
  // One row of A is a matrix-vector product for Eigen (another order): Eigen's then.
  if (avx2_ && na >= 2) {
    const int panels = (nb8_ + kPanel - 1) / kPanel;
    parallelFor(panels, [&](std::int64_t p) {
      const int j0 = static_cast<int>(p) * kPanel;
      panelDots(a, na, packed_.data() + p * kD * kPanel, s + j0, nb_, std::min(kPanel, nb8_ - j0));
    });
    // The last nb mod 8 rows of B, summed as Eigen's kernel sums them there (header).
    for (int j = nb8_; j < nb_; ++j)  // at most 7 rows: serial
      for (int i = 0; i < na; ++i)
        s[static_cast<long>(i) * nb_ + j] =
            tailDot(a + static_cast<long>(i) * kD, b_ + static_cast<long>(j) * kD, i, j, na, nb_);
    return;
  }
#endif
  eigenDots(a, na, b_, nb_, s);
}

}  // namespace vidmap::features
