#include "vidmap/io/ply.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"

namespace vidmap::io {

namespace fs = std::filesystem;

void writePly(const fs::path& path, const std::vector<PlyPoint>& points, bool withNormals) {
  for (size_t i = 0; i < points.size(); ++i)
    for (float v : points[i].xyz)
      if (!std::isfinite(v)) throw Error("PLY point " + std::to_string(i) + " is not finite");
  writeAtomically(path, [&](const fs::path& tmp) {
    std::ofstream o(tmp, std::ios::binary);
    if (!o) throw Error("cannot write " + tmp.string());
    o << "ply\nformat binary_little_endian 1.0\ncomment written by vidmap\n"
      << "element vertex " << points.size() << "\n"
      << "property float x\nproperty float y\nproperty float z\n";
    if (withNormals) o << "property float nx\nproperty float ny\nproperty float nz\n";
    o << "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n";
    for (const auto& p : points) {
      o.write(reinterpret_cast<const char*>(p.xyz.data()), 12);
      if (withNormals) o.write(reinterpret_cast<const char*>(p.normal.data()), 12);
      o.write(reinterpret_cast<const char*>(p.rgb.data()), 3);
    }
    if (!o.flush()) throw Error("write failed: " + tmp.string());
  });
}

std::vector<PlyPoint> readPly(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path.string());
  std::string line;
  std::getline(in, line);
  if (line != "ply") throw Error(path.string() + " is not a PLY file");
  bool binary = false;
  long long count = -1;
  std::vector<std::string> props;
  bool inVertex = false;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string word;
    s >> word;
    if (word == "format") {
      std::string fmt;
      s >> fmt;
      if (fmt == "binary_little_endian")
        binary = true;
      else if (fmt != "ascii")
        throw Error(path.string() + ": unsupported PLY format " + fmt);
    } else if (word == "element") {
      std::string name;
      s >> name;
      inVertex = name == "vertex";
      if (inVertex) s >> count;
    } else if (word == "property" && inVertex) {
      std::string type, name;
      s >> type >> name;
      if (!((type == "float" && name.size() <= 2) || (type == "uchar" && name.size() > 2)))
        throw Error(path.string() + ": unsupported PLY property " + type + " " + name);
      props.push_back(name);
    } else if (word == "end_header") {
      break;
    }
  }
  if (count < 0 || props.empty()) throw Error(path.string() + ": no vertex element in PLY");
  std::vector<PlyPoint> points(static_cast<size_t>(count));
  for (auto& p : points) {
    for (const auto& name : props) {
      float f = 0;
      int u = 0;
      bool isColor = name.size() > 2;
      if (binary) {
        if (isColor) {
          std::uint8_t c;
          in.read(reinterpret_cast<char*>(&c), 1);
          u = c;
        } else {
          in.read(reinterpret_cast<char*>(&f), 4);
        }
      } else {
        if (isColor)
          in >> u;
        else
          in >> f;
      }
      if (!in) throw Error(path.string() + ": truncated PLY");
      if (name == "x") p.xyz[0] = f;
      if (name == "y") p.xyz[1] = f;
      if (name == "z") p.xyz[2] = f;
      if (name == "nx") p.normal[0] = f;
      if (name == "ny") p.normal[1] = f;
      if (name == "nz") p.normal[2] = f;
      if (name == "red") p.rgb[0] = std::uint8_t(u);
      if (name == "green") p.rgb[1] = std::uint8_t(u);
      if (name == "blue") p.rgb[2] = std::uint8_t(u);
    }
  }
  return points;
}

}  // namespace vidmap::io
