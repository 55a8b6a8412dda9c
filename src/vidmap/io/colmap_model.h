// COLMAP's sparse model (cameras, images, points3D) in its binary (.bin) and text (.txt)
// formats, as COLMAP 3.x reads and writes them (colmap/scene/reconstruction_io.cc). Poses
// are world-to-camera: x_cam = R(q) * x_world + t, quaternion (qw, qx, qy, qz).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "vidmap/core/camera_model.h"

namespace vidmap::io {

// COLMAP's camera models by COLMAP's ids: vidmap's one enum (core/camera_model.h), whose BAL
// camera is not a COLMAP model (refused here).
using CameraModelId = vidmap::CameraModel;

// Name ("PINHOLE") <-> id and parameter count; unknown names throw vidmap::Error.
CameraModelId cameraModelFromName(const std::string& name);
std::string cameraModelName(CameraModelId id);
int cameraModelNumParams(CameraModelId id);

struct ColmapCamera {
  std::uint32_t id = 0;
  CameraModelId model = CameraModelId::kPinhole;
  std::uint64_t width = 0, height = 0;
  std::vector<double> params;
};

struct ColmapPoint2D {
  double x = 0, y = 0;
  std::uint64_t point3d_id = kInvalidPoint3D;
  static constexpr std::uint64_t kInvalidPoint3D = std::uint64_t(-1);
};

struct ColmapImage {
  std::uint32_t id = 0;
  std::array<double, 4> qvec{1, 0, 0, 0};  // qw, qx, qy, qz (world to camera)
  std::array<double, 3> tvec{0, 0, 0};
  std::uint32_t camera_id = 0;
  std::string name;
  std::vector<ColmapPoint2D> points2d;
};

struct ColmapTrackElement {
  std::uint32_t image_id = 0;
  std::uint32_t point2d_idx = 0;
};

struct ColmapPoint3D {
  std::uint64_t id = 0;
  std::array<double, 3> xyz{0, 0, 0};
  std::array<std::uint8_t, 3> rgb{0, 0, 0};
  double error = 0;
  std::vector<ColmapTrackElement> track;
};

struct ColmapModel {
  std::map<std::uint32_t, ColmapCamera> cameras;
  std::map<std::uint32_t, ColmapImage> images;
  std::map<std::uint64_t, ColmapPoint3D> points3d;

  // Throws vidmap::Error naming the first inconsistency (unknown camera of an image, a track
  // element naming a missing image or 2D point, a wrong parameter count, a non-finite value).
  void validate() const;
};

enum class ColmapFormat { kBinary, kText };

// Writes cameras/images/points3D.{bin,txt} into folder (created if missing). Each file is
// written atomically; the model is validated first, so nothing is written for a bad model.
void writeColmapModel(const ColmapModel& model, const std::filesystem::path& folder,
                      ColmapFormat format);

// Reads a model written by COLMAP or by writeColmapModel; the format is detected from the
// files present (.bin preferred). Truncated or malformed files throw vidmap::Error.
ColmapModel readColmapModel(const std::filesystem::path& folder);

}  // namespace vidmap::io
