// The pipeline tests' trajectory accuracy: a written model against a TUM ground truth.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "vidmap/io/colmap_model.h"
#include "vidmap/sfm/model_trajectory.h"
#include "vidmap/sfm/trajectory_eval.h"

namespace vidmap::pipeline {

struct Accuracy {
  int evaluated = 0;
  double ateRel = 0;  // ATE RMSE / spread of the true centres
  double rotDeg = 0;  // RMS orientation error after the best rotation
  double spread = 0;
};

// The model in modelDir (its images named as in `list`, a TUM list) against `groundtruth`,
// poses paired within maxDtSeconds. Aligns the estimate to the truth with
// sfm::alignByOrientations (the rotation that best maps the orientations, then scale and
// translation of the centres by least squares). Unlike a Umeyama fit of the centres alone,
// this stays defined on straight paths.
inline Accuracy trajectoryAccuracy(const std::filesystem::path& modelDir,
                                   const std::filesystem::path& list,
                                   const std::filesystem::path& groundtruth, double maxDtSeconds) {
  const io::ColmapModel m = io::readColmapModel(modelDir);
  const auto est = sfm::modelTrajectory(m, sfm::readImageListTimes(list));
  const auto gt = sfm::readTumTrajectory(groundtruth);
  const auto pairs = sfm::associate(est, gt, maxDtSeconds);
  Accuracy a;
  a.evaluated = static_cast<int>(pairs.size());
  if (pairs.size() < 2) return a;
  const sfm::Sim3 sim = sfm::alignByOrientations(pairs);
  Eigen::Vector3d mg = Eigen::Vector3d::Zero();
  for (const auto& p : pairs) mg += p.gt.c;
  mg /= static_cast<double>(pairs.size());
  double ate = 0, rot = 0, spread = 0;
  for (const auto& p : pairs) {
    ate += (sim.apply(p.est.c) - p.gt.c).squaredNorm();
    spread += (p.gt.c - mg).squaredNorm();
    const Eigen::Matrix3d e = sim.R * p.est.q_wc.toRotationMatrix();
    const double c = 0.5 * ((e.transpose() * p.gt.q_wc.toRotationMatrix()).trace() - 1);
    rot += std::pow(std::acos(std::clamp(c, -1.0, 1.0)) * 180 / M_PI, 2);
  }
  a.spread = std::sqrt(spread / static_cast<double>(pairs.size()));
  a.ateRel = std::sqrt(ate / static_cast<double>(pairs.size())) / a.spread;
  a.rotDeg = std::sqrt(rot / static_cast<double>(pairs.size()));
  return a;
}

}  // namespace vidmap::pipeline
