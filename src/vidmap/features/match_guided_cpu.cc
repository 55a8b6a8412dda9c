// Guided matching on the CPU without the full descriptor product: only the pairs inside the
// epipolar band are compared. B's keypoints of each segment are bucketed in a grid, and each
// row of A walks the grid cells its band crosses (as guided matching in COLMAP's
// FeatureMatcher and in ORB-SLAM's SearchByProjection restrict candidates before comparing
// descriptors). The band test itself is the shared epipolarDistance(), so the decisions are
// those of the dense rule; distances are summed differences rather than the expanded product.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <utility>

#include "vidmap/core/parallel.h"
#include "vidmap/features/match_kernels.h"
#include "vidmap/features/matcher.h"

namespace vidmap::features {
namespace {

// One segment's keypoints in grid cells (compressed rows: the keypoints of cell c are
// order[start[c] .. start[c + 1]), in increasing index).
// The keypoints and descriptors are also copied in cell order, so that the walk along a band
// reads memory in sequence instead of one cache line per keypoint and per descriptor.
struct Grid {
  double x0 = 0, y0 = 0, cell = 1;
  int cols = 0, rows = 0;
  std::vector<int> start, order;
  std::vector<float> x, y;         // of order[k]
  std::vector<float> descriptors;  // of order[k], 128 each
  double maxTransposeNorm = 0;     // max over b of (F^T x_b)_1^2 + (F^T x_b)_2^2 (Sampson bound)
};

Grid makeGrid(const Keypoint* kp, const float* desc, int j0, int j1, const EpipolarGuide& g) {
  Grid grid;
  if (j1 <= j0) return grid;
  double xmin = kp[j0].x, xmax = xmin, ymin = kp[j0].y, ymax = ymin;
  for (int j = j0; j < j1; ++j) {
    xmin = std::min<double>(xmin, kp[j].x), xmax = std::max<double>(xmax, kp[j].x);
    ymin = std::min<double>(ymin, kp[j].y), ymax = std::max<double>(ymax, kp[j].y);
    const double m0 = g.F[0] * kp[j].x + g.F[3] * kp[j].y + g.F[6];
    const double m1 = g.F[1] * kp[j].x + g.F[4] * kp[j].y + g.F[7];
    grid.maxTransposeNorm = std::max(grid.maxTransposeNorm, m0 * m0 + m1 * m1);
  }
  // Cells of about two band widths (at least 8 px), at most 256 a side.
  const double extent = std::max(xmax - xmin, ymax - ymin) + 1;
  grid.cell = std::max({2 * g.bandPx, 8.0, extent / 256});
  grid.x0 = xmin, grid.y0 = ymin;
  grid.cols = static_cast<int>((xmax - xmin) / grid.cell) + 1;
  grid.rows = static_cast<int>((ymax - ymin) / grid.cell) + 1;
  std::vector<int> cellOf(j1 - j0);
  grid.start.assign(static_cast<size_t>(grid.cols) * grid.rows + 1, 0);
  for (int j = j0; j < j1; ++j) {
    const int cx = std::min(grid.cols - 1, static_cast<int>((kp[j].x - xmin) / grid.cell));
    const int cy = std::min(grid.rows - 1, static_cast<int>((kp[j].y - ymin) / grid.cell));
    cellOf[j - j0] = cy * grid.cols + cx;
    ++grid.start[cellOf[j - j0] + 1];
  }
  for (size_t c = 1; c < grid.start.size(); ++c) grid.start[c] += grid.start[c - 1];
  grid.order.resize(j1 - j0);
  std::vector<int> fill(grid.start.begin(), grid.start.end() - 1);
  for (int j = j0; j < j1; ++j) grid.order[fill[cellOf[j - j0]]++] = j;
  grid.x.resize(j1 - j0);
  grid.y.resize(j1 - j0);
  grid.descriptors.resize(static_cast<size_t>(j1 - j0) * 128);
  for (int k = 0; k < j1 - j0; ++k) {
    const int j = grid.order[k];
    grid.x[k] = kp[j].x;
    grid.y[k] = kp[j].y;
    std::copy_n(desc + static_cast<size_t>(j) * 128, 128, grid.descriptors.data() + k * 128);
  }
  return grid;
}

// Calls visit(k0, k1) for runs of keypoints order[k0 .. k1) of the grid (one cell each) that
// hold every keypoint within line distance w of the line l0 x + l1 y + l2 = 0 (and possibly a
// few more); the caller applies the exact test.
template <class Visit>
void walkBand(const Grid& grid, double l0, double l1, double l2, double w, Visit&& visit) {
  const double nl = std::sqrt(l0 * l0 + l1 * l1);
  const bool alongX = std::abs(l1) >= std::abs(l0);  // y as a function of x
  // Lines in grid coordinates: u along the walk, v across; v = -(a u + c) / b.
  const double a = alongX ? l0 : l1, b = alongX ? l1 : l0;
  const double c = l2 + (alongX ? l0 * grid.x0 + l1 * grid.y0 : l1 * grid.y0 + l0 * grid.x0);
  const int nu = alongX ? grid.cols : grid.rows, nv = alongX ? grid.rows : grid.cols;
  const double halfWidth = w * nl / std::abs(b);  // band half-width measured along v
  for (int cu = 0; cu < nu; ++cu) {
    const double u0 = cu * grid.cell, u1 = u0 + grid.cell;
    const double va = -(a * u0 + c) / b, vb = -(a * u1 + c) / b;
    const double vlo = std::min(va, vb) - halfWidth, vhi = std::max(va, vb) + halfWidth;
    // Clamped before the conversion: a line far outside the grid (or a wide Sampson band)
    // gives values no int holds.
    const double vmax = nv * grid.cell;
    if (!(vhi >= 0 && vlo <= vmax)) continue;
    const int c0 = std::max(0, static_cast<int>(std::floor(std::max(vlo, 0.0) / grid.cell)));
    const int c1 = std::min(nv - 1, static_cast<int>(std::floor(std::min(vhi, vmax) / grid.cell)));
    for (int cv = c0; cv <= c1; ++cv) {
      const int cell = alongX ? cv * grid.cols + cu : cu * grid.cols + cv;
      if (grid.start[cell] < grid.start[cell + 1]) visit(grid.start[cell], grid.start[cell + 1]);
    }
  }
}

// |a - b|^2 summed directly: without a matrix product to share, the expanded form would only
// add cancellation (equal descriptors would not come out at distance 0).
float squaredDistance128(const float* a, const float* b) {
  using V = Eigen::Matrix<float, 128, 1>;
  return (Eigen::Map<const V>(a) - Eigen::Map<const V>(b)).squaredNorm();
}

// keep[q] = whether keypoint q of a run lies within the band: epipolarDistance() for n points
// in one loop, element by element (GCC builds it for the x86-64 baseline and for AVX2 and picks
// one per CPU at load time; no FMA, so each point gets the same operations: the same test).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void bandTest(const double* F, double xa, double ya, const float* xs, const float* ys, int n,
              bool sampson, double band, unsigned char* keep) {
  if (sampson) {
    for (int q = 0; q < n; ++q) keep[q] = epipolarDistance(F, xa, ya, xs[q], ys[q], true) <= band;
  } else {
    for (int q = 0; q < n; ++q) keep[q] = epipolarDistance(F, xa, ya, xs[q], ys[q], false) <= band;
  }
}

}  // namespace

