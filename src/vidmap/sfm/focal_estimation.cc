#include "vidmap/sfm/focal_estimation.h"

#include <Eigen/SVD>
#include <cmath>
#include <limits>

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

}  // namespace vidmap::sfm
