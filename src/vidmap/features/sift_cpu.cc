#include "vidmap/features/sift_cpu.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "vidmap/core/parallel.h"
#include "vidmap/features/sift_plan.h"
#include "vidmap/features/sift_select.h"

namespace vidmap::features {
namespace {

double msSince(std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t).count();
  t = now;
  return ms;
}

ImageView<const float> cview(const float* d, int w, int h) { return {d, w, h, w}; }

// One pass of the separable blur over n outputs: o[x] = w0 c[x], then o[x] += wi (a_i[x] +
// b_i[x]) for the taps i = 1 .. r in order. GCC builds it twice, for the x86-64
// baseline and for AVX2, and picks one per CPU at load time: only element-wise products and
// sums vectorise (no FMA: -ffp-contract=off, and "avx2" does not enable it), so each output
// gets the same operations in the same order and the levels are equal bit for bit. a(i), b(i):
// the rows (or the padded row shifted) at tap i.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VIDMAP_SIFT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VIDMAP_SIFT_CLONES
#endif
VIDMAP_SIFT_CLONES void blurTaps(float* __restrict o, const float* c, const float* const* a,
                                 const float* const* b, const float* wk, int r, int n) {
  // 32 outputs at a time, held in four 8-wide vectors across the taps (each output's operations
  // and their order unchanged). Written as loops over x, GCC -O3 jams two taps into one loop
  // over x that it leaves scalar (most of the blur's time in the AVX2 build, perf on xyz).
  typedef float V8 __attribute__((vector_size(32)));
  constexpr int kBlock = 32;
  int x0 = 0;
  for (; x0 + kBlock <= n; x0 += kBlock) {
    V8 acc[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      V8 v;
      std::memcpy(&v, c + x0 + 8 * q, sizeof v);
      acc[q] = wk[0] * v;
    }
    for (int i = 1; i <= r; ++i) {
      const float wi = wk[i];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        V8 u, v;
        std::memcpy(&u, a[i] + x0 + 8 * q, sizeof u);
        std::memcpy(&v, b[i] + x0 + 8 * q, sizeof v);
        acc[q] += wi * (u + v);
      }
    }
    std::memcpy(o + x0, acc, sizeof acc);
  }
  for (int x = x0; x < n; ++x) {  // the last n mod 32
    float v = wk[0] * c[x];
    for (int i = 1; i <= r; ++i) v += wk[i] * (a[i][x] + b[i][x]);
    o[x] = v;
  }
}

// Separable blur: rows of `in` into tmp, columns of tmp into out, and dog = out - in when
// dog is not null (the DoG level, fused to save a pass over memory). Each pixel gets exactly
// the float operations of blurRowAt / blurColAt, in their order (blurTaps). The border is
// clamped as in those functions: a padded copy of the row, and clamped row indices for the
// columns.
void blur(ImageView<const float> in, float* out, float* tmp, const GaussKernel& k,
          float* dog = nullptr) {
  const int w = in.width, h = in.height, r = k.radius;
  parallelFor(h, [&](std::int64_t yy) {
    thread_local std::vector<float> pad;
    thread_local std::vector<const float*> taps;
    if (pad.size() < static_cast<size_t>(w + 2 * r)) pad.resize(w + 2 * r);
    taps.resize(2 * (r + 1));
    const float* row = in.data + yy * in.stride;
    for (int i = 0; i < w + 2 * r; ++i) pad[i] = row[clampi(i - r, 0, w - 1)];
    const float* c = pad.data() + r;
    for (int i = 0; i <= r; ++i) taps[i] = c - i, taps[r + 1 + i] = c + i;
    blurTaps(tmp + yy * w, c, taps.data(), taps.data() + r + 1, k.w, r, w);
  });
  parallelFor(h, [&](std::int64_t yy) {
    const int y = static_cast<int>(yy);
    thread_local std::vector<const float*> taps;
    taps.resize(2 * (r + 1));
    for (int i = 0; i <= r; ++i) {
      taps[i] = tmp + static_cast<long>(clampi(y - i, 0, h - 1)) * w;
      taps[r + 1 + i] = tmp + static_cast<long>(clampi(y + i, 0, h - 1)) * w;
    }
    float* o = out + yy * w;
    blurTaps(o, tmp + yy * w, taps.data(), taps.data() + r + 1, k.w, r, w);
    if (dog) {
      const float* prev = in.data + yy * in.stride;
      float* d = dog + yy * w;
      for (int x = 0; x < w; ++x) d[x] = o[x] - prev[x];
    }
  });
}

