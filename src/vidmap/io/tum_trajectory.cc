#include "vidmap/io/tum_trajectory.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/io/text_fields.h"

namespace vidmap::io {

std::vector<TumPose> parseTumTrajectory(const std::string& text, const std::string& what,
                                        double maxNormError) {
  std::vector<TumPose> out;
  for (const auto& [number, f] : dataLines(text)) {
    const std::string where = what + " line " + std::to_string(number);
    if (f.size() != 8)
      throw Error(where + ": expected 8 fields (timestamp tx ty tz qx qy qz qw), got " +
                  std::to_string(f.size()));
    double v[8];
    for (int i = 0; i < 8; ++i) v[i] = parseFiniteDouble(f[i], where);
    TumPose p;
    p.t = v[0];
    p.position = {v[1], v[2], v[3]};
    const Eigen::Quaterniond q(v[7], v[4], v[5], v[6]);
    if (!(std::abs(q.norm() - 1) <= maxNormError))
      throw Error(where + ": the quaternion is not of unit length (norm " +
                  std::to_string(q.norm()) + ")");
    p.orientation = q.normalized();
    p.line = number;
    out.push_back(p);
  }
  return out;
}

std::vector<TumPose> readTumTrajectory(const std::filesystem::path& path, double maxNormError) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open trajectory " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return parseTumTrajectory(text.str(), path.string(), maxNormError);
}

std::string formatTumTrajectory(const std::vector<TumPose>& poses, const std::string& header,
                                int timestampDecimals) {
  std::string out;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) out += "# " + line + "\n";
  const auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  for (const TumPose& p : poses) {
    char ts[64];
    std::snprintf(ts, sizeof ts, "%.*f", timestampDecimals, p.t);
    const Eigen::Vector3d& c = p.position;
    const Eigen::Quaterniond& q = p.orientation;
    out += std::string(ts) + " " + num(c.x()) + " " + num(c.y()) + " " + num(c.z()) + " " +
           num(q.x()) + " " + num(q.y()) + " " + num(q.z()) + " " + num(q.w()) + "\n";
  }
  return out;
}

}  // namespace vidmap::io
