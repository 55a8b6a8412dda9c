// TUM RGB-D trajectory files ("timestamp tx ty tz qx qy qz qw" per line, the camera-to-world
// pose; '#' comments; J. Sturm et al., "A Benchmark for the Evaluation of RGB-D SLAM Systems",
// IROS 2012, file formats). The one reader behind the synthetic truth (synth) and trajectory
// evaluation (sfm), and the one writer of synth's truth and the reconstruction's trajectory.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <filesystem>
#include <string>
#include <vector>

namespace vidmap::io {

struct TumPose {
  double t = 0;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();               // camera centre
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();  // camera to world, unit
  int line = 0;                                                     // in the text, from 1
};

// Parses the text of a trajectory in file order. Every data line needs 8 finite numbers and a
// quaternion whose norm is within maxNormError of 1 (it is returned normalised); anything
// else is a vidmap::Error naming `what` and the line. Text without poses gives an empty list.
std::vector<TumPose> parseTumTrajectory(const std::string& text, const std::string& what,
                                        double maxNormError);
std::vector<TumPose> readTumTrajectory(const std::filesystem::path& path, double maxNormError);

// The text of a trajectory: `header` (each line prefixed with "# ", may be empty), then one
// line per pose in the given order, the timestamp with timestampDecimals decimals and the
// numbers at full precision (%.17g: they read back bit for bit). The line field is ignored.
std::string formatTumTrajectory(const std::vector<TumPose>& poses, const std::string& header,
                                int timestampDecimals = 9);

}  // namespace vidmap::io
