// A bundle adjustment problem: cameras (intrinsics blocks, COLMAP's "cameras", shared by any
// number of images), images (a pose each: rotation + translation, x_cam = R X + t), 3D points
// and observations (image, point, pixel). Any block, or single coordinates of it, can be held
// constant. One camera model and one rotation parameterisation per problem.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vidmap/ba/types.h"

namespace vidmap::ba {

struct CameraIntrinsics {
  std::array<double, kMaxIntrinsics> params{};  // the first numIntrinsics(model) are used
  std::uint32_t constantMask = 0;               // bit i: params[i] is held constant
};

struct ImagePose {
  std::array<double, 4> rotation{};  // angle-axis (3) or quaternion w, x, y, z (4)
  std::array<double, 3> translation{};
  int camera = 0;
  // Bits 0-2: the rotation's local coordinates, bits 3-5: the translation, held constant.
  std::uint32_t constantMask = 0;
};

struct Point3 {
  std::array<double, 3> xyz{};
  bool constant = false;
};

struct Observation {
  int image = 0;
  int point = 0;
  double x = 0.0, y = 0.0;  // pixels, in the camera model's convention
};

struct Problem {
  static constexpr std::uint32_t kRotationMask = 0x7, kTranslationMask = 0x38, kPoseMask = 0x3f;

  CameraModel model = CameraModel::kSimplePinhole;
  RotationType rotation = RotationType::kAngleAxis;
  std::vector<CameraIntrinsics> cameras;
  std::vector<ImagePose> images;
  std::vector<Point3> points;
  std::vector<Observation> observations;

  void setImageConstant(int i) { images.at(i).constantMask = kPoseMask; }
  void setCameraConstant(int c) { cameras.at(c).constantMask = (1u << numIntrinsics(model)) - 1; }
  void setPointConstant(int p) { points.at(p).constant = true; }

  // Throws vidmap::Error naming the first bad entry: a camera model the adjuster does not refine
  // (OPENCV, FULL_OPENCV), an index out of range, a value that is not finite, a focal length
  // that is not positive, a zero quaternion, an empty problem.
  void check() const;
};

// A model the adjuster refines by its name (modelName: "SIMPLE_PINHOLE", "PINHOLE",
// "SIMPLE_RADIAL", "RADIAL" or "BAL"); throws vidmap::Error for another name.
CameraModel parseModel(const std::string& name);

// Reprojection residuals (pixels, before any loss) of every observation, through the same
// code the solver uses; 2 per observation.
std::vector<double> reprojectionResiduals(const Problem& p);
// Root mean square of the reprojection error norm over all observations.
double rmsReprojectionError(const Problem& p);

}  // namespace vidmap::ba
