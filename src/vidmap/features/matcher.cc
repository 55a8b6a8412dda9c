#include "vidmap/features/matcher.h"

#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/features/match_dots_cpu.h"
#include "vidmap/features/match_kernels.h"
#include "vidmap/features/sift.h"
#if VIDMAP_HAVE_CUDA
#include "vidmap/features/match_cuda.h"
#endif

namespace vidmap::features {

#if !VIDMAP_HAVE_CUDA
class MatchCuda {};
#endif

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void checkFeatures(const Features& f, const char* name) {
  if (f.descriptors.size() != f.keypoints.size() * kDescriptorSize)
    throw Error(std::string("match: features ") + name + " have " +
                std::to_string(f.keypoints.size()) + " keypoints but " +
                std::to_string(f.descriptors.size()) + " descriptor values (need 128 each)");
}

}  // namespace

EpipolarGuide EpipolarGuide::fromEssential(const std::array<double, 9>& E,
                                           const std::array<double, 9>& Ka,
                                           const std::array<double, 9>& Kb, double bandPx,
                                           bool sampson) {
  using M3 = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;
  const M3 e(E.data()), ka(Ka.data()), kb(Kb.data());
  require(std::abs(ka.determinant()) > 0 && std::abs(kb.determinant()) > 0,
          "match: guide intrinsics are singular");
  const M3 f = kb.inverse().transpose() * e * ka.inverse();
  EpipolarGuide g;
  std::copy(f.data(), f.data() + 9, g.F.begin());
  g.bandPx = bandPx;
  g.sampson = sampson;
  return g;
}

void EpipolarGuide::check() const {
  checkRange("guide.bandPx", bandPx, 0.0, 1e6);
  for (double v : F)
    if (!std::isfinite(v)) throw Error("match: guide F has a non-finite entry");
}

std::vector<std::vector<Match>> matchCpu(const MatchProblem& p, const MatchOptions& o) {
  if (p.guides) return matchGuidedCpu(p, o);
  const int nseg = static_cast<int>(p.segments.size()) - 1;
  std::vector<std::vector<Match>> out(std::max(nseg, 0));
  if (nseg <= 0 || p.na == 0 || p.nb == 0) return out;
  std::vector<float> normA(p.na), normB(p.nb);
  parallelFor(p.na, [&](std::int64_t i) { normA[i] = descriptorSquaredNorm(p.a + i * 128); });
  parallelFor(p.nb, [&](std::int64_t j) { normB[j] = descriptorSquaredNorm(p.b + j * 128); });

  const DescriptorDots dots(p.b, p.nb, o.cpuAvx2);
  std::vector<Top2> rowTop(static_cast<size_t>(p.na) * nseg);
  std::vector<float> colD(p.nb, kNoDistance);
  std::vector<int> colI(p.nb, -1);
  RowMatrix S;
  // One pass over each block of the product: every row's top-2 per segment and, per chunk of
  // rows, the nearest row of each column (rows in increasing order, ties to the lower index);
  // the chunks' columns are then merged in chunk order, which gives the nearest row over all
  // rows whatever the number of chunks (and threads).
  const int rowChunks = std::max(1, maxThreads());
  std::vector<float> chunkD(static_cast<size_t>(rowChunks) * p.nb);
  std::vector<int> chunkI(static_cast<size_t>(rowChunks) * p.nb);
  const int colChunks = std::max(1, std::min(p.nb / 256, 4 * maxThreads()));
  const std::vector<int> blocks = productRowBlocks(p.na, p.nb);
  for (size_t b = 0; b + 1 < blocks.size(); ++b) {
    const int r0 = blocks[b], rb = blocks[b + 1] - r0;
    S.resize(rb, p.nb);
    dots(p.a + static_cast<long>(r0) * 128, rb, S.data());
    const int chunks = std::min(rowChunks, rb);
    parallelFor(chunks, [&](std::int64_t c) {
      float* cd = chunkD.data() + c * p.nb;
      int* ci = chunkI.data() + c * p.nb;
      std::fill(cd, cd + p.nb, kNoDistance);
      std::fill(ci, ci + p.nb, -1);
      const int l0 = static_cast<int>(static_cast<long>(rb) * c / chunks);
      const int l1 = static_cast<int>(static_cast<long>(rb) * (c + 1) / chunks);
      for (int li = l0; li < l1; ++li) {
        const int i = r0 + li;
        const float* s = S.data() + static_cast<long>(li) * p.nb;
        for (int k = 0; k < nseg; ++k) {
          Top2 t;
          scanRow(s, normA[i], normB.data(), p.segments[k], p.segments[k + 1], i, &t, cd, ci,
                  o.cpuAvx2);
          rowTop[static_cast<size_t>(i) * nseg + k] = t;
        }
      }
    });
    parallelFor(colChunks, [&](std::int64_t c) {
      const int j0 = static_cast<int>(static_cast<long>(p.nb) * c / colChunks);
      const int j1 = static_cast<int>(static_cast<long>(p.nb) * (c + 1) / colChunks);
      for (int h = 0; h < chunks; ++h) {
        const float* cd = chunkD.data() + static_cast<size_t>(h) * p.nb;
        const int* ci = chunkI.data() + static_cast<size_t>(h) * p.nb;
        for (int j = j0; j < j1; ++j)
          if (cd[j] < colD[j]) colD[j] = cd[j], colI[j] = ci[j];
      }
    });
  }
  return decideMatches(rowTop, colI, p.segments, p.na, o);
}

