#include "vidmap/sfm/trajectory_eval.h"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/io/tum_trajectory.h"

namespace vidmap::sfm {

std::vector<StampedPose> readTumTrajectory(const std::filesystem::path& path) {
  // Real ground truth rounds its quaternions (4 decimals in TUM's files): a loose norm test.
  std::vector<StampedPose> poses;
  for (const io::TumPose& t : io::readTumTrajectory(path, 0.5)) {
    StampedPose p;
    p.t = t.t;
    p.c = t.position;
    p.q_wc = t.orientation;
    poses.push_back(p);
  }
  std::sort(poses.begin(), poses.end(), [](auto& a, auto& b) { return a.t < b.t; });
  return poses;
}

std::vector<PosePair> associate(const std::vector<StampedPose>& est,
                                const std::vector<StampedPose>& gt, double maxDt) {
  std::vector<PosePair> out;
  if (gt.empty()) return out;
  for (const auto& e : est) {
    auto it = std::lower_bound(gt.begin(), gt.end(), e.t,
                               [](const StampedPose& p, double t) { return p.t < t; });
    StampedPose g;
    if (it == gt.end() || it == gt.begin()) {
      const auto& n = it == gt.end() ? gt.back() : gt.front();
      if (std::abs(n.t - e.t) > maxDt) continue;
      g = n;
    } else {
      const auto& a = *(it - 1);
      const auto& b = *it;
      if (e.t - a.t > maxDt && b.t - e.t > maxDt) continue;
      double w = (e.t - a.t) / std::max(b.t - a.t, 1e-12);
      g.t = e.t;
      g.c = (1 - w) * a.c + w * b.c;
      g.q_wc = a.q_wc.slerp(w, b.q_wc);
    }
    out.push_back({e, g});
  }
  return out;
}

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}
}  // namespace

Sim3 alignByOrientations(const std::vector<PosePair>& pairs) {
  if (pairs.empty()) throw Error("alignment needs at least one pose pair");
  Eigen::Matrix3d M = Eigen::Matrix3d::Zero();
  Eigen::Vector3d me = Eigen::Vector3d::Zero(), mg = Eigen::Vector3d::Zero();
  for (const auto& p : pairs) {
    M += p.gt.q_wc.toRotationMatrix() * p.est.q_wc.toRotationMatrix().transpose();
    me += p.est.c;
    mg += p.gt.c;
  }
  me /= static_cast<double>(pairs.size());
  mg /= static_cast<double>(pairs.size());
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(M, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d D = Eigen::Matrix3d::Identity();
  D(2, 2) = (svd.matrixU() * svd.matrixV().transpose()).determinant() < 0 ? -1 : 1;
  Sim3 sim;
  sim.R = svd.matrixU() * D * svd.matrixV().transpose();
  double num = 0, den = 0;
  for (const auto& p : pairs) {
    num += (sim.R * (p.est.c - me)).dot(p.gt.c - mg);
    den += (p.est.c - me).squaredNorm();
  }
  sim.s = den > 0 ? num / den : 0;
  sim.t = mg - sim.s * sim.R * me;
  return sim;
}

TrajectoryError evaluateTrajectory(const std::vector<PosePair>& pairs, bool withScale) {
  std::vector<Eigen::Vector3d> est, gt;
  for (const auto& p : pairs) {
    est.push_back(p.est.c);
    gt.push_back(p.gt.c);
  }
  TrajectoryError r;
  r.pairs = static_cast<int>(pairs.size());
  r.alignment = alignUmeyama(est, gt, withScale);
  std::vector<double> d, rot;
  double sum = 0, sumRot = 0;
  Eigen::Quaterniond qAlign(r.alignment.R);
  for (const auto& p : pairs) {
    double e = (p.gt.c - r.alignment.apply(p.est.c)).norm();
    d.push_back(e);
    sum += e * e;
    r.ate_max = std::max(r.ate_max, e);
    double a = (p.gt.q_wc.inverse() * (qAlign * p.est.q_wc)).normalized().vec().norm();
    double deg = 2 * std::asin(std::min(1.0, a)) * 180 / M_PI;
    rot.push_back(deg);
    sumRot += deg * deg;
  }
  r.ate_rmse = std::sqrt(sum / r.pairs);
  r.ate_median = median(d);
  r.rot_rmse_deg = std::sqrt(sumRot / r.pairs);
  r.rot_median_deg = median(rot);
  return r;
}

}  // namespace vidmap::sfm
