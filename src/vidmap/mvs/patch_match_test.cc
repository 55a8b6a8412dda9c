// PatchMatch on the CPU (the oracle) against scenes with exact depth.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "vidmap/core/parallel.h"
#include "vidmap/mvs/fusion.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/mvs/testing/synthetic.h"

namespace vidmap::mvs {
namespace {

// The homography of a plane maps a reference pixel where projecting the plane's point does.
TEST(PatchMatchKernels, HomographyAgreesWithProjection) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(64, 48, 2, 1.0);
  Workspace ws = testing::workspaceOf(s);
  std::vector<const std::uint8_t*> gray = {ws.views[0].gray.data(), ws.views[1].gray.data()};
  PmParams P = makeParams(ws, 0, false, PatchMatchOptions{}, gray, {nullptr, nullptr});
  ASSERT_EQ(P.numSources, 1);
  float n[3] = {0.2f, -0.1f, -1.0f};
  float ray[3];
  pmRay(P.K, 20, 30, ray);
  ASSERT_TRUE(pmOrientNormal(n, ray));
  const float depth = 5.0f;
  float X[3] = {ray[0] * depth, ray[1] * depth, depth};
  float q[3], H[9];
  ASSERT_TRUE(pmPlane(P, X, n, q));
  pmHomography(P.src[0], q, H);
  // A pixel of the window: its ray meets the plane at Y; project Y into the source.
  const float u = 25, v = 27;
  float r2[3];
  pmRay(P.K, u, v, r2);
  float lambda =
      (n[0] * X[0] + n[1] * X[1] + n[2] * X[2]) / (n[0] * r2[0] + n[1] * r2[1] + n[2] * r2[2]);
  float Y[3] = {r2[0] * lambda, r2[1] * lambda, r2[2] * lambda};
  const float* R = P.src[0].R;
  float ys[3];
  for (int i = 0; i < 3; ++i)
    ys[i] = R[3 * i] * Y[0] + R[3 * i + 1] * Y[1] + R[3 * i + 2] * Y[2] + P.src[0].t[i];
  float pu = P.src[0].K.fx * ys[0] / ys[2] + P.src[0].K.cx;
  float pv = P.src[0].K.fy * ys[1] / ys[2] + P.src[0].K.cy;
  float hz = H[6] * u + H[7] * v + H[8];
  EXPECT_NEAR((H[0] * u + H[1] * v + H[2]) / hz, pu, 1e-3);
  EXPECT_NEAR((H[3] * u + H[4] * v + H[5]) / hz, pv, 1e-3);
}

// The random numbers are a function of (seed, pixel, iteration, draw) and uniform enough.
TEST(PatchMatchKernels, CounterHashIsUniform) {
  PmParams P;
  P.seed = 3;
  double sum = 0;
  int bins[10] = {};
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    float u = pmUniform(P, i % 200, i / 200, 1, 0);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
    ++bins[static_cast<int>(u * 10)];
  }
  EXPECT_NEAR(sum / n, 0.5, 0.01);
  for (int b : bins) EXPECT_NEAR(b, n / 10, n / 10 * 0.1);
  EXPECT_EQ(pmUniform(P, 5, 6, 7, 8), pmUniform(P, 5, 6, 7, 8));
  EXPECT_NE(pmUniform(P, 5, 6, 7, 8), pmUniform(P, 5, 6, 8, 8));
}

// pmHypothesisCost's early exit keeps every decision: against a bound, a hypothesis returns
// its full cost when that is below the bound and a value at or above the bound otherwise.
TEST(PatchMatchKernels, EarlyExitKeepsTheDecision) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(64, 48, 6, 1.2);
  Workspace ws = testing::workspaceOf(s);
  std::vector<const std::uint8_t*> gray;
  for (const View& v : ws.views) gray.push_back(v.gray.data());
  const int ref = 2;
  PmParams P = makeParams(ws, ref, false, PatchMatchOptions{}, gray,
                          std::vector<const float*>(ws.views.size(), nullptr));
  ASSERT_GT(P.numSources, P.topK);  // fewer sources than topK left happens before the last
  float weights[kWindowSamples];
  int exits = 0, below = 0;
  for (int y = 6; y < 42; y += 3) {
    for (int x = 6; x < 58; x += 3) {
      PmWindow<1> win;
      pmLoadWindow(P, x, y, weights, &win);
      float ray[3], n[3];
      pmRay(P.K, static_cast<float>(x), static_cast<float>(y), ray);
      for (int draw = 0; draw < 4; ++draw) {
        const float d = P.depthMin + (P.depthMax - P.depthMin) * pmUniform(P, x, y, draw, 0);
        pmRandomNormal(P, x, y, draw, 1, ray, n);
        const float full = pmHypothesisCost(P, win, x, y, d, n);
        for (float bound : {0.5f * full, full, std::nextafter(full, 10.0f), 1.5f * full + 0.01f,
                            2.0f * pmUniform(P, x, y, draw, 9)}) {
          const float c = pmHypothesisCost(P, win, x, y, d, n, bound);
          if (full < bound) {
            EXPECT_EQ(c, full) << x << "," << y;
            ++below;
          } else {
            EXPECT_GE(c, bound) << x << "," << y;
            exits += c != full;
          }
        }
      }
    }
  }
  EXPECT_GT(exits, 100);  // the exit is taken, and hypotheses below the bound are kept
  EXPECT_GT(below, 100);
  // A whole pass with and without the exit: the same maps, bit for bit.
  DepthMap a, b;
  a.resize(ws.views[ref].width, ws.views[ref].height), b = a;
  PatchMatchOptions o;
  runReferenceCpu(P, true, 2, o, &a);
  P.earlyExit = 0;
  runReferenceCpu(P, true, 2, o, &b);
  EXPECT_EQ(a.depth, b.depth);
  EXPECT_EQ(a.normal, b.normal);
  EXPECT_EQ(a.cost, b.cost);
}