std::vector<std::vector<Match>> decideMatches(const std::vector<Top2>& rowTop,
                                              const std::vector<int>& colBest,
                                              const std::vector<int>& segments, int na,
                                              const MatchOptions& o) {
  const int nseg = static_cast<int>(segments.size()) - 1;
  std::vector<std::vector<Match>> out(std::max(nseg, 0));
  for (int k = 0; k < nseg; ++k) {
    for (int i = 0; i < na; ++i) {
      const Top2& t = rowTop[static_cast<size_t>(i) * nseg + k];
      if (!isMatch(t, colBest.data(), i, o.ratio, o.maxDistance, o.mutual)) continue;
      out[k].push_back({i, t.j1 - segments[k], std::sqrt(t.d1)});
    }
  }
  return out;
}

Matcher::Matcher(const MatchOptions& options, const gpu::Context* ctx) : options_(options) {
  options_.check();
  const bool cuda = cudaDeviceAvailable();
  if (options_.backend == Backend::kCuda && !cuda)
    throw Error("match.backend = cuda, but this build has no CUDA backend or no CUDA device");
  backend_ = (options_.backend != Backend::kCpu && cuda) ? Backend::kCuda : Backend::kCpu;
#if VIDMAP_HAVE_CUDA
  if (backend_ == Backend::kCuda) cuda_ = std::make_unique<MatchCuda>(ctx ? *ctx : gpu::Context(0));
#endif
}

Matcher::~Matcher() = default;
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;

void Matcher::keepOnDevice(const std::shared_ptr<const Features>& f,
                           const float* deviceDescriptors) {
  require(f != nullptr, "match: keepOnDevice of null features");
  checkFeatures(*f, "kept");
#if VIDMAP_HAVE_CUDA
  if (cuda_) cuda_->keep(f, deviceDescriptors, residentCapacity_);
#else
  (void)deviceDescriptors;
#endif
}

void Matcher::setResidentCapacity(int n) {
  require(n >= 0, "match: resident capacity " + std::to_string(n) + " < 0");
  residentCapacity_ = n;
}

bool Matcher::onDevice([[maybe_unused]] const Features& f) const {
#if VIDMAP_HAVE_CUDA
  if (cuda_) return cuda_->resident(f) != nullptr;
#endif
  return false;
}

std::int64_t Matcher::uploadedDescriptorBytes() const {
#if VIDMAP_HAVE_CUDA
  if (cuda_) return cuda_->uploadedBytes();
#endif
  return 0;
}

std::vector<Match> Matcher::match(const Features& a, const Features& b) {
  return matchMany(a, {&b}).front();
}

std::vector<Match> Matcher::matchGuided(const Features& a, const Features& b,
                                        const EpipolarGuide& guide) {
  return matchMany(a, {&b}, {guide}).front();
}

std::vector<std::vector<Match>> Matcher::matchMany(const Features& query,
                                                   const std::vector<const Features*>& refs,
                                                   const std::vector<EpipolarGuide>& guides,
                                                   int maxFeatures) {
  checkFeatures(query, "A");
  require(guides.empty() || guides.size() == refs.size(),
          "match: " + std::to_string(guides.size()) + " guides for " + std::to_string(refs.size()) +
              " images (need none or one each)");
  for (const auto& g : guides) g.check();
  MatchProblem p;
  p.a = query.descriptors.data();
  require(maxFeatures >= 0, "match: maxFeatures " + std::to_string(maxFeatures) + " < 0");
  const auto used = [maxFeatures](const Features& f) {
    const int n = static_cast<int>(f.size());
    return maxFeatures > 0 ? std::min(n, maxFeatures) : n;
  };
  p.na = used(query);
  p.keypointsA = query.keypoints.data();
  p.segments.push_back(0);
  for (const Features* f : refs) {
    require(f != nullptr, "match: a null reference image");
    checkFeatures(*f, "B");
    p.segments.push_back(p.segments.back() + used(*f));
  }
  // CUDA: the descriptors kept on the device (keepOnDevice) are not uploaded, nor copied into
  // the host's concatenation.
  [[maybe_unused]] const float* deviceA = nullptr;
  [[maybe_unused]] std::vector<const float*> deviceB;
  bool allResident = false;
#if VIDMAP_HAVE_CUDA
  if (cuda_) {
    deviceA = cuda_->resident(query);
    allResident = true;
    for (const Features* f : refs) {
      deviceB.push_back(cuda_->resident(*f));
      allResident = allResident && deviceB.back();
    }
    if (std::none_of(deviceB.begin(), deviceB.end(), [](const float* d) { return d; }))
      deviceB.clear();
  }
#endif
  std::vector<float> bcat;
  std::vector<Keypoint> kcat;
  if (refs.size() == 1) {
    p.b = refs[0]->descriptors.data();
    p.keypointsB = refs[0]->keypoints.data();
  } else {
    if (!allResident) bcat.reserve(static_cast<size_t>(p.segments.back()) * kDescriptorSize);
    kcat.reserve(p.segments.back());
    for (const Features* f : refs) {
      const int n = used(*f);
      if (!allResident)
        bcat.insert(bcat.end(), f->descriptors.begin(),
                    f->descriptors.begin() + static_cast<long>(n) * kDescriptorSize);
      kcat.insert(kcat.end(), f->keypoints.begin(), f->keypoints.begin() + n);
    }
    p.b = allResident ? nullptr : bcat.data();
    p.keypointsB = kcat.data();
  }
  p.nb = p.segments.back();
  p.guides = guides.empty() ? nullptr : guides.data();
#if VIDMAP_HAVE_CUDA
  if (backend_ == Backend::kCuda) return cuda_->match(p, options_, nullptr, deviceA, deviceB);
#endif
  return matchCpu(p, options_);
}

}  // namespace vidmap::features
