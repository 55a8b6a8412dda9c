#include "vidmap/synth/truth_io.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/io/text_fields.h"
#include "vidmap/io/tum_trajectory.h"

namespace vidmap::synth {

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string readText(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot read " + path.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

std::string formatTimestamp(double seconds) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9f", seconds);
  return buf;
}

std::string formatTumTrajectory(const std::vector<CameraFrame>& frames) {
  std::vector<io::TumPose> poses;
  for (const CameraFrame& f : frames) {
    io::TumPose p;
    p.t = f.timestamp;
    p.position = f.pose.t;
    p.orientation = f.pose.q;
    poses.push_back(p);
  }
  return io::formatTumTrajectory(
      poses,
      "ground truth trajectory (TUM format), written by vidmap synth\n"
      "pose: camera-to-world; t = camera centre in the world, q = rotation camera->world\n"
      "camera axes: x right, y down, z forward (OpenCV/COLMAP); world: z up, metres\n"
      "timestamp tx ty tz qx qy qz qw",
      9);
}

std::vector<CameraFrame> parseTumTrajectory(const std::string& text, const std::string& what) {
  // Written by writeSequence at full precision: unit quaternions to 1e-6.
  std::vector<CameraFrame> out;
  for (const io::TumPose& p : io::parseTumTrajectory(text, what, 1e-6)) {
    CameraFrame c;
    c.index = static_cast<int>(out.size());
    c.timestamp = p.t;
    c.pose.t = p.position;
    c.pose.q = p.orientation;
    out.push_back(c);
  }
  if (out.empty()) throw Error(what + ": no poses");
  return out;
}

std::string formatTumImageList(const std::vector<CameraFrame>& frames,
                               const std::vector<std::string>& relativePaths,
                               const std::string& title) {
  require(frames.size() == relativePaths.size(), "image list: one path per frame expected");
  std::string out = "# " + title + "\n# written by vidmap synth\n# timestamp filename\n";
  for (size_t i = 0; i < frames.size(); ++i)
    out += formatTimestamp(frames[i].timestamp) + " " + relativePaths[i] + "\n";
  return out;
}

std::string formatColmapCameras(const PinholeCamera& c) {
  return "# Camera list with one line of data per camera:\n"
         "#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n"
         "# PINHOLE params: fx, fy, cx, cy in COLMAP's convention: the centre of the top-left\n"
         "# pixel is (0.5, 0.5). In OpenCV's convention (pixel centres at integers) cx = " +
         num(c.cx) + ", cy = " + num(c.cy) +
         ".\n"
         "# Number of cameras: 1\n"
         "1 PINHOLE " +
         std::to_string(c.width) + " " + std::to_string(c.height) + " " + num(c.fx) + " " +
         num(c.fy) + " " + num(c.cx + 0.5) + " " + num(c.cy + 0.5) + "\n";
}

std::string formatColmapImages(const std::vector<CameraFrame>& frames,
                               const std::vector<std::string>& names) {
  require(frames.size() == names.size(), "images.txt: one name per frame expected");
  std::string out =
      "# Image list with two lines of data per image:\n"
      "#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME\n"
      "#   POINTS2D[] as (X, Y, POINT3D_ID)\n"
      "# Poses are world-to-camera (the inverse of groundtruth.txt); NAME is relative to "
      "rgb/.\n"
      "# Number of images: " +
      std::to_string(frames.size()) + ", mean observations per image: 0\n";
  for (size_t i = 0; i < frames.size(); ++i) {
    Eigen::Quaterniond qcw = frames[i].pose.q.conjugate();
    Eigen::Vector3d tcw = -(qcw * frames[i].pose.t);
    out += std::to_string(i + 1) + " " + num(qcw.w()) + " " + num(qcw.x()) + " " + num(qcw.y()) +
           " " + num(qcw.z()) + " " + num(tcw.x()) + " " + num(tcw.y()) + " " + num(tcw.z()) +
           " 1 " + names[i] + "\n\n";
  }
  return out;
}

std::string formatColmapPoints3D() {
  return "# 3D point list with one line of data per point:\n"
         "#   POINT3D_ID, X, Y, Z, R, G, B, ERROR, TRACK[] as (IMAGE_ID, POINT2D_IDX)\n"
         "# Number of points: 0, mean track length: 0\n";
}

SequenceTruth readSequenceTruth(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw Error("not a sequence folder: " + dir.string());
  SequenceTruth t;
  fs::path infoPath = dir / "sequence.txt";
  for (auto& [line, f] : io::dataLines(readText(infoPath))) {
    std::string value;
    for (size_t i = 1; i < f.size(); ++i) value += (i > 1 ? " " : "") + f[i];
    t.info[f[0]] = value;
  }
  auto get = [&](const std::string& key) {
    auto it = t.info.find(key);
    if (it == t.info.end()) throw Error(infoPath.string() + ": no '" + key + "' line");
    return it->second;
  };
  std::string where = infoPath.string();
  t.camera.width = static_cast<int>(io::parseFiniteDouble(get("width"), where));
  t.camera.height = static_cast<int>(io::parseFiniteDouble(get("height"), where));
  t.camera.fx = io::parseFiniteDouble(get("fx"), where);
  t.camera.fy = io::parseFiniteDouble(get("fy"), where);
  t.camera.cx = io::parseFiniteDouble(get("cx"), where);
  t.camera.cy = io::parseFiniteDouble(get("cy"), where);
  t.camera.check();
  fs::path gt = dir / "groundtruth.txt";
  t.frames = parseTumTrajectory(readText(gt), gt.string());
  fs::path list = dir / "rgb.txt";
  for (auto& [line, f] : io::dataLines(readText(list))) {
    if (f.size() != 2)
      throw Error(list.string() + " line " + std::to_string(line) + ": expected 'timestamp path'");
    t.images.push_back(dir / f[1]);
  }
  if (t.images.size() != t.frames.size())
    throw Error(dir.string() + ": rgb.txt lists " + std::to_string(t.images.size()) +
                " images but groundtruth.txt has " + std::to_string(t.frames.size()) + " poses");
  return t;
}

}  // namespace vidmap::synth
