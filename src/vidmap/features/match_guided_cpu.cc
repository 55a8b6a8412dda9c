// Guided matching on the CPU without the full descriptor product: only the pairs inside the
// epipolar band are compared. B's keypoints of each segment are bucketed in a grid, and each
// row of A walks the grid cells its band crosses (as guided matching in COLMAP's
// FeatureMatcher and in ORB-SLAM's SearchByProjection restrict candidates before comparing
// descriptors). The band test itself is the shared epipolarDistance(), so the decisions are
// those of the dense rule; distances are summed differences rather than the expanded product
// (squaredDistances128: without a matrix product to share, the expanded form would only add
// cancellation, and equal descriptors would not come out at distance 0).
#include <algorithm>
#include <cmath>
#include <utility>

#include "vidmap/core/parallel.h"
#include "vidmap/features/match_dots_cpu.h"
#include "vidmap/features/match_kernels.h"
#include "vidmap/features/matcher.h"

namespace vidmap::features {
namespace {

// One segment's keypoints in grid cells, in two layouts: cell by cell along the rows of cells
// (rowMajor: cell cy * cols + cx) and down the columns (colMajor: cell cx * rows + cy). A band
// that runs along x crosses a few cells of each column, which the column-major layout holds in
// one run of keypoints, and a band along y a few cells of each row: one run per step of the walk.
// Each layout holds the cells' keypoints in increasing index (start[c] .. start[c + 1] in its own
// cell numbering) with their positions, B's index and the position of their descriptor in
// `descriptors` (copied in row-major cell order, so that a walk reads memory mostly in sequence).
struct Layout {
  std::vector<int> start;
  std::vector<float> x, y;
  std::vector<int> j, pos;
};

struct Grid {
  double x0 = 0, y0 = 0, cell = 1;
  int cols = 0, rows = 0, size = 0;
  Layout rowMajor, colMajor;
  std::vector<float> descriptors;  // row-major cell order, 128 each
  double maxTransposeNorm = 0;     // max over b of (F^T x_b)_1^2 + (F^T x_b)_2^2 (Sampson bound)
};

// The keypoints j0 .. j1 of kp bucketed by cellOf (their cell in this layout's numbering).
Layout makeLayout(const Keypoint* kp, int j0, int j1, const std::vector<int>& cellOf, int cells) {
  Layout l;
  l.start.assign(static_cast<size_t>(cells) + 1, 0);
  for (int j = j0; j < j1; ++j) ++l.start[cellOf[j - j0] + 1];
  for (size_t c = 1; c < l.start.size(); ++c) l.start[c] += l.start[c - 1];
  std::vector<int> fill(l.start.begin(), l.start.end() - 1);
  l.j.resize(j1 - j0);
  for (int j = j0; j < j1; ++j) l.j[fill[cellOf[j - j0]]++] = j;
  l.x.resize(j1 - j0), l.y.resize(j1 - j0), l.pos.resize(j1 - j0);
  for (int k = 0; k < j1 - j0; ++k) l.x[k] = kp[l.j[k]].x, l.y[k] = kp[l.j[k]].y;
  return l;
}

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
  grid.size = j1 - j0;
  std::vector<int> cellRow(j1 - j0), cellCol(j1 - j0);
  for (int j = j0; j < j1; ++j) {
    const int cx = std::min(grid.cols - 1, static_cast<int>((kp[j].x - xmin) / grid.cell));
    const int cy = std::min(grid.rows - 1, static_cast<int>((kp[j].y - ymin) / grid.cell));
    cellRow[j - j0] = cy * grid.cols + cx;
    cellCol[j - j0] = cx * grid.rows + cy;
  }
  const int cells = grid.cols * grid.rows;
  grid.rowMajor = makeLayout(kp, j0, j1, cellRow, cells);
  grid.colMajor = makeLayout(kp, j0, j1, cellCol, cells);
  std::vector<int> posOf(j1 - j0);  // the descriptor position of keypoint j0 + m
  grid.descriptors.resize(static_cast<size_t>(j1 - j0) * 128);
  for (int k = 0; k < j1 - j0; ++k) {
    const int j = grid.rowMajor.j[k];
    grid.rowMajor.pos[k] = k;
    posOf[j - j0] = k;
    std::copy_n(desc + static_cast<size_t>(j) * 128, 128, grid.descriptors.data() + k * 128);
  }
  for (int k = 0; k < j1 - j0; ++k) grid.colMajor.pos[k] = posOf[grid.colMajor.j[k] - j0];
  return grid;
}

// Calls visit(layout, k0, k1) for runs of keypoints k0 .. k1 of one layout (the cells one step
// of the walk crosses) that hold every keypoint within line distance w of the line l0 x + l1 y +
// l2 = 0, and possibly a few more: the caller applies the exact test, so the walk may take more
// cells than needed but never fewer.
template <class Visit>
void walkBand(const Grid& grid, double l0, double l1, double l2, double w, Visit&& visit) {
  const double nl = std::sqrt(l0 * l0 + l1 * l1);
  const bool alongX = std::abs(l1) >= std::abs(l0);  // y as a function of x
  // Lines in grid coordinates: u along the walk, v across; v = -(a u + c) / b = v0 + s u.
  const double a = alongX ? l0 : l1, b = alongX ? l1 : l0;
  const double c = l2 + (alongX ? l0 * grid.x0 + l1 * grid.y0 : l1 * grid.y0 + l0 * grid.x0);
  const int nu = alongX ? grid.cols : grid.rows, nv = alongX ? grid.rows : grid.cols;
  const Layout& layout = alongX ? grid.colMajor : grid.rowMajor;
  const double invB = 1 / b, v0 = -c * invB, s = -a * invB, invCell = 1 / grid.cell;
  // The band's half-width along v, widened by far more than the rounding of v0 + s u (a few
  // ulps of |v0| + |s| u) and of the products by the reciprocals: cells are only ever added.
  const double band = w * nl / std::abs(b);
  const double halfWidth =
      band + 1e-6 + 1e-12 * (std::abs(v0) + std::abs(s) * nu * grid.cell + band);
  const double vmax = nv * grid.cell;
  for (int cu = 0; cu < nu; ++cu) {
    const double u0 = cu * grid.cell, u1 = u0 + grid.cell;
    const double va = v0 + s * u0, vb = v0 + s * u1;
    const double vlo = std::min(va, vb) - halfWidth, vhi = std::max(va, vb) + halfWidth;
    // Clamped before the conversion: a line far outside the grid (or a wide Sampson band)
    // gives values no int holds.
    if (!(vhi >= 0 && vlo <= vmax)) continue;
    const int c0 = std::max(0, static_cast<int>(std::floor(std::max(vlo, 0.0) * invCell)));
    const int c1 = std::min(nv - 1, static_cast<int>(std::floor(std::min(vhi, vmax) * invCell)));
    if (c1 < c0) continue;
    const int k0 = layout.start[cu * nv + c0], k1 = layout.start[cu * nv + c1 + 1];
    if (k0 < k1) visit(layout, k0, k1);
  }
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
    if (grid.size == 0) continue;
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
      // The band's keypoints gathered first (a run of cells holds a few), then tested in one
      // loop, then the distances of those inside, four at a time. top2Push keeps the lowest
      // index among equal distances whatever the order of the visits, so the candidates need no
      // sort: the same top-2 as the dense rule's visit in increasing j.
      thread_local std::vector<int> js, ps;
      thread_local std::vector<float> xs, ys, ds;
      thread_local std::vector<unsigned char> keep;
      js.resize(grid.size), ps.resize(grid.size), xs.resize(grid.size), ys.resize(grid.size);
      int n = 0;
      walkBand(grid, l0, l1, l2, w, [&](const Layout& l, int k0, int k1) {
        for (int q = k0; q < k1; ++q, ++n)
          js[n] = l.j[q], ps[n] = l.pos[q], xs[n] = l.x[q], ys[n] = l.y[q];
      });
      keep.resize(n);
      bandTest(F, ka.x, ka.y, xs.data(), ys.data(), n, g.sampson, g.bandPx, keep.data());
      int m = 0;
      for (int q = 0; q < n; ++q)
        if (keep[q]) js[m] = js[q], ps[m] = ps[q], ++m;
      ds.resize(m);
      squaredDistances128(da, grid.descriptors.data(), ps.data(), m, ds.data(), o.cpuAvx2);
      Top2 t;
      for (int q = 0; q < m; ++q) {
        top2Push(t, ds[q], js[q]);
        cand[i].emplace_back(js[q], ds[q]);
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
