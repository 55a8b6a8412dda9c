// Fusion against its definition: the straightforward sequential clustering (COLMAP's
// stereo_fusion order: views, then pixels; each source's agreeing pixel joins while unused),
// written here in world coordinates, one pixel at a time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "vidmap/mvs/fusion.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/mvs/testing/synthetic.h"

namespace vidmap::mvs {
namespace {

Eigen::Vector3d world(const View& V, const DepthMap& M, long p) {
  const double d = M.depth[p];
  const int x = static_cast<int>(p % M.width), y = static_cast<int>(p / M.width);
  return V.R.transpose() * (Eigen::Vector3d((x - V.cx) / V.fx * d, (y - V.cy) / V.fy * d, d) - V.t);
}

Eigen::Vector3d worldNormal(const View& V, const DepthMap& M, long p) {
  const long n = static_cast<long>(M.depth.size());
  return V.R.transpose() * Eigen::Vector3d(M.normal[p], M.normal[n + p], M.normal[2 * n + p]);
}

std::vector<Eigen::Vector3d> sequentialFusion(const Workspace& ws,
                                              const std::vector<DepthMap>& maps,
                                              const FusionOptions& o) {
  std::vector<std::vector<char>> used(ws.views.size());
  for (size_t v = 0; v < ws.views.size(); ++v)
    if (!maps[v].empty()) used[v].assign(maps[v].depth.size(), 0);
  const double cosMax = std::cos(o.maxNormalErrorDeg * M_PI / 180.0);
  std::vector<Eigen::Vector3d> out;
  for (size_t r = 0; r < ws.views.size(); ++r) {
    if (maps[r].empty()) continue;
    const View& V = ws.views[r];
    const DepthMap& M = maps[r];
    for (long p = 0; p < static_cast<long>(M.depth.size()); ++p) {
      if (!(M.depth[p] > 0) || used[r][p]) continue;
      const Eigen::Vector3d X = world(V, M, p), N = worldNormal(V, M, p);
      const int x = static_cast<int>(p % M.width), y = static_cast<int>(p / M.width);
      std::vector<std::pair<int, long>> members;
      for (int s : V.sources) {
        if (maps[s].empty()) continue;
        const View& S = ws.views[s];
        const DepthMap& MS = maps[s];
        const Eigen::Vector3d xs = S.R * X + S.t;
        if (!(xs.z() > 0)) continue;
        const int u = static_cast<int>(std::floor(S.fx * xs.x() / xs.z() + S.cx + 0.5));
        const int v = static_cast<int>(std::floor(S.fy * xs.y() / xs.z() + S.cy + 0.5));
        if (u < 0 || v < 0 || u >= MS.width || v >= MS.height) continue;
        const long q = static_cast<long>(v) * MS.width + u;
        if (used[s][q] || !(MS.depth[q] > 0)) continue;
        if (std::abs(MS.depth[q] - xs.z()) > o.maxDepthError * xs.z()) continue;
        const Eigen::Vector3d back = V.R * world(S, MS, q) + V.t;
        if (!(back.z() > 0)) continue;
        const double eu = V.fx * back.x() / back.z() + V.cx - x;
        const double ev = V.fy * back.y() / back.z() + V.cy - y;
        if (eu * eu + ev * ev > o.maxReprojectionError * o.maxReprojectionError) continue;
        if (worldNormal(S, MS, q).dot(N) < cosMax) continue;
        members.emplace_back(s, q);
      }
      if (static_cast<int>(members.size()) + 1 < o.minPixels) continue;
      used[r][p] = 1;
      Eigen::Vector3d sum = X;
      for (auto [s, q] : members) used[s][q] = 1, sum += world(ws.views[s], maps[s], q);
      out.push_back(sum / static_cast<double>(members.size() + 1));
    }
  }
  return out;
}

// The two-phase fusion gives the sequential definition's cloud, with its clustering in one
// pass and in parallel: the same number of points and the same positions, up to threshold
// tests that rounding in the relative poses flips (none on this scene; the bound allows 0.2
// percent); and the two clusterings give the same points in the same order.
TEST(Fusion, EqualsTheSequentialDefinition) {
  testing::SyntheticMvs s = testing::makeFacadeMvs(96, 72, 4, 1.2);
  Workspace ws = testing::workspaceOf(s);
  PatchMatchOptions o;
  o.backend = Backend::kCpu;
  o.photometricIterations = 3;
  o.geometricIterations = 1;
  const PatchMatchResult r = runPatchMatch(ws, o);
  for (int minPixels : {2, 3}) {
    FusionOptions fo;
    fo.minPixels = minPixels;
    fo.parallelClusteringThreads = 1;  // parallel whatever the machine
    FusionStats st;
    const auto fast = fuseDepthMaps(ws, r.final(), fo, &st);
    fo.parallelClusteringThreads = 0;  // one pass in pixel order
    FusionStats st1;
    const auto onePass = fuseDepthMaps(ws, r.final(), fo, &st1);
    ASSERT_EQ(fast.size(), onePass.size());
    for (size_t i = 0; i < fast.size(); ++i)
      for (int c = 0; c < 3; ++c) {
        ASSERT_EQ(fast[i].xyz[c], onePass[i].xyz[c]) << i;
        ASSERT_EQ(fast[i].rgb[c], onePass[i].rgb[c]) << i;
      }
    EXPECT_EQ(st.fusedPixels, st1.fusedPixels);
    EXPECT_EQ(st.validPixels, st1.validPixels);
    std::printf("records %lld, decided in order %lld\n", (long long)st.records,
                (long long)st.dependentRecords);
    const auto ref = sequentialFusion(ws, r.final(), fo);
    std::printf("min pixels %d: %zu points, sequential definition %zu\n", minPixels, fast.size(),
                ref.size());
    ASSERT_GT(ref.size(), 500u);
    EXPECT_NEAR(double(fast.size()), double(ref.size()), 0.002 * ref.size());
    EXPECT_EQ(st.points, static_cast<std::int64_t>(fast.size()));
    std::map<std::tuple<long, long, long>, int> grid;  // positions to 0.1 mm
    auto key = [](double x, double y, double z) {
      return std::make_tuple(std::lround(x * 1e4), std::lround(y * 1e4), std::lround(z * 1e4));
    };
    for (const auto& p : ref) ++grid[key(p.x(), p.y(), p.z())];
    long found = 0;
    for (const auto& p : fast) found += grid.count(key(p.xyz[0], p.xyz[1], p.xyz[2])) > 0;
    EXPECT_GT(double(found), 0.995 * fast.size());
  }
}

}  // namespace
}  // namespace vidmap::mvs
