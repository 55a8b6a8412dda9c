// The input of dense stereo: the registered images of a COLMAP model, undistorted to pinhole
// cameras (optionally scaled down), each with its source views and depth range chosen from
// the sparse model, as COLMAP's image_undistorter and patch_match_stereo `__auto__` do.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "vidmap/core/image.h"
#include "vidmap/io/colmap_model.h"

namespace vidmap::mvs {

struct WorkspaceOptions {
  // The longer image side is scaled down to this many pixels (0: native size).
  int maxImageSize = 0;
  // Sources per reference view: the views that share the most sparse points seen at a
  // triangulation angle of at least minTriangulationAngleDeg (COLMAP: 20 and 1 degree).
  int maxSources = 8;
  double minTriangulationAngleDeg = 1.0;
  // A source must share at least this many such points with the reference.
  int minSharedPoints = 8;
  // The depth range is [lo, hi] percentiles of the sparse points' depths, widened by
  // depthMargin on each side (COLMAP: 1 and 99 percent, 25 percent).
  double depthPercentileLow = 0.01;
  double depthPercentileHigh = 0.99;
  double depthMargin = 0.25;
  // For models without sparse points (cameras known from elsewhere, e.g. a calibrated rig):
  // the depth range of every view when both are positive, and sources chosen by geometry
  // (optical axes within maxAxisAngleDeg, the smallest angles first, a baseline of at least
  // tan(minTriangulationAngleDeg) * the middle of the range).
  double depthMin = 0, depthMax = 0;
  double maxAxisAngleDeg = 45;

  void check() const;
};

struct View {
  std::uint32_t imageId = 0;
  std::string name;
  int width = 0, height = 0;
  double fx = 0, fy = 0, cx = 0, cy = 0;            // pinhole; pixel centres at integer coordinates
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();  // world to camera
  Eigen::Vector3d t = Eigen::Vector3d::Zero();
  Image<std::uint8_t> gray;  // undistorted luma, 8 bit
  RgbImage rgb;              // undistorted colour (for the fused points)
  double depthMin = 0, depthMax = 0;
  std::vector<int> sources;  // indices into Workspace::views, best first

  Eigen::Vector3d center() const { return -R.transpose() * t; }
};

struct Workspace {
  std::vector<View> views;
  // Registered images that cannot be a reference (no source view, no sparse points in
  // front), with the reason; they may still serve as sources.
  std::vector<std::string> skipped;
  // True for views that are references (not skipped).
  std::vector<bool> isReference;
};

// Loads the undistorted views of `model`. loadImage returns the image of a registered image
// (its decoded file); a model with fewer than two registered images, a missing or wrongly
// sized image, or an unsupported camera model throws vidmap::Error. With threadSafeLoader,
// loadImage is called from several threads at once (views in parallel, as loadWorkspace does
// for image files); otherwise once per image, in the model's order, from this thread.
Workspace buildWorkspace(const io::ColmapModel& model,
                         const std::function<RgbImage(const io::ColmapImage&)>& loadImage,
                         const WorkspaceOptions& options, bool threadSafeLoader = false);

// Throws vidmap::Error naming how many of the model's images are missing in imagesDir (and
// the first), when any is.
void checkImagesPresent(const io::ColmapModel& model, const std::filesystem::path& imagesDir);

// The same with the images read from imagesDir / image.name. Every missing file is named in
// one error before any image is decoded.
Workspace loadWorkspace(const io::ColmapModel& model, const std::filesystem::path& imagesDir,
                        const WorkspaceOptions& options);

// The undistortion of one image to a pinhole camera of the same size and focal lengths:
// out(x, y) samples the input where the model's distortion maps the pinhole ray of (x, y).
// fx, fy, cx, cy receive the pinhole intrinsics (pixel centres at integers).
RgbImage undistortImage(const RgbImage& image, const io::ColmapCamera& camera, double* fx,
                        double* fy, double* cx, double* cy);

// The model's distortion of normalised coordinates (u, v) (COLMAP's models; the identity for
// the pinhole ones); an unsupported model throws vidmap::Error.
void distortNormalized(const io::ColmapCamera& camera, double u, double v, double* du, double* dv);

// 8-bit Rec. 601 luma.
Image<std::uint8_t> toGray8(const RgbImage& rgb);

}  // namespace vidmap::mvs