// The window is valid only when every sample is inside the source: all 36 samples are taken
// (no exit between them) and the decision falls at the end, exactly at the image's edge (the
// corners decide: pmPhotometricCost).
TEST(PatchMatchKernels, WindowLeavingTheSourceCostsTheMaximum) {
  const int W = 40, H = 30;
  std::vector<std::uint8_t> img(W * H);
  for (int i = 0; i < W * H; ++i) img[i] = static_cast<std::uint8_t>((i * 7919u) >> 3);
  PmParams P;
  for (float& w : P.colorWeight) w = 1.0f;
  for (float& w : P.spatialWeight) w = 1.0f;
  P.ref = {img.data(), W, H, W};
  PmSource src;
  src.gray = P.ref;
  const float identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  float weights[kWindowSamples];
  auto cost = [&](int x, int y, const float* Hm) {
    PmWindow<1> win;
    pmLoadWindow(P, x, y, weights, &win);
    return pmPhotometricCost(win, src, Hm, x, y);
  };
  EXPECT_NEAR(cost(W - 6, 10, identity), 0.0f, 1e-5f);  // samples up to x = W - 1: inside
  EXPECT_EQ(cost(W - 5, 10, identity), kMaxCost);       // the last column at x = W
  EXPECT_NEAR(cost(5, 5, identity), 0.0f, 1e-5f);
  EXPECT_EQ(cost(4, 5, identity), kMaxCost);  // the first column at x = -1
  EXPECT_EQ(cost(5, 4, identity), kMaxCost);  // the first row at y = -1
  // Behind the source camera for the window's lower rows only (hz = 15.5 - y).
  const float behind[9] = {1, 0, 0, 0, 1, 0, 0, -1, 15.5f};
  EXPECT_EQ(cost(20, 12, behind), kMaxCost);
}

// The corners decide a window's validity because a homography with a positive denominator
// maps the window's square to the convex quadrilateral of its corners: against every sample
// projected in double precision, over random homographies near the image's edges.
TEST(PatchMatchKernels, CornersDecideTheWindowsValidity) {
  const int W = 40, Hh = 30;
  std::vector<std::uint8_t> img(W * Hh);
  for (int i = 0; i < W * Hh; ++i) img[i] = static_cast<std::uint8_t>((i * 7919u) >> 3);
  PmParams P;
  for (float& w : P.colorWeight) w = 1.0f;
  for (float& w : P.spatialWeight) w = 1.0f;
  P.ref = {img.data(), W, Hh, W};
  PmSource src;
  src.gray = P.ref;
  float weights[kWindowSamples];
  int checked = 0, inside = 0, outside = 0;
  for (int t = 0; t < 4000; ++t) {
    float Hm[9];
    for (int k = 0; k < 9; ++k) {
      const float r = 2.0f * pmUniform(P, t, k, 7, 0) - 1.0f;
      Hm[k] = (k == 0 || k == 4 || k == 8 ? 1.0f : 0.0f) + (k == 2 || k == 5 ? 4.0f : 0.3f) * r;
    }
    Hm[6] *= 0.03f, Hm[7] *= 0.03f;  // mild perspective: the denominator stays positive here
    const int x = 5 + static_cast<int>(pmUniform(P, t, 9, 7, 0) * (W - 10));
    const int y = 5 + static_cast<int>(pmUniform(P, t, 10, 7, 0) * (Hh - 10));
    bool all = true, nearEdge = false;
    for (int j = 0; j < kWindowSide; ++j)
      for (int i = 0; i < kWindowSide; ++i) {
        const double u = x + pmWindowOffset(i), v = y + pmWindowOffset(j);
        const double hz = Hm[6] * u + Hm[7] * v + Hm[8];
        const double su = (Hm[0] * u + Hm[1] * v + Hm[2]) / hz;
        const double sv = (Hm[3] * u + Hm[4] * v + Hm[5]) / hz;
        all = all && hz > 0 && su >= 0 && sv >= 0 && su <= W - 1 && sv <= Hh - 1;
        for (double e : {su, sv, W - 1 - su, Hh - 1 - sv})
          if (std::abs(e) < 1e-3) nearEdge = true;
      }
    if (nearEdge) continue;  // rounding may decide either way there
    PmWindow<1> win;
    pmLoadWindow(P, x, y, weights, &win);
    const float c = pmPhotometricCost(win, src, Hm, x, y);
    ++checked;
    (all ? inside : outside) += 1;
    EXPECT_EQ(c == kMaxCost, !all) << "t " << t << " at " << x << ", " << y << " cost " << c;
  }
  EXPECT_GT(inside, 200);
  EXPECT_GT(outside, 200);
  EXPECT_GT(checked, 3000);
}

