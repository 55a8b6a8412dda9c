#include "vidmap/features/testing/datasets.h"

#include <Eigen/Core>
#include <Eigen/LU>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"

namespace vidmap::features::testing {
namespace {

using M3 = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;

Mat3 toArray(const M3& m) {
  Mat3 a;
  std::copy(m.data(), m.data() + 9, a.begin());
  return a;
}

std::ifstream open(const std::filesystem::path& p) {
  std::ifstream f(p);
  if (!f) throw Error("cannot read " + p.string());
  return f;
}

}  // namespace

Mat3 readOpenCvMatrix(const std::filesystem::path& path) {
  auto f = open(path);
  std::stringstream s;
  s << f.rdbuf();
  const std::string text = s.str();
  const auto begin = text.find("<data>"), end = text.find("</data>");
  if (begin == std::string::npos || end == std::string::npos)
    throw Error("no <data> in " + path.string());
  std::istringstream in(text.substr(begin + 6, end - begin - 6));
  Mat3 m;
  for (double& v : m)
    if (!(in >> v)) throw Error("short matrix in " + path.string());
  return m;
}

Camera readStrechaCamera(const std::filesystem::path& path) {
  auto f = open(path);
  Camera c;
  double zero[3], Rcw[9], C[3];
  for (double& v : c.K) f >> v;
  for (double& v : zero) f >> v;
  for (double& v : Rcw) f >> v;
  for (double& v : C) f >> v;
  if (!f) throw Error("malformed Strecha camera " + path.string());
  const M3 rcw(Rcw);
  const M3 r = rcw.transpose();
  c.R = toArray(r);
  const Eigen::Vector3d t = -r * Eigen::Vector3d(C[0], C[1], C[2]);
  c.t = {t.x(), t.y(), t.z()};
  return c;
}

std::map<std::string, Camera> readMiddleburyCameras(const std::filesystem::path& parFile) {
  auto f = open(parFile);
  int n = 0;
  f >> n;
  std::map<std::string, Camera> out;
  for (int i = 0; i < n; ++i) {
    std::string name;
    Camera c;
    f >> name;
    for (double& v : c.K) f >> v;
    for (double& v : c.R) f >> v;
    for (double& v : c.t) f >> v;
    if (!f) throw Error("malformed Middlebury parameters " + parFile.string());
    out[name] = c;
  }
  return out;
}

Camera scaleCamera(const Camera& c, double s) {
  M3 S;
  S << s, 0, 0.5 * s - 0.5, 0, s, 0.5 * s - 0.5, 0, 0, 1;
  Camera o = c;
  o.K = toArray(S * M3(c.K.data()));
  return o;
}

Mat3 essentialFromCameras(const Camera& a, const Camera& b) {
  const M3 Ra(a.R.data()), Rb(b.R.data());
  const Eigen::Vector3d ta(a.t.data()), tb(b.t.data());
  const M3 R = Rb * Ra.transpose();
  const Eigen::Vector3d t = tb - R * ta;
  M3 tx;
  tx << 0, -t.z(), t.y(), t.z(), 0, -t.x(), -t.y(), t.x(), 0;
  return toArray(tx * R);
}

Mat3 fundamentalFromCameras(const Camera& a, const Camera& b) {
  const M3 E(essentialFromCameras(a, b).data());
  const M3 Ka(a.K.data()), Kb(b.K.data());
  return toArray(Kb.inverse().transpose() * E * Ka.inverse());
}

}  // namespace vidmap::features::testing
