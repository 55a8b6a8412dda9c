#include "vidmap/sfm/focal_estimation.h"

#include <Eigen/SVD>
#include <cmath>
#include <limits>

#include "vidmap/geometry/refine.h"

namespace vidmap::sfm {

double focalCost(const FocalObservation& o, double f, double cx, double cy) {
  geometry::Mat3 K;
  K << f, 0, cx, 0, f, cy, 0, 0, 1;
  if (o.kind == FocalObservation::kFundamental) {
    const geometry::Mat3 E = K.transpose() * o.M * K;
    const Eigen::Vector3d s = Eigen::JacobiSVD<geometry::Mat3>(E).singularValues();
    return s(0) + s(1) > 0 ? (s(0) - s(1)) / (s(0) + s(1)) : 1.0;
  }
  geometry::Mat3 Kinv;
  Kinv << 1 / f, 0, -cx / f, 0, 1 / f, -cy / f, 0, 0, 1;
  const geometry::Mat3 R = Kinv * o.M * K;
  const Eigen::Vector3d s = Eigen::JacobiSVD<geometry::Mat3>(R).singularValues();
  return s(0) + s(2) > 0 ? (s(0) - s(2)) / (s(0) + s(2)) : 1.0;
}

std::optional<FocalEstimate> estimateFocal(const std::vector<FocalObservation>& obs, double cx,
                                           double cy, double minFocal, double maxFocal) {
  double wsum = 0;
  for (const auto& o : obs) wsum += o.weight;
  if (obs.empty() || !(wsum > 0) || !(minFocal > 0) || !(maxFocal > minFocal)) return std::nullopt;
  auto cost = [&](double f) {
    double c = 0;
    for (const auto& o : obs) c += o.weight * focalCost(o, f, cx, cy);
    return c / wsum;
  };
  // A log grid (1% steps), then golden-section search in the best cell's neighbours.
  const int n = static_cast<int>(std::ceil(std::log(maxFocal / minFocal) / std::log(1.01)));
  int best = 0;
  double bestCost = std::numeric_limits<double>::infinity(), mean = 0;
  std::vector<double> grid(n + 1);
  for (int i = 0; i <= n; ++i) {
    grid[i] = minFocal * std::pow(maxFocal / minFocal, static_cast<double>(i) / n);
    const double c = cost(grid[i]);
    mean += c / (n + 1);
    if (c < bestCost) bestCost = c, best = i;
  }
  double a = grid[std::max(0, best - 1)], b = grid[std::min(n, best + 1)];
  const double g = 0.5 * (std::sqrt(5.0) - 1);
  double x1 = b - g * (b - a), x2 = a + g * (b - a), c1 = cost(x1), c2 = cost(x2);
  for (int it = 0; it < 40; ++it) {
    if (c1 < c2) {
      b = x2, x2 = x1, c2 = c1, x1 = b - g * (b - a), c1 = cost(x1);
    } else {
      a = x1, x1 = x2, c1 = c2, x2 = a + g * (b - a), c2 = cost(x2);
    }
  }
  FocalEstimate e;
  e.focal = 0.5 * (a + b);
  e.cost = cost(e.focal);
  if (e.cost > bestCost) e.focal = grid[best], e.cost = bestCost;
  e.sharpness = e.cost > 0 ? mean / e.cost : std::numeric_limits<double>::infinity();
  e.atBoundary = best == 0 || best == n;
  return e;
}

namespace {

struct NormalizedPair {
  geometry::Vec3List x1, x2;  // (p - c) / f, 1: at the profile's current f
  geometry::Pose pose;
};

// Sampson residual of one match under E = [t]x R, in normalized units.
double sampson(const geometry::Pose& pose, const geometry::Vec3& x1, const geometry::Vec3& x2) {
  geometry::Mat3 tx;
  tx << 0, -pose.t.z(), pose.t.y(), pose.t.z(), 0, -pose.t.x(), -pose.t.y(), pose.t.x(), 0;
  return geometry::sampsonResidual(tx * pose.R, x1, x2, nullptr);
}

void normalize(const geometry::Vec2List& p, double f, double cx, double cy, geometry::Vec3List* x) {
  x->resize(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    (*x)[i] = geometry::Vec3((p[i].x() - cx) / f, (p[i].y() - cy) / f, 1);
}

}  // namespace

std::optional<FocalProfile> profileFocal(const std::vector<FocalPair>& pairs, double cx, double cy,
                                         double focal0, double minFocal, double maxFocal,
                                         double maxErrorPx, double lossPx) {
  if (pairs.empty() || !(minFocal > 0) || !(maxFocal > minFocal) || !(focal0 >= minFocal) ||
      !(focal0 <= maxFocal))
    return std::nullopt;
  geometry::LmOptions lm;
  lm.max_iterations = 50;
  // Each pair's inliers and start pose at focal0: the given pose and, as its translation may be
  // missing (a rotation) or wrong, the three axes (t and -t give one E).
  std::vector<NormalizedPair> np;
  std::vector<geometry::Vec2List> q1, q2;
  int points = 0;
  for (const auto& pr : pairs) {
    NormalizedPair n;
    normalize(pr.p1, focal0, cx, cy, &n.x1);
    normalize(pr.p2, focal0, cx, cy, &n.x2);
    std::vector<geometry::Vec3> starts = {geometry::Vec3::UnitX(), geometry::Vec3::UnitY(),
                                          geometry::Vec3::UnitZ()};
    if (pr.relative.t.norm() > 0) starts.insert(starts.begin(), pr.relative.t.normalized());
    double best = std::numeric_limits<double>::infinity();
    for (const auto& t : starts) {
      geometry::Pose pose{pr.relative.R, t};
      lm.loss_scale = lossPx / focal0;
      const auto sum = geometry::refineRelativePose(n.x1, n.x2, {}, &pose, lm);
      if (sum.final_cost < best) best = sum.final_cost, n.pose = pose;
    }
    if (!std::isfinite(best)) continue;
    geometry::Vec2List a, b;
    for (size_t i = 0; i < pr.p1.size(); ++i)
      if (std::abs(sampson(n.pose, n.x1[i], n.x2[i])) * focal0 <= maxErrorPx)
        a.push_back(pr.p1[i]), b.push_back(pr.p2[i]);
    if (a.size() < 15) continue;
    points += static_cast<int>(a.size());
    q1.push_back(std::move(a));
    q2.push_back(std::move(b));
    np.push_back(std::move(n));
  }
  if (np.empty()) return std::nullopt;
  // The summed robust cost at f, each pair's pose refined from `poses` (updated in place).
  auto cost = [&](double f, std::vector<geometry::Pose>* poses) {
    double c = 0;
    geometry::LmOptions o = lm;
    o.loss_scale = lossPx / f;
    for (size_t k = 0; k < np.size(); ++k) {
      geometry::Vec3List x1, x2;
      normalize(q1[k], f, cx, cy, &x1);
      normalize(q2[k], f, cx, cy, &x2);
      const auto sum = geometry::refineRelativePose(x1, x2, {}, &(*poses)[k], o);
      c += sum.final_cost * f * f;  // the Cauchy cost scales with the units squared
    }
    return c;
  };
  std::vector<geometry::Pose> start(np.size());
  for (size_t k = 0; k < np.size(); ++k) start[k] = np[k].pose;
  // A log grid (1% steps), walked out from focal0 on either side, each step from its
  // neighbour's poses (the pose moves with f; a cold start could fall into another minimum).
  const int n = static_cast<int>(std::ceil(std::log(maxFocal / minFocal) / std::log(1.01)));
  std::vector<double> grid(n + 1), gc(n + 1);
  std::vector<std::vector<geometry::Pose>> gp(n + 1);
  for (int i = 0; i <= n; ++i)
    grid[i] = minFocal * std::pow(maxFocal / minFocal, static_cast<double>(i) / n);
  const int i0 = static_cast<int>(
      std::lround(std::log(focal0 / minFocal) / std::log(maxFocal / minFocal) * n));
  std::vector<geometry::Pose> poses = start;
  const double c0 = cost(focal0, &poses);
  for (int i = i0; i <= n; ++i) gc[i] = cost(grid[i], &poses), gp[i] = poses;
  poses = gp[i0];
  for (int i = i0 - 1; i >= 0; --i) gc[i] = cost(grid[i], &poses), gp[i] = poses;
  int best = 0;
  for (int i = 1; i <= n; ++i)
    if (gc[i] < gc[best]) best = i;
  FocalProfile out;
  out.points = points;
  out.focal = grid[best];
  out.cost = gc[best];
  out.atBoundary = best == 0 || best == n;
  if (out.atBoundary) return out;
  // Golden-section search between the best cell's neighbours.
  double a = grid[best - 1], b = grid[best + 1];
  const double g = 0.5 * (std::sqrt(5.0) - 1);
  std::vector<geometry::Pose> p1 = gp[best], p2 = gp[best];
  double x1 = b - g * (b - a), x2 = a + g * (b - a), c1 = cost(x1, &p1), c2 = cost(x2, &p2);
  for (int it = 0; it < 20; ++it) {
    if (c1 < c2) {
      b = x2, x2 = x1, c2 = c1, p2 = p1, x1 = b - g * (b - a), c1 = cost(x1, &p1);
    } else {
      a = x1, x1 = x2, c1 = c2, p1 = p2, x2 = a + g * (b - a), c2 = cost(x2, &p2);
    }
  }
  if (std::min(c1, c2) < out.cost) out.focal = c1 < c2 ? x1 : x2, out.cost = std::min(c1, c2);
  out.startCost = c0;
  out.ratio = out.cost > 0 ? std::max(0.0, c0 - out.cost) * points / out.cost : 0.0;
  return out;
}

}  // namespace vidmap::sfm