struct FacadeRun {
  testing::SyntheticMvs scene = testing::makeFacadeMvs(160, 120, 5, 1.2);
  Workspace ws = testing::workspaceOf(scene);
  PatchMatchResult result = run(ws);
  static PatchMatchResult run(const Workspace& ws) {
    PatchMatchOptions o;
    o.backend = Backend::kCpu;
    return runPatchMatch(ws, o);
  }
};

const FacadeRun& facade() {
  static FacadeRun run;
  return run;
}

// Depth of the middle view against the truth: photometric, then with the geometric pass.
// At 160x120 the nearest source's disparity is about 7 px at 6 m, so 2 percent of depth is
// 0.14 px: the bounds hold the sub-pixel estimates of the textured surfaces; the rest is
// occlusion borders and the ground seen at grazing angles (measured: docs/benchmarks.md).
TEST(PatchMatchCpu, FacadeDepthAgainstTruth) {
  const FacadeRun& f = facade();
  const PatchMatchResult& r = f.result;
  const int mid = 2;
  for (double tol : {0.01, 0.02, 0.05}) {
    auto a = testing::scoreDepth(r.photometric[mid], f.scene.depth[mid], tol);
    auto b = testing::scoreDepth(r.geometric[mid], f.scene.depth[mid], tol);
    std::printf(
        "within %.0f%%: photometric completeness %.3f accuracy %.3f | geometric %.3f %.3f\n",
        100 * tol, a.completeness, a.accuracy, b.completeness, b.accuracy);
  }
  testing::DepthScore photo = testing::scoreDepth(r.photometric[mid], f.scene.depth[mid], 0.02);
  testing::DepthScore geo = testing::scoreDepth(r.geometric[mid], f.scene.depth[mid], 0.02);
  EXPECT_GT(photo.completeness, 0.62);
  EXPECT_GT(photo.accuracy, 0.78);
  EXPECT_LT(photo.medianRelError, 0.006);
  EXPECT_GT(geo.accuracy, photo.accuracy + 0.02);  // the geometric pass removes outliers
  EXPECT_GT(testing::scoreDepth(r.geometric[mid], f.scene.depth[mid], 0.05).accuracy, 0.92);
  // A depth map is either a plausible depth or 0 (invalid).
  for (float d : r.geometric[mid].depth)
    EXPECT_TRUE(d == 0 || (d >= f.ws.views[mid].depthMin && d <= f.ws.views[mid].depthMax));
}

// The fused cloud against the true surfaces, at 0.5, 1 and 2 percent of the 6 m scene depth.
TEST(PatchMatchCpu, FusedCloudAgainstTruth) {
  const FacadeRun& f = facade();
  FusionStats st;
  auto photo = fuseDepthMaps(f.ws, f.result.photometric, FusionOptions{});
  auto geo = fuseDepthMaps(f.ws, f.result.geometric, FusionOptions{}, &st);
  ASSERT_GT(geo.size(), 1000u);
  for (double tau : {0.03, 0.06, 0.12}) {
    auto a = testing::scoreCloud(photo, f.scene, tau);
    auto b = testing::scoreCloud(geo, f.scene, tau);
    std::printf(
        "tau %.2f m: photometric acc %.3f comp %.3f F1 %.3f | geometric %.3f %.3f %.3f (%zu, %zu "
        "points)\n",
        tau, a.accuracy, a.completeness, a.f1, b.accuracy, b.completeness, b.f1, photo.size(),
        geo.size());
  }
  testing::CloudScore g = testing::scoreCloud(geo, f.scene, 0.06);
  EXPECT_GT(g.accuracy, 0.9);
  EXPECT_GT(g.completeness, 0.6);
  // Normals point towards the cameras and are unit.
  for (const auto& p : geo) {
    double n2 = p.normal[0] * p.normal[0] + p.normal[1] * p.normal[1] + p.normal[2] * p.normal[2];
    ASSERT_NEAR(n2, 1.0, 1e-3);
  }
}

