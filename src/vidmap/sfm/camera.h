// The camera of a video for the mapper: a COLMAP camera model of vidmap's one enum
// (core/camera_model.h, shared with io and the bundle adjuster) with its projection, whose
// distortion is core/camera_model.h's distortNormalized (the code ba/camera_models.h projects
// with), and the undistortion of keypoints for the geometry stages (which assume a pinhole).
//
// Conventions. Inside vidmap (keypoints, geometry, BA) a pixel centre is at integer
// coordinates (OpenCV, SIFT's features.h) and coordinates are in the working frames (the
// frames after resizing to the working width). COLMAP puts the centre of the top-left pixel
// at (0.5, 0.5); its coordinates scale exactly with the image, so a camera given by the user
// (`--camera MODEL p1,p2,...`) is read in COLMAP's convention at the native size of the
// input, and the written model is converted back to it (toColmap*).
#pragma once

#include <string>
#include <vector>

#include "vidmap/geometry/types.h"
#include "vidmap/io/colmap_model.h"

namespace vidmap::sfm {

using geometry::Vec2;
using geometry::Vec3;

// What the user says about the camera: a model and, when known, its parameters in COLMAP's
// order and pixel convention at the native size of the input.
struct CameraSpec {
  io::CameraModelId model = io::CameraModelId::kSimpleRadial;
  std::vector<double> params;  // empty: unknown (initialised as COLMAP does, refined in BA)
  // Known parameters are held in bundle adjustment unless this is set: then they are the start
  // that bundle adjustment refines (not part of the text form).
  bool refine = false;

  bool known() const { return !params.empty(); }
  // "SIMPLE_RADIAL" (unknown), "PINHOLE 517.3,516.5,318.6,255.3", "OPENCV fx,fy,cx,cy,k1,k2,
  // p1,p2", "FULL_OPENCV ..." (12 values). Commas or spaces separate the values. Throws
  // vidmap::Error naming the problem (unknown model, wrong count, non-finite or non-positive
  // focal length, an unknown camera of a model the adjuster cannot refine).
  // Distortion coefficients are checked against a sane range (radial k in [-100, 100],
  // tangential p in [-1, 1]), the message naming the coefficient.
  static CameraSpec parse(const std::string& text);
  std::string toString() const;
  // Known intrinsics against the native image size, before any work: focal lengths in
  // [0.05, 100] x the larger side, principal point inside the image or within a quarter of
  // its size outside it. Throws vidmap::Error naming the parameter, its value and the range.
  void checkAgainst(int nativeWidth, int nativeHeight) const;
};

// The parameter names of a model in COLMAP's order ("fx", "fy", "cx", "cy", "k1", ...).
std::vector<std::string> cameraParamNames(io::CameraModelId model);

class Camera {
 public:
  Camera() = default;
  // The camera of working frames of size width x height taken from a native source of size
  // nativeWidth x nativeHeight (a known spec is checked with checkAgainst first). An unknown camera
  // gets COLMAP's initial guess: focal 1.2 max(w, h), principal point at the centre, no distortion.
  static Camera fromSpec(const CameraSpec& spec, int nativeWidth, int nativeHeight, int width,
                         int height);

  io::CameraModelId model() const { return model_; }
  const std::vector<double>& params() const { return params_; }
  std::vector<double>& mutableParams() { return params_; }
  int width() const { return width_; }
  int height() const { return height_; }
  // Known intrinsics are held constant in bundle adjustment.
  bool fixed() const { return fixed_; }
  bool hasDistortion() const;

  // Pixel -> undistorted normalized image coordinates (x/z, y/z); Newton iterations for the
  // models with distortion.
  Vec2 normalize(const Vec2& px) const;
  // Undistorted normalized -> distorted pixel.
  Vec2 distortAndProject(const Vec2& n) const;
  Vec2 project(const Vec3& xCam) const {
    return distortAndProject({xCam.x() / xCam.z(), xCam.y() / xCam.z()});
  }
  // The pinhole part (fx, fy, cx, cy): geometry works on undistorted pixels K * normalize(px).
  geometry::Pinhole pinhole() const;
  Vec2 undistortPixel(const Vec2& px) const { return pinhole().project(normalize(px)); }
  double meanFocal() const { return pinhole().meanFocal(); }

  // The COLMAP camera of the written model: COLMAP's pixel convention at the native size.
  io::ColmapCamera toColmap(std::uint32_t id) const;
  // A keypoint in COLMAP's convention at the native size.
  Vec2 toColmapPixel(const Vec2& px) const;
  // Working pixels per native pixel.
  double scale() const { return scale_; }
  int nativeWidth() const { return nativeWidth_; }
  int nativeHeight() const { return nativeHeight_; }

 private:
  io::CameraModelId model_ = io::CameraModelId::kSimpleRadial;
  std::vector<double> params_;  // vidmap convention, working frames
  int width_ = 0, height_ = 0, nativeWidth_ = 0, nativeHeight_ = 0;
  double scale_ = 1;
  bool fixed_ = false;
};

}  // namespace vidmap::sfm
