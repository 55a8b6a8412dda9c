#include "vidmap/sfm/model_trajectory.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"

namespace vidmap::sfm {

namespace fs = std::filesystem;

std::map<std::string, double> readImageListTimes(const fs::path& list) {
  std::ifstream in(list);
  if (!in) throw Error("cannot open the image list " + list.string());
  std::map<std::string, double> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream s(line);
    double t;
    std::string path;
    if (!(s >> t >> path))
      throw Error(list.string() + ":" + std::to_string(n) + ": expected 'timestamp path'");
    out[fs::path(path).filename().string()] = t;
  }
  return out;
}

std::vector<StampedPose> modelTrajectory(const io::ColmapModel& model,
                                         const std::map<std::string, double>& times) {
  std::vector<StampedPose> out;
  for (const auto& [id, im] : model.images) {
    auto it = times.find(fs::path(im.name).filename().string());
    if (it == times.end()) continue;
    const Eigen::Quaterniond q_cw(im.qvec[0], im.qvec[1], im.qvec[2], im.qvec[3]);
    const Eigen::Vector3d t(im.tvec[0], im.tvec[1], im.tvec[2]);
    StampedPose p;
    p.t = it->second;
    p.q_wc = q_cw.normalized().conjugate();
    p.c = -(p.q_wc * t);
    out.push_back(p);
  }
  std::sort(out.begin(), out.end(),
            [](const StampedPose& a, const StampedPose& b) { return a.t < b.t; });
  return out;
}

}  // namespace vidmap::sfm