// Coarse to fine: the photometric pass at 80x60 upsampled as the start of 3 iterations at
// 160x120 gives depth as good as 6 iterations from random planes (within 3 points of
// completeness and accuracy at 2 percent; measured in docs/benchmarks.md).
TEST(PatchMatchCpu, MultiResolutionMatchesSingleResolution) {
  const FacadeRun& f = facade();
  PatchMatchOptions o;
  o.backend = Backend::kCpu;
  o.geometricIterations = 0;
  o.multiResolution = true;
  o.fineIterations = 3;
  const PatchMatchResult r = runPatchMatch(f.ws, o);
  EXPECT_TRUE(r.geometric.empty());
  EXPECT_GT(r.stats.coarseMs, 0.0);
  const int mid = 2;
  const auto single = testing::scoreDepth(f.result.photometric[mid], f.scene.depth[mid], 0.02);
  const auto multi = testing::scoreDepth(r.photometric[mid], f.scene.depth[mid], 0.02);
  std::printf("within 2%%: single completeness %.3f accuracy %.3f | multi %.3f %.3f\n",
              single.completeness, single.accuracy, multi.completeness, multi.accuracy);
  EXPECT_GT(multi.completeness, single.completeness - 0.03);
  EXPECT_GT(multi.accuracy, single.accuracy - 0.03);
}

// Half the workspace: a world point projects to the half-size pixel of its full-size pixel
// (pixel centres at integers: x' = (x + 0.5) / 2 - 0.5), and upsampling copies the nearest.
TEST(PatchMatchCpu, HalfWorkspaceAndUpsampling) {
  const FacadeRun& f = facade();
  const Workspace h = halfWorkspace(f.ws);
  ASSERT_EQ(h.views.size(), f.ws.views.size());
  const View &a = f.ws.views[1], &b = h.views[1];
  EXPECT_EQ(b.width, 80);
  EXPECT_EQ(b.height, 60);
  EXPECT_EQ(b.sources, a.sources);
  const Eigen::Vector3d X = a.R.transpose() * (Eigen::Vector3d(0.3, -0.2, 5.0) - a.t);
  const Eigen::Vector3d ca = a.R * X + a.t, cb = b.R * X + b.t;
  const double xa = a.fx * ca.x() / ca.z() + a.cx, xb = b.fx * cb.x() / cb.z() + b.cx;
  const double ya = a.fy * ca.y() / ca.z() + a.cy, yb = b.fy * cb.y() / cb.z() + b.cy;
  EXPECT_NEAR(xb, (xa + 0.5) / 2 - 0.5, 1e-9);
  EXPECT_NEAR(yb, (ya + 0.5) / 2 - 0.5, 1e-9);
  DepthMap c;
  c.resize(2, 2);
  for (int i = 0; i < 4; ++i) c.depth[i] = float(i + 1), c.normal[8 + i] = -1.0f;
  const DepthMap u = upsampleNearest(c, 4, 4);
  EXPECT_EQ(u.depth, (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  EXPECT_EQ(u.normal[32 + 15], -1.0f);
}

// The CPU result does not depend on the number of threads (red-black updates are in place).
TEST(PatchMatchCpu, IndependentOfThreadCount) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(48, 36, 3, 1.0);
  Workspace ws = testing::workspaceOf(s);
  std::vector<const std::uint8_t*> gray;
  for (const View& v : ws.views) gray.push_back(v.gray.data());
  PatchMatchOptions o;
  PmParams P = makeParams(ws, 1, false, o, gray, std::vector<const float*>(3, nullptr));
  DepthMap a, b;
  a.resize(48, 36), b.resize(48, 36);
#if defined(_OPENMP)
  int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  runReferenceCpu(P, true, 2, o, &a);
  omp_set_num_threads(std::max(2, threads));
  runReferenceCpu(P, true, 2, o, &b);
  omp_set_num_threads(threads);
#else
  runReferenceCpu(P, true, 2, o, &a);
  runReferenceCpu(P, true, 2, o, &b);
#endif
  EXPECT_EQ(a.depth, b.depth);
  EXPECT_EQ(a.normal, b.normal);
  EXPECT_EQ(a.cost, b.cost);
}

}  // namespace
}  // namespace vidmap::mvs
