// The block reduction both CUDA scorers end with (score_cuda.cu, score_batch_cuda.cu): each
// thread's MSAC cost and inlier count summed by warp shuffles, then by thread 0 over the warps
// in warp order, so a block's partial does not depend on which kernel computed it.
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

}  // namespace vidmap::geometry
