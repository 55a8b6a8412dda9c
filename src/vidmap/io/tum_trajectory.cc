#include "vidmap/io/tum_trajectory.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"

namespace vidmap::io {

std::vector<TumPose> parseTumTrajectory(const std::string& text, const std::string& what,
                                        double maxNormError) {
  std::vector<TumPose> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string s; ls >> s;) f.push_back(s);
    if (f.empty() || f[0][0] == '#') continue;
    const std::string where = what + " line " + std::to_string(number);
    if (f.size() != 8)
      throw Error(where + ": expected 8 fields (timestamp tx ty tz qx qy qz qw), got " +
                  std::to_string(f.size()));
    double v[8];
    for (int i = 0; i < 8; ++i) {
      char* end = nullptr;
      v[i] = std::strtod(f[i].c_str(), &end);
      if (end == f[i].c_str() || *end != '\0' || !std::isfinite(v[i]))
        throw Error(where + ": '" + f[i] + "' is not a finite number");
    }
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

}  // namespace vidmap::io
