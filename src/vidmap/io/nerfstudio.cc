#include "vidmap/io/nerfstudio.h"

#include <Eigen/Geometry>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/ply.h"

#if defined(VIDMAP_HAVE_JSON)
#include <nlohmann/json.hpp>
#endif

namespace vidmap::io {

namespace fs = std::filesystem;

#if defined(VIDMAP_HAVE_JSON)
namespace {

using Json = nlohmann::ordered_json;

// nerfstudio's turn of COLMAP's world (y down, z forward in typical captures) to z up: rows
// (0, 2, 1) of the identity, the new z negated.
Eigen::Matrix4d appliedTransform() {
  Eigen::Matrix4d a = Eigen::Matrix4d::Zero();
  a(0, 0) = 1;
  a(1, 2) = 1;
  a(2, 1) = -1;
  a(3, 3) = 1;
  return a;
}

Json matrixJson(const Eigen::MatrixXd& m) {
  Json rows = Json::array();
  for (int r = 0; r < m.rows(); ++r) {
    Json row = Json::array();
    for (int c = 0; c < m.cols(); ++c) row.push_back(m(r, c));
    rows.push_back(row);
  }
  return rows;
}

// nerfstudio's parse_colmap_camera_params: every model as OPENCV (its pinhole models have
// zero distortion).
void addIntrinsics(Json& j, const ColmapCamera& c) {
  const std::vector<double>& p = c.params;
  double fx, fy, cx, cy;
  std::vector<std::pair<const char*, double>> dist;
  switch (c.model) {
    case CameraModelId::kSimplePinhole:
    case CameraModelId::kSimpleRadial:
    case CameraModelId::kRadial:
      fx = fy = p[0];
      cx = p[1];
      cy = p[2];
      dist = {{"k1", c.model == CameraModelId::kSimplePinhole ? 0.0 : p[3]},
              {"k2", c.model == CameraModelId::kRadial ? p[4] : 0.0},
              {"p1", 0.0},
              {"p2", 0.0}};
      break;
    case CameraModelId::kPinhole:
    case CameraModelId::kOpenCV:
    case CameraModelId::kFullOpenCV:
    default: {
      fx = p[0];
      fy = p[1];
      cx = p[2];
      cy = p[3];
      const bool d = c.model != CameraModelId::kPinhole;
      dist = {{"k1", d ? p[4] : 0.0},
              {"k2", d ? p[5] : 0.0},
              {"p1", d ? p[6] : 0.0},
              {"p2", d ? p[7] : 0.0}};
      if (c.model == CameraModelId::kFullOpenCV)
        for (int i = 0; i < 4; ++i)
          dist.emplace_back(std::array{"k3", "k4", "k5", "k6"}[i], p[8 + i]);
    }
  }
  j["w"] = c.width;
  j["h"] = c.height;
  j["fl_x"] = fx;
  j["fl_y"] = fy;
  j["cx"] = cx;
  j["cy"] = cy;
  for (const auto& [k, v] : dist) j[k] = v;
  j["camera_model"] = "OPENCV";
}

}  // namespace

std::string nerfstudioTransforms(const ColmapModel& model, const NerfstudioOptions& options) {
  require(!model.images.empty(), "nerfstudio export: the model has no images");
  model.validate();
  bool shared = true;
  const std::uint32_t cam0 = model.images.begin()->second.camera_id;
  for (const auto& [id, im] : model.images) shared = shared && im.camera_id == cam0;
  Json j;
  if (shared) addIntrinsics(j, model.cameras.at(cam0));
  const Eigen::Matrix4d applied = appliedTransform();
  Json frames = Json::array();
  for (const auto& [id, im] : model.images) {
    const Eigen::Quaterniond q(im.qvec[0], im.qvec[1], im.qvec[2], im.qvec[3]);
    Eigen::Matrix4d w2c = Eigen::Matrix4d::Identity();
    w2c.topLeftCorner<3, 3>() = q.normalized().toRotationMatrix();
    w2c.topRightCorner<3, 1>() = Eigen::Vector3d(im.tvec[0], im.tvec[1], im.tvec[2]);
    Eigen::Matrix4d c2w = w2c.inverse();
    c2w.block<3, 2>(0, 1) *= -1;  // OpenCV camera (y down, z forward) to OpenGL
    c2w = applied * c2w;
    Json f;
    std::string path = options.imageDir.empty() ? im.name : options.imageDir + "/" + im.name;
    f["file_path"] = path;
    f["transform_matrix"] = matrixJson(c2w);
    f["colmap_im_id"] = id;
    if (!shared) addIntrinsics(f, model.cameras.at(im.camera_id));
    frames.push_back(std::move(f));
  }
  j["frames"] = std::move(frames);
  j["applied_transform"] = matrixJson(applied.topRows<3>());
  if (!options.plyFile.empty()) j["ply_file_path"] = options.plyFile;
  return j.dump(2) + "\n";
}

void exportNerfstudio(const ColmapModel& model, const fs::path& transformsPath,
                      const NerfstudioOptions& options) {
  const fs::path folder =
      transformsPath.parent_path().empty() ? fs::path(".") : transformsPath.parent_path();
  require(fs::is_directory(folder),
          "nerfstudio export: the folder '" + folder.string() + "' does not exist");
  const std::string text = nerfstudioTransforms(model, options);
  if (!options.plyFile.empty()) {
    const Eigen::Matrix3d a = appliedTransform().topLeftCorner<3, 3>();
    std::vector<PlyPoint> pts;
    pts.reserve(model.points3d.size());
    for (const auto& [id, p] : model.points3d) {
      const Eigen::Vector3d x = a * Eigen::Vector3d(p.xyz[0], p.xyz[1], p.xyz[2]);
      PlyPoint q;
      q.xyz = {static_cast<float>(x.x()), static_cast<float>(x.y()), static_cast<float>(x.z())};
      q.rgb = p.rgb;
      pts.push_back(q);
    }
    writePly(folder / options.plyFile, pts);
  }
  writeTextAtomically(transformsPath, text);
}

#else

std::string nerfstudioTransforms(const ColmapModel&, const NerfstudioOptions&) {
  throw Error("nerfstudio export: this build of vidmap has no nlohmann-json");
}
void exportNerfstudio(const ColmapModel&, const fs::path&, const NerfstudioOptions&) {
  throw Error("nerfstudio export: this build of vidmap has no nlohmann-json");
}

#endif

}  // namespace vidmap::io