// describeKeypoint (sift_kernels.h) in two passes per row of the window: the per-pixel
// arithmetic of descriptorPixel for the whole row span (position, window test, orientation,
// Gaussian weight: element-wise, so the AVX2 clone runs it eight pixels at a time with the same
// operations), then descriptorAdd for the pixels inside, in increasing dx as before. The
// same descriptor bit for bit (Sift.CpuDescriptorRowsEqualTheSharedKernel).
constexpr int kRowSpanMax = 256;

struct RowSamples {
  float mod[kRowSpanMax], nx[kRowSpanMax], ny[kRowSpanMax], nt[kRowSpanMax];
  int inside[kRowSpanMax];
};

VIDMAP_SIFT_CLONES void describeRowSamples(const GradientLevel& gl, const DescriptorWindow& w,
                                           int lo, int n, int py, RowSamples* r) {
  const float ry = static_cast<float>(py) - w.y;
  const Gradient* row = gl.data + static_cast<long>(py) * gl.stride;
  const int x0 = w.xi + lo;  // the pixel of m = 0
  // The pixels of columns 1 .. width - 2 (descriptorPixel's bounds); the others add nothing.
  const int m0 = std::clamp(1 - x0, 0, n), m1 = std::clamp(gl.width - 1 - x0, m0, n);
  for (int m = 0; m < m0; ++m) r->inside[m] = 0;
  for (int m = m1; m < n; ++m) r->inside[m] = 0;
  for (int m = m0; m < m1; ++m) {
    const int px = x0 + m;
    const float rx = static_cast<float>(px) - w.x;
    const float nx = (w.ct * rx + w.st * ry) * w.invSbp;
    const float ny = (-w.st * rx + w.ct * ry) * w.invSbp;
    float theta = row[px].angle - w.angle;
    theta = theta < 0 ? theta + kTwoPi : theta;
    theta = theta >= kTwoPi ? theta - kTwoPi : theta;
    const float win = expNeg((nx * nx + ny * ny) * (-1.0f / 8.0f));
    r->mod[m] = row[px].mag * win;
    r->nx[m] = nx;
    r->ny[m] = ny;
    r->nt[m] = 8.0f * theta * (1.0f / kTwoPi);
    r->inside[m] = (nx > -2.5f) & (nx < 2.5f) & (ny > -2.5f) & (ny < 2.5f);
  }
}

}  // namespace

void describeKeypointCpu(const GradientLevel& gl, float x, float y, float sigma, float angle,
                         float ct, float st, float desc[128]) {
  const DescriptorWindow w = descriptorWindow(x, y, sigma, angle, ct, st);
  if (2 * w.W + 1 > kRowSpanMax) return describeKeypoint(gl, x, y, sigma, angle, ct, st, desc);
  for (int i = 0; i < 128; ++i) desc[i] = 0;
  RowSamples r;
  for (int dy = -w.W; dy <= w.W; ++dy) {
    const int py = w.yi + dy;
    if (py < 1 || py > gl.height - 2) continue;
    int lo, hi;
    descriptorRowSpan(w, dy, &lo, &hi);
    if (hi < lo) continue;
    describeRowSamples(gl, w, lo, hi - lo + 1, py, &r);
    for (int m = 0; m <= hi - lo; ++m)
      if (r.inside[m]) descriptorAdd(r.mod[m], r.nx[m], r.ny[m], r.nt[m], desc);
  }
}

