// The host side of the CUDA matcher (match_cuda.cu), with no CUDA types: cuBLAS SGEMM of the
// descriptors and a fused top-2 kernel. Compiled only when the build has CUDA.
#pragma once

#include <cstdint>
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
  // deviceA: the query's descriptors on the device (p.a is then not read); deviceB: one per
  // segment, its descriptors on the device or null (then read from p.b). The GEMM and the
  // kernels see the same floats either way, so the matches are the same. Pointers from
  // resident() come with their kept norms; other device pointers get theirs computed.
  std::vector<std::vector<Match>> match(const MatchProblem& p, const MatchOptions& options,
                                        float* gpuMilliseconds = nullptr,
                                        const float* deviceA = nullptr,
                                        const std::vector<const float*>& deviceB = {});

  // The store of device-resident descriptors (Matcher::keepOnDevice): f's descriptors copied
  // from deviceDescriptors (device memory of any context, complete when called) or uploaded,
  // with their norms (match() then skips that kernel for them); at most capacity entries, the
  // oldest evicted; entries whose features are gone are dropped.
  void keep(const std::shared_ptr<const Features>& f, const float* deviceDescriptors, int capacity);
  // f's descriptors on the device when f is kept (and still has as many), else null.
  const float* resident(const Features& f) const;
  // Descriptor bytes uploaded by match() and keep() so far.
  std::int64_t uploadedBytes() const;

  // Where the wall time of the last match() went (docs/benchmarks.md, match30), when
  // setBreakdown(true): host milliseconds from entry to the first GPU work queued (setup), to the
  // last queued (enqueue), in the stream synchronisation (wait), and after it (finish: the
  // matches copied out, or the host's decisions); CUDA-event milliseconds of the GEMM, the row
  // top-2, the columns' nearest rows (0 when the distance matrix takes several row blocks) and
  // the decisions with the read-back.
  struct Breakdown {
    double setupMs = 0, enqueueMs = 0, waitMs = 0, finishMs = 0;
    float gemmMs = 0, rowTop2Ms = 0, colBestMs = 0, decideMs = 0;
  };
  void setBreakdown(bool on);
  const Breakdown& lastBreakdown() const;
  // true: read the row top-2 and the columns' nearest rows back and decide on the host
  // (decideMatches), the former path, kept as the reference of the device's decisions in tests
  // and benchmarks; false (default): decide on the device.
  void setHostDecision(bool on);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vidmap::features
