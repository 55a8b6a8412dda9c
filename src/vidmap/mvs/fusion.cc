#include "vidmap/mvs/fusion.h"

#include <cmath>

#include "vidmap/core/check.h"

namespace vidmap::mvs {

void FusionOptions::check() const {
  checkRange("fusion.min_pixels", minPixels, 1, 1000);
  checkRange("fusion.max_reprojection_error", maxReprojectionError, 0.0, 1e3);
  checkRange("fusion.max_depth_error", maxDepthError, 0.0, 1.0);
  checkRange("fusion.max_normal_error_deg", maxNormalErrorDeg, 0.0, 180.0);
}

std::vector<io::PlyPoint> fuseDepthMaps(const Workspace& ws, const std::vector<DepthMap>& maps,
                                        const FusionOptions& o, FusionStats* stats) {
  o.check();
  const size_t n = ws.views.size();
  std::vector<std::vector<char>> used(n);
  for (size_t v = 0; v < n; ++v)
    if (v < maps.size() && !maps[v].empty()) used[v].assign(maps[v].depth.size(), 0);
  const double cosMax = std::cos(o.maxNormalErrorDeg * M_PI / 180.0);
  FusionStats st;
  std::vector<io::PlyPoint> points;
  struct Member {
    int view;
    long pixel;
    Eigen::Vector3d X, N;
    Rgb8 rgb;
  };
  std::vector<Member> cluster;
  for (size_t r = 0; r < n; ++r) {
    if (used[r].empty()) continue;
    const View& V = ws.views[r];
    const DepthMap& M = maps[r];
    const long np = static_cast<long>(M.depth.size());
    const Eigen::Matrix3d Rt = V.R.transpose();
    for (long p = 0; p < np; ++p) {
      const float d = M.depth[p];
      if (!(d > 0)) continue;
      ++st.validPixels;
      if (used[r][p]) continue;
      const int x = static_cast<int>(p % M.width), y = static_cast<int>(p / M.width);
      Eigen::Vector3d Xc((x - V.cx) / V.fx * d, (y - V.cy) / V.fy * d, d);
      Eigen::Vector3d X = Rt * (Xc - V.t);
      Eigen::Vector3d N = Rt * Eigen::Vector3d(M.normal[p], M.normal[np + p], M.normal[2 * np + p]);
      cluster.clear();
      cluster.push_back({static_cast<int>(r), p, X, N, V.rgb.data()[p]});
      for (int s : V.sources) {
        if (used[s].empty()) continue;
        const View& S = ws.views[s];
        const DepthMap& MS = maps[s];
        Eigen::Vector3d xs = S.R * X + S.t;
        if (!(xs.z() > 0)) continue;
        const int u = static_cast<int>(std::floor(S.fx * xs.x() / xs.z() + S.cx + 0.5));
        const int v = static_cast<int>(std::floor(S.fy * xs.y() / xs.z() + S.cy + 0.5));
        if (u < 0 || v < 0 || u >= MS.width || v >= MS.height) continue;
        const long q = static_cast<long>(v) * MS.width + u;
        const float ds = MS.depth[q];
        if (!(ds > 0) || used[s][q]) continue;
        if (std::abs(ds - xs.z()) > o.maxDepthError * xs.z()) continue;
        Eigen::Vector3d Xs =
            S.R.transpose() *
            (Eigen::Vector3d((u - S.cx) / S.fx * ds, (v - S.cy) / S.fy * ds, ds) - S.t);
        Eigen::Vector3d back = V.R * Xs + V.t;
        if (!(back.z() > 0)) continue;
        const double eu = V.fx * back.x() / back.z() + V.cx - x;
        const double ev = V.fy * back.y() / back.z() + V.cy - y;
        if (eu * eu + ev * ev > o.maxReprojectionError * o.maxReprojectionError) continue;
        const long nps = static_cast<long>(MS.depth.size());
        Eigen::Vector3d Ns = S.R.transpose() * Eigen::Vector3d(MS.normal[q], MS.normal[nps + q],
                                                               MS.normal[2 * nps + q]);
        if (Ns.dot(N) < cosMax) continue;
        cluster.push_back({s, q, Xs, Ns, S.rgb.data()[q]});
      }
      if (static_cast<int>(cluster.size()) < o.minPixels) continue;
      Eigen::Vector3d sx = Eigen::Vector3d::Zero(), sn = Eigen::Vector3d::Zero(), sc = sn;
      for (const Member& m : cluster) {
        used[m.view][m.pixel] = 1;
        sx += m.X, sn += m.N;
        sc += Eigen::Vector3d(m.rgb.r, m.rgb.g, m.rgb.b);
      }
      const double k = static_cast<double>(cluster.size());
      io::PlyPoint pt;
      Eigen::Vector3d mx = sx / k, mn = sn.normalized(), mc = sc / k;
      for (int c = 0; c < 3; ++c) {
        pt.xyz[c] = static_cast<float>(mx[c]);
        pt.normal[c] = static_cast<float>(mn[c]);
        pt.rgb[c] = static_cast<std::uint8_t>(std::lround(mc[c]));
      }
      points.push_back(pt);
      st.fusedPixels += static_cast<std::int64_t>(cluster.size());
    }
  }
  st.points = static_cast<std::int64_t>(points.size());
  if (stats) *stats = st;
  return points;
}

}  // namespace vidmap::mvs
