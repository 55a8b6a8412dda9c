// Camera trajectories of COLMAP models (written by vidmap or by COLMAP) for evaluation against
// ground truth (trajectory_eval.h): each registered image's camera centre and camera-to-world
// rotation, stamped with the time its name has in a TUM image list ("timestamp path" lines).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "vidmap/io/colmap_model.h"
#include "vidmap/sfm/trajectory_eval.h"

namespace vidmap::sfm {

// File name (without folders) -> timestamp, from a TUM list. Errors name the file and line.
std::map<std::string, double> readImageListTimes(const std::filesystem::path& list);

// The poses of the model's images whose file name (without folders) is in `times`, in time
// order.
std::vector<StampedPose> modelTrajectory(const io::ColmapModel& model,
                                         const std::map<std::string, double>& times);

}  // namespace vidmap::sfm
