// Trajectory accuracy against ground truth: timestamp association, the similarity (Sim(3))
// that best aligns estimated camera centres to the truth (Umeyama, "Least-squares estimation
// of transformation parameters between two point patterns", PAMI 1991), and the absolute
// trajectory error (ATE RMSE) and rotation error after that alignment (geometry/similarity.h), as
// the TUM RGB-D benchmark defines them (Sturm et al., IROS 2012).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <filesystem>
#include <vector>

#include "vidmap/geometry/similarity.h"

namespace vidmap::sfm {

// A camera pose: camera-to-world rotation and camera centre, at a time in seconds.
struct StampedPose {
  double t = 0;
  Eigen::Quaterniond q_wc = Eigen::Quaterniond::Identity();
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
};

// Reads a TUM trajectory ("t tx ty tz qx qy qz qw" per line, camera-to-world, '#' comments).
// A malformed line is a vidmap::Error naming the file and line number.
std::vector<StampedPose> readTumTrajectory(const std::filesystem::path& path);

// For each estimated pose, the ground-truth pose nearest in time (within maxDtSeconds),
// interpolated linearly (slerp) between the two neighbours. Pairs with no match are dropped.
struct PosePair {
  StampedPose est, gt;
};
std::vector<PosePair> associate(const std::vector<StampedPose>& est,
                                const std::vector<StampedPose>& gt, double maxDtSeconds = 0.02);

// The similarity and Umeyama's fit live in geometry/similarity.h.
using geometry::alignUmeyama;
using geometry::Sim3;

// The similarity whose rotation best maps the estimated orientations onto the truth's (the
// chordal L2 mean of R_gt R_est^T), with the scale and offset of least squares of the centres
// under that rotation. Unlike Umeyama's it stays defined on straight paths (collinear
// centres). Needs at least one pair (otherwise a vidmap::Error).
Sim3 alignByOrientations(const std::vector<PosePair>& pairs);

struct TrajectoryError {
  int pairs = 0;
  double ate_rmse = 0;  // metres (units of the truth), after Sim(3) alignment
  double ate_median = 0;
  double ate_max = 0;
  double rot_rmse_deg = 0;  // rotation error after alignment
  double rot_median_deg = 0;
  Sim3 alignment;
};

TrajectoryError evaluateTrajectory(const std::vector<PosePair>& pairs, bool withScale = true);

}  // namespace vidmap::sfm