std::vector<std::vector<Match>> matchGuidedCpu(const MatchProblem& p, const MatchOptions& o) {
  const int nseg = static_cast<int>(p.segments.size()) - 1;
  std::vector<std::vector<Match>> out(std::max(nseg, 0));
  if (nseg <= 0 || p.na == 0 || p.nb == 0) return out;
  std::vector<Grid> grids(nseg);
  parallelFor(nseg, [&](std::int64_t k) {
    grids[k] = makeGrid(p.keypointsB, p.b, p.segments[k], p.segments[k + 1], p.guides[k]);
  });
  // The rows of A in the order of their cells (32 px, row by row): neighbouring points have
  // neighbouring epipolar lines, so consecutive rows read mostly the same part of B's grid.
  std::vector<int> rowOrder(p.na);
  {
    std::vector<std::pair<long, int>> key(p.na);
    for (int i = 0; i < p.na; ++i) {
      const long cx = std::lround(std::floor(std::max(0.0f, p.keypointsA[i].x) / 32.0f));
      const long cy = std::lround(std::floor(std::max(0.0f, p.keypointsA[i].y) / 32.0f));
      key[i] = {std::min(cy, 1L << 20) * (1L << 21) + std::min(cx, 1L << 20), i};
    }
    std::sort(key.begin(), key.end());
    for (int i = 0; i < p.na; ++i) rowOrder[i] = key[i].second;
  }

  // Segment by segment (one segment's grid stays in cache), rows in parallel; each row keeps
  // its candidates (j, distance) for the column pass. Per row and segment the candidates are
  // compared in increasing j, as the dense rule visits them.
  std::vector<Top2> rowTop(static_cast<size_t>(p.na) * nseg);
  std::vector<std::vector<std::pair<int, float>>> cand(p.na);
  for (int k = 0; k < nseg; ++k) {
    const EpipolarGuide& g = p.guides[k];
    const Grid& grid = grids[k];
    if (grid.order.empty()) continue;
    const double* F = g.F.data();
    parallelFor(p.na, [&](std::int64_t r) {
      const int i = rowOrder[r];
      const Keypoint& ka = p.keypointsA[i];
      const float* da = p.a + static_cast<size_t>(i) * 128;
      const double l0 = F[0] * ka.x + F[1] * ka.y + F[2];
      const double l1 = F[3] * ka.x + F[4] * ka.y + F[5];
      const double l2 = F[6] * ka.x + F[7] * ka.y + F[8];
      const double nl = l0 * l0 + l1 * l1;
      if (!(nl > 0)) return;  // epipolarDistance() is infinite: nothing is in the band
      // The Sampson distance is at most the line distance; a pair within the Sampson band lies
      // within sqrt(1 + max|F^T x_b|^2 / |F x_a|^2) band widths of the line.
      const double w =
          g.bandPx * (g.sampson ? std::sqrt(1 + grid.maxTransposeNorm / nl) : 1.0) * (1 + 1e-9) +
          1e-9;
      thread_local std::vector<std::pair<int, int>> js;  // (j, position in the grid)
      js.clear();
      // The band's keypoints gathered first (a cell holds about one), then tested in one loop.
      thread_local std::vector<int> ks;
      thread_local std::vector<float> xs, ys;
      thread_local std::vector<unsigned char> keep;
      ks.clear(), xs.clear(), ys.clear();
      walkBand(grid, l0, l1, l2, w, [&](int k0, int k1) {
        for (int q = k0; q < k1; ++q)
          ks.push_back(q), xs.push_back(grid.x[q]), ys.push_back(grid.y[q]);
      });
      keep.resize(ks.size());
      bandTest(F, ka.x, ka.y, xs.data(), ys.data(), static_cast<int>(ks.size()), g.sampson,
               g.bandPx, keep.data());
      for (size_t m = 0; m < ks.size(); ++m)
        if (keep[m]) js.emplace_back(grid.order[ks[m]], ks[m]);
      std::sort(js.begin(), js.end());
      Top2 t;
      for (const auto& [j, q] : js) {
        const float d =
            squaredDistance128(da, grid.descriptors.data() + static_cast<size_t>(q) * 128);
        top2Push(t, d, j);
        cand[i].emplace_back(j, d);
      }
      rowTop[static_cast<size_t>(i) * nseg + k] = t;
    });
  }
  // The nearest row of each column, rows in increasing order (ties go to the lower index).
  std::vector<float> colD(p.nb, kNoDistance);
  std::vector<int> colI(p.nb, -1);
  for (int i = 0; i < p.na; ++i)
    for (const auto& [j, d] : cand[i])
      if (d < colD[j]) colD[j] = d, colI[j] = i;
  return decideMatches(rowTop, colI, p.segments, p.na, o);
}

}  // namespace vidmap::features
