// The descriptor products of plain CPU matching, S = A B^T (|a - b|^2 = |a|^2 + |b|^2 - 2 a.b,
// match_kernels.h), on AVX2 where the CPU has it, equal bit for bit to the Eigen float product
// the baseline x86-64 build computes.
//
// Why equal: the build has no FMA (-ffp-contract=off, no -march) and Eigen 3.4's SSE2 GEMM
// (GeneralBlockPanelKernel.h, mr = 8, nr = 4, the whole depth of 128 in one block) sums each
// dot product a_0 b_0 + a_1 b_1 + ... in increasing k, one rounded product and one rounded sum
// at a time, for every row of B in a complete group of 8 (B is its kernel's left-hand side: S
// is row-major). The last nb mod 8 rows of B go through paths that split the sum (even and odd
// k; k mod 4): those few rows are summed in those orders here (tailDot). The AVX2 kernel sums
// in increasing k for eight columns of B at a time;
// only the width differs. The test (match_test.cc, Match.AvxDotsEqualEigenBitForBit) holds the
// claim against Eigen's product on sizes with every remainder. A build with -march=... (AVX or
// FMA for Eigen) keeps Eigen's product.
#pragma once

#include <vector>

#include "vidmap/features/match_kernels.h"

namespace vidmap::features {

// B's descriptors packed for the products of many rows of A.
class DescriptorDots {
 public:
  // b: nb x 128, row-major, kept by pointer (it must outlive this object). avx2 = false, or a
  // CPU without AVX2, or a B too small to gain: Eigen's product for every row.
  DescriptorDots(const float* b, int nb, bool avx2);

  // s (na x nb, row-major) = a (na x 128, row-major) b^T.
  void operator()(const float* a, int na, float* s) const;

  bool usesAvx2() const { return avx2_; }

 private:
  const float* b_;
  int nb_;
  int nb8_ = 0;  // rows of B in complete groups of 8: the AVX2 kernel's
  bool avx2_ = false;
  std::vector<float> packed_;  // 16-column panels of B^T, k-major (128 x 16 each), zero-padded
};

// The row blocks of plain CPU matching's product (each block, rows x nb floats, is written out
// and then scanned): the starts of the blocks over [0, na), then na. 512 rows; fewer (down to
// 192) where 512 rows of nb columns would reach 32 MiB, glibc's cap for its mapping
// threshold (cli/main.cc): a block that large is mapped afresh at every allocation and faulted
// in page by page (1835 x 32768, one thread: 0.52 s a call with 512 rows, 0.20 s with 255;
// docs/benchmarks.md, "CPU path: the serial wall of fr1-rpy at all frames"). A row alone in its
// block takes Eigen's one-row product, which sums in another order, so a row is alone exactly
// where 512-row blocks leave one (the last row, when na = 1 mod 512): the same products
// whatever the size of the blocks.
std::vector<int> productRowBlocks(int na, int nb);

// One row i of the product over B's columns [j0, j1): each column's squaredDistance, pushed
// into the row's top-2 t in increasing j (top2Push), and the nearest row so far of each column
// (cd, ci: replaced by i where strictly nearer; rows come in increasing order). With avx2 on a
// CPU that has it, eight columns at a time: the same distances element by element, the
// columns' minima by a blend, and top2Push for the lanes of a group only when one of them is
// below t's second distance (the others would change nothing): the same t, cd and ci.
void scanRow(const float* s, float normA, const float* normB, int j0, int j1, int i, Top2* t,
             float* cd, int* ci, bool avx2);

// Squared distances out[m] = |a - b_m|^2 of one descriptor a against the descriptors b_m = b +
// pos[m] * 128, m < n, equal bit for bit to Eigen's (a - b_m).squaredNorm() in the baseline build
// (what guided matching computed before). Eigen 3.4 does not unroll the 128-float reduction
// (Redux.h, LinearVectorizedTraversal without complete unrolling): two SSE2 accumulators, the
// even 4-float packets summed into one and the odd into the other in increasing order, then
// their sum, then (l0 + l2) + (l1 + l3) of its lanes (predux). An AVX2 vector of 8 floats holds
// packets 2k and 2k + 1 in its halves, so one 8-wide accumulator is those two; with avx2 on a CPU
// that has it, four distances at a time. Match.AvxGuidedDistancesEqualEigenBitForBit holds it.
void squaredDistances128(const float* a, const float* b, const int* pos, int n, float* out,
                         bool avx2);

}  // namespace vidmap::features