namespace {

// Builds the Gaussian levels of every octave.
template <class T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// Builds the Gaussian levels of every octave, and their DoG levels when withDog.
void buildGaussians(ImageView<const float> gray, const ScaleSpacePlan& plan, SiftCpuWorkspace& ws,
                    bool withDog) {
  if (ws.octaves.size() < plan.octaves.size()) ws.octaves.resize(plan.octaves.size());
  auto& octs = ws.octaves;
  auto& tmp = ws.tmp;
  auto& up = ws.up;
  const int L = plan.levels();
  for (size_t oi = 0; oi < plan.octaves.size(); ++oi) {
    SiftCpuOctave& o = octs[oi];
    o.w = plan.octaves[oi].width;
    o.h = plan.octaves[oi].height;
    const long n = static_cast<long>(o.w) * o.h;
    grow(o.gauss, n * L);
    grow(tmp, n);
    if (oi == 0) {
      ImageView<const float> src = gray;
      if (plan.firstOctave < 0) {
        grow(up, n);
        parallelFor(o.h, [&](std::int64_t y) {
          for (int x = 0; x < o.w; ++x) up[y * o.w + x] = upsampleAt(gray, x, static_cast<int>(y));
        });
        src = cview(up.data(), o.w, o.h);
      }
      if (plan.baseBlur) {
        blur(src, o.level(0), tmp.data(), plan.base);
      } else {
        float* dst = o.level(0);
        parallelFor(o.h, [&](std::int64_t y) {
          for (int x = 0; x < o.w; ++x) dst[y * o.w + x] = src(x, static_cast<int>(y));
        });
      }
    } else {
      SiftCpuOctave& prev = octs[oi - 1];
      auto src = cview(prev.level(plan.scales), prev.w, prev.h);
      float* dst = o.level(0);
      parallelFor(o.h, [&](std::int64_t y) {
        for (int x = 0; x < o.w; ++x) dst[y * o.w + x] = downsampleAt(src, x, static_cast<int>(y));
      });
    }
    if (withDog) grow(o.dog, n * (L - 1));
    for (int i = 1; i < L; ++i)
      blur(cview(o.level(i - 1), o.w, o.h), o.level(i), tmp.data(), plan.step[i],
           withDog ? o.dog.data() + (i - 1) * n : nullptr);
  }
}

// pass[x] = a necessary condition of isExtremum at c[x] (c: a DoG row, st: the row stride): its
// prefilter and the comparison with the four neighbours of the same level left, right, above
// and below, strict as isExtremum's (false where any of them is NaN). One loop without branches
// (vectorised in the AVX2 clone); the scan calls isExtremum only where it passes and skips eight
// pixels at a time where none does: the same extrema in the same order.
VIDMAP_SIFT_CLONES void extremumCandidates(const float* c, long st, int n, float prefilter,
                                           unsigned char* pass) {
  for (int x = 0; x < n; ++x) {
    const float v = c[x], l = c[x - 1], r = c[x + 1], u = c[x - st], d = c[x + st];
    const bool pre = (v >= prefilter) | (v <= -prefilter);
    const bool max = (v > l) & (v > r) & (v > u) & (v > d);
    const bool min = (v < l) & (v < r) & (v < u) & (v < d);
    pass[x] = pre & ((v > 0) ? max : min);
  }
}

}  // namespace

void extremaInRow(const DogOctave& dog, int s, int y, int x0, int x1, float prefilter,
                  std::vector<int>* xs) {
  xs->clear();
  const int nx = x1 - x0;
  if (nx <= 0) return;
  thread_local std::vector<unsigned char> pass;
  pass.assign(static_cast<size_t>(nx) + 8, 0);  // padded: the scan reads eight at a time
  extremumCandidates(dog.data + (s * static_cast<long>(dog.height) + y) * dog.stride + x0,
                     dog.stride, nx, prefilter, pass.data());
  for (int q = 0; q < nx; ++q) {
    if (q % 8 == 0) {
      std::uint64_t eight;
      std::memcpy(&eight, pass.data() + q, 8);
      if (eight == 0) {
        q += 7;
        continue;
      }
    }
    if (pass[q] && isExtremum(dog, s, x0 + q, y, prefilter)) xs->push_back(x0 + q);
  }
}

std::vector<std::vector<float>> siftCpuGaussians(ImageView<const float> gray,
                                                 const SiftOptions& options) {
  auto plan = planScaleSpace(gray.width, gray.height, options);
  SiftCpuWorkspace ws;
  buildGaussians(gray, plan, ws, false);
  std::vector<std::vector<float>> out;
  for (size_t oi = 0; oi < plan.octaves.size(); ++oi) {
    const auto& o = ws.octaves[oi];
    out.emplace_back(o.gauss.begin(),
                     o.gauss.begin() + static_cast<long>(o.w) * o.h * plan.levels());
  }
  return out;
}

