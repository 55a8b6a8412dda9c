// The host side of the CUDA matcher (match_cuda.cu), with no CUDA types: cuBLAS SGEMM of the
// descriptors and a fused top-2 kernel. Compiled only when the build has CUDA.
#pragma once

#include <memory>
#include <vector>

#include "vidmap/features/matcher.h"
#include "vidmap/gpu/context.h"

namespace vidmap::features {

class MatchCuda {
 public:
  // Runs on ctx's device and stream; kernel times go to ctx.profiler() ("match_*").
  explicit MatchCuda(const gpu::Context& ctx);
  ~MatchCuda();
  // Same contract as matchCpu. gpuMilliseconds: CUDA-event time of the GEMM and the
  // selection kernels (not the transfers), when not null.
  std::vector<std::vector<Match>> match(const MatchProblem& p, const MatchOptions& options,
                                        float* gpuMilliseconds = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::features
