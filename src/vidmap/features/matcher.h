// Descriptor matching: for each descriptor of A the two nearest of B by L2 distance, Lowe's
// ratio test, a mutual (cross) check and an optional distance limit; plain, or guided by the
// epipolar geometry of the pair (only candidates within a band of the epipolar line count),
// and one query image against N earlier images in one call (one matrix product).
//
// CPU: an Eigen float matrix product of the descriptors and a top-2 scan (the oracle).
// CUDA: a cuBLAS SGEMM and a fused top-2 kernel. Both use match_kernels.h.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "vidmap/core/check.h"
#include "vidmap/features/features.h"
#include "vidmap/features/match_kernels.h"
#include "vidmap/features/sift_options.h"
#include "vidmap/gpu/context.h"

namespace vidmap::features {

struct Match {
  int a = -1;          // index in the query (A)
  int b = -1;          // index in the other image (B)
  float distance = 0;  // L2 distance of the descriptors
};

struct MatchOptions {
  float ratio = 0.8f;     // keep the nearest when d1 < ratio * d2
  bool mutual = true;     // and when A's descriptor is also the nearest of B's (among A)
  float maxDistance = 0;  // and when d1 <= maxDistance; 0 = no limit
  Backend backend = Backend::kAuto;

  void check() const {
    checkRange("match.ratio", ratio, 0.0f, 1.0f);
    checkRange("match.maxDistance", maxDistance, 0.0f, 1e6f);
  }
};

// The epipolar geometry a guided match respects: x_b^T F x_a = 0 with pixel coordinates
// (keypoint x, y) of A and B; only pairs within bandPx of it are candidates, for the ratio
// test and the mutual check alike.
struct EpipolarGuide {
  std::array<double, 9> F{};  // row-major
  double bandPx = 4.0;
  bool sampson = true;  // Sampson distance; false: distance of b from the line F x_a

  // F = Kb^-T E Ka^-1 for x_b^T E x_a = 0 in normalised coordinates (row-major 3x3 each).
  static EpipolarGuide fromEssential(const std::array<double, 9>& E,
                                     const std::array<double, 9>& Ka,
                                     const std::array<double, 9>& Kb, double bandPx,
                                     bool sampson = true);
  void check() const;
};

class MatchCuda;

class Matcher {
 public:
  // Backend::kAuto takes CUDA when a device is present; the CUDA matcher runs on ctx when
  // given, else on a context of its own for device 0.
  explicit Matcher(const MatchOptions& options = {}, const gpu::Context* ctx = nullptr);
  ~Matcher();
  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;

  // Plain matching of a against b, ordered by a.
  std::vector<Match> match(const Features& a, const Features& b);
  // Guided matching of a against b.
  std::vector<Match> matchGuided(const Features& a, const Features& b, const EpipolarGuide& guide);
  // The query against each of refs in one call; guides is empty (plain) or one per ref.
  // maxFeatures > 0: only the first maxFeatures features of the query and of each ref take part
  // (SIFT orders them strongest first), with indices as in the whole lists.
  std::vector<std::vector<Match>> matchMany(const Features& query,
                                            const std::vector<const Features*>& refs,
                                            const std::vector<EpipolarGuide>& guides = {},
                                            int maxFeatures = 0);

  // Device-resident descriptors (CUDA backend; the CPU backend ignores these): keeps a device
  // copy of f's descriptors, copied device to device from deviceDescriptors when given (f.size()
  // x 128 floats, e.g. Sift::deviceDescriptors() right after the extract() that made f), else
  // uploaded once. The match calls then read f's descriptors there instead of uploading them,
  // with the same matches. At most residentCapacity features are kept, the oldest evicted;
  // keeping f again replaces its copy; an entry is dropped when f is destroyed. f's descriptors
  // must not change while it is kept.
  void keepOnDevice(const std::shared_ptr<const Features>& f,
                    const float* deviceDescriptors = nullptr);
  // Default 8; 0 keeps none.
  void setResidentCapacity(int n);
  // Whether the match calls read f's descriptors from the device.
  bool onDevice(const Features& f) const;
  // Descriptor bytes the CUDA backend has uploaded so far (0 on the CPU).
  std::int64_t uploadedDescriptorBytes() const;

  Backend backend() const { return backend_; }
  const MatchOptions& options() const { return options_; }

 private:
  MatchOptions options_;
  int residentCapacity_ = 8;
  Backend backend_ = Backend::kCpu;
  std::unique_ptr<MatchCuda> cuda_;
};

// The problem both backends solve: A against the concatenation of segments of B.
struct MatchProblem {
  const float* a = nullptr;  // na x 128, row-major
  int na = 0;
  const float* b = nullptr;  // nb x 128, the segments one after another
  int nb = 0;
  std::vector<int> segments;             // offsets into b, size = segment count + 1
  const Keypoint* keypointsA = nullptr;  // for guides
  const Keypoint* keypointsB = nullptr;
  const EpipolarGuide* guides = nullptr;  // one per segment, or null (plain)
};

// The CPU oracle: one match list per segment, b indices relative to the segment.
std::vector<std::vector<Match>> matchCpu(const MatchProblem& p, const MatchOptions& options);
// Its guided path (p.guides set): only the pairs inside the band are compared
// (match_guided_cpu.cc).
std::vector<std::vector<Match>> matchGuidedCpu(const MatchProblem& p, const MatchOptions& options);

// The decisions both backends take from the row top-2 (na x segments, row-major) and the
// nearest row of each column: ratio, distance limit, mutual check.
std::vector<std::vector<Match>> decideMatches(const std::vector<Top2>& rowTop,
                                              const std::vector<int>& colBest,
                                              const std::vector<int>& segments, int na,
                                              const MatchOptions& options);

}  // namespace vidmap::features