Features siftCpu(ImageView<const float> gray, const SiftOptions& opt, SiftStats* stats,
                 SiftCpuWorkspace* workspace) {
  SiftCpuWorkspace localWorkspace;
  SiftCpuWorkspace& ws = workspace ? *workspace : localWorkspace;
  Features result;
  result.width = gray.width;
  result.height = gray.height;
  SiftStats local;
  SiftStats& st = stats ? *stats : local;
  auto clock = std::chrono::steady_clock::now();
  const ScaleSpacePlan plan = planScaleSpace(gray.width, gray.height, opt);
  buildGaussians(gray, plan, ws, true);
  auto& octs = ws.octaves;
  st.msGaussians = msSince(clock);
  const int S = plan.scales;
  const int L = plan.levels();
  const float prefilter = 0.8f * opt.peakThreshold;

  std::vector<SiftPoint> points;
  int extremaCount = 0;
  for (size_t oi = 0; oi < plan.octaves.size(); ++oi) {
    SiftCpuOctave& o = octs[oi];
    const long n = static_cast<long>(o.w) * o.h;
    // Gradients of the levels where keypoints live (the DoG levels came with the blur).
    grow(o.grad, n * S);
    parallelFor(static_cast<std::int64_t>(S) * o.h, [&](std::int64_t r) {
      const int li = static_cast<int>(r / o.h), y = static_cast<int>(r % o.h);
      auto g = cview(o.level(li + 1), o.w, o.h);
      Gradient* dst = o.grad.data() + li * n + static_cast<long>(y) * o.w;
      // gradientAt, with the clamps resolved per row so that the interior loop vectorises.
      const float* row = g.data + static_cast<long>(y) * o.w;
      const float* up = g.data + static_cast<long>(y > 0 ? y - 1 : 0) * o.w;
      const float* dn = g.data + static_cast<long>(y < o.h - 1 ? y + 1 : o.h - 1) * o.w;
      dst[0] = gradientAt(g, 0, y);
      for (int x = 1; x < o.w - 1; ++x)
        dst[x] = gradientFromDifferences(row[x + 1] - row[x - 1], dn[x] - up[x]);
      dst[o.w - 1] = gradientAt(g, o.w - 1, y);
    });
    st.msDogGradients += msSince(clock);
    // Extrema of levels 1..S away from the border, refined; one list per row keeps the order.
    const DogOctave dog{o.dog.data(), o.w, o.h, o.w, L - 1};
    const int rows = o.h - 2 * kSiftBorder;
    if (rows <= 0 || o.w - 2 * kSiftBorder <= 0) continue;
    std::vector<std::vector<Extremum>> found(static_cast<size_t>(S) * rows);
    parallelFor(static_cast<std::int64_t>(S) * rows, [&](std::int64_t r) {
      const int s = 1 + static_cast<int>(r / rows), y = kSiftBorder + static_cast<int>(r % rows);
      thread_local std::vector<int> xs;
      extremaInRow(dog, s, y, kSiftBorder, o.w - kSiftBorder, prefilter, &xs);
      for (int x : xs) {
        Extremum e;
        if (refineExtremum(dog, x, y, s, S, opt.peakThreshold, opt.edgeThreshold, &e))
          found[r].push_back(e);
      }
    });
    std::vector<Extremum> ext;
    for (auto& f : found) ext.insert(ext.end(), f.begin(), f.end());
    dedupeExtrema(ext);
    extremaCount += static_cast<int>(ext.size());
    st.msExtrema += msSince(clock);
    // Orientations: up to maxOrientations slots per extremum, compacted in order.
    const int mo = opt.upright ? 1 : opt.maxOrientations;
    std::vector<SiftPoint> slots(ext.size() * mo);
    std::vector<int> count(ext.size());
    parallelForDynamic(static_cast<std::int64_t>(ext.size()), [&](std::int64_t i) {
      const Extremum& e = ext[i];
      const SiftPoint p = toPoint(e, static_cast<int>(oi), plan, opt.sigma);
      const GradientLevel gl{o.grad.data() + (e.level - 1) * n, o.w, o.h, o.w};
      count[i] = orientPoint(gl, p, mo, opt.upright, slots.data() + i * mo);
    });
    for (size_t i = 0; i < ext.size(); ++i)
      for (int j = 0; j < count[i]; ++j) points.push_back(slots[i * mo + j]);
    st.msOrientations += msSince(clock);
  }
  st.extrema = extremaCount;
  st.oriented = static_cast<int>(points.size());
  selectStrongest(points, opt.maxFeatures);

  const bool l1root = opt.normalization == DescriptorNormalization::kL1Root;
  result.keypoints.resize(points.size());
  result.descriptors.resize(points.size() * kDescriptorSize);
  // Describe in image order (octave, level, row) so that neighbouring windows share the cache;
  // each descriptor still goes to its rank.
  std::vector<int> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const SiftPoint &p = points[a], &q = points[b];
    if (p.octaveIndex != q.octaveIndex) return p.octaveIndex < q.octaveIndex;
    if (p.level != q.level) return p.level < q.level;
    return p.y != q.y ? p.y < q.y : a < b;
  });
  parallelForDynamic(static_cast<std::int64_t>(points.size()), [&](std::int64_t r) {
    const int i = order[r];
    const SiftPoint& p = points[i];
    SiftCpuOctave& o = octs[p.octaveIndex];
    const long n = static_cast<long>(o.w) * o.h;
    const GradientLevel gl{o.grad.data() + (p.level - 1) * n, o.w, o.h, o.w};
    float* d = result.descriptors.data() + i * kDescriptorSize;
    float ct, st;
    angleCosSin(p.angle, &ct, &st);
    describeKeypointCpu(gl, p.x, p.y, p.sigma, p.angle, ct, st, d);
    normalizeDescriptor(d, l1root);
    result.keypoints[i] = toKeypoint(p, plan);
  });
  st.msDescriptors = msSince(clock);
  return result;
}

}  // namespace vidmap::features
