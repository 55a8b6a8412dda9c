// The two reductions both CUDA scorers end with (score_cuda.cu, score_batch_cuda.cu): each
// thread's MSAC cost and inlier count summed by warp shuffles, then by thread 0 over the warps
// in warp order; then one thread per hypothesis adds its blocks' partials in block order. A
// score thus does not depend on which scorer computed it.
#pragma once

namespace vidmap::geometry {

// Every thread of the block must call it (no early return before). Returns the block's sums
// in thread 0 (other threads: unspecified). kThreads: the block's size, a multiple of 32.
template <int kThreads>
__device__ inline void blockSumCostInliers(double cost, int inl, double* blockCost, int* blockInl) {
  __shared__ double warp_cost[kThreads / 32];
  __shared__ int warp_inl[kThreads / 32];
  for (int off = 16; off > 0; off >>= 1) {
    cost += __shfl_xor_sync(0xffffffffu, cost, off);
    inl += __shfl_xor_sync(0xffffffffu, inl, off);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_cost[warp] = cost;
    warp_inl[warp] = inl;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double c = 0;
    int n = 0;
    for (int w = 0; w < kThreads / 32; ++w) {
      c += warp_cost[w];
      n += warp_inl[w];
    }
    *blockCost = c;
    *blockInl = n;
  }
}

// One thread per hypothesis h < count: the sum of its `blocks` partials (row h of
// partialCost / partialInl, blocks wide) in block order, written to out[h] as {cost, inliers}.
// Score: an aggregate of a double and an int (HypothesisScore).
template <class Score>
__global__ void sumPartials(int count, int blocks, const double* partialCost, const int* partialInl,
                            Score* out) {
  const int h = blockIdx.x * blockDim.x + threadIdx.x;
  if (h >= count) return;
  double c = 0;
  int n = 0;
  for (int b = 0; b < blocks; ++b) {
    c += partialCost[static_cast<long>(h) * blocks + b];
    n += partialInl[static_cast<long>(h) * blocks + b];
  }
  out[h] = {c, n};
}

}  // namespace vidmap::geometry
