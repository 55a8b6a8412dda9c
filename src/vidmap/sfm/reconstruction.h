// The state of the incremental mapper: the keyframes (keypoints and colours, shared by all
// models of a video), and a reconstruction (one model): one camera shared by its images,
// registered images with world-to-camera poses, and 3D points with their tracks of
// observations (after COLMAP's scene/reconstruction.h). Conversion to COLMAP's model
// (io::ColmapModel) and to a coloured PLY point cloud.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/geometry/types.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/ply.h"
#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/tracks.h"

namespace vidmap::sfm {

using PointId = std::int64_t;
inline constexpr PointId kNoPoint = -1;

// One keyframe of the video: what the mapper keeps of it.
struct Keyframe {
  int id = 0;          // 0, 1, 2, ... in video order
  int frameIndex = 0;  // the sampled frame it came from
  double timestamp = 0;
  std::string name;
  std::vector<Vec2> keypoints;   // pixels of the working frame (as detected, distorted)
  std::vector<Rgb8> colors;      // colour at each keypoint
  std::vector<Vec2> normalized;  // undistorted normalized coordinates (Mapper keeps them current)
};

using KeyframeStore = std::deque<Keyframe>;  // indexed by Keyframe::id; stable references

// A frame the keyframe gate dropped, with its matches to the last keyframe: after mapping it
// is localised by PnP against the points of that keyframe (a pose for every sampled frame).
struct TrackedFrame {
  int frameIndex = 0;
  double timestamp = 0;
  std::string name;
  int keyframe = 0;                   // the keyframe it was matched against
  std::vector<Vec2> keypoints;        // its matched keypoints (working pixels, as detected)
  std::vector<int> keyframeKeypoint;  // the keyframe keypoint each one matches
};

// A tracked frame localised in a model: a pose by PnP on the final points, not adjusted.
struct LocalizedFrame {
  const TrackedFrame* frame = nullptr;
  geometry::Pose pose;
  std::vector<int> inliers;           // indices into frame->keypoints
  std::vector<PointId> inlierPoints;  // their points
};

struct RegisteredImage {
  geometry::Pose pose;           // world to camera
  std::vector<PointId> point3d;  // per keypoint, kNoPoint when none
  int numPoints = 0;             // keypoints with a 3D point
};

struct Point3D {
  Vec3 X = Vec3::Zero();
  Rgb8 color;
  std::vector<FeatureRef> track;  // (keyframe id, keypoint index), one per image at most
  double error = 0;               // mean reprojection error (pixels), set by updateErrors()
};

class Reconstruction {
 public:
  // The model reads keypoints from `keyframes`, which must outlive it. Each model owns its
  // camera (a video's models start from the same camera; BA refines each).
  Reconstruction(const KeyframeStore* keyframes, Camera camera)
      : keyframes_(keyframes), camera_(std::move(camera)) {}

  const Camera& camera() const { return camera_; }
  Camera& mutableCamera() { return camera_; }
  const KeyframeStore& keyframes() const { return *keyframes_; }

  // Images.
  void registerImage(int id, const geometry::Pose& pose);
  bool isRegistered(int id) const { return images_.count(id) != 0; }
  const std::map<int, RegisteredImage>& images() const { return images_; }
  RegisteredImage& image(int id) { return images_.at(id); }
  const RegisteredImage& image(int id) const { return images_.at(id); }
  int numImages() const { return static_cast<int>(images_.size()); }
  PointId pointOf(int image, int keypoint) const;

  // Points. Observations name registered images; an image observes a point at most once and a
  // keypoint belongs to at most one point (Error otherwise).
  PointId addPoint(const Vec3& X, const std::vector<FeatureRef>& track);
  void addObservation(PointId id, FeatureRef obs);
  // Removes one observation; a point left with fewer than two is deleted. Returns true when
  // the point was deleted.
  bool deleteObservation(PointId id, FeatureRef obs);
  void deletePoint(PointId id);
  // Merges b into a (a keeps its position); observations of b in images a already sees are
  // dropped. Returns a.
  PointId mergePoints(PointId a, PointId b);
  const std::unordered_map<PointId, Point3D>& points() const { return points_; }
  Point3D& point(PointId id) { return points_.at(id); }
  const Point3D& point(PointId id) const { return points_.at(id); }
  bool hasPoint(PointId id) const { return points_.count(id) != 0; }
  int numPoints() const { return static_cast<int>(points_.size()); }

  // Reprojection error (pixels, through the camera's distortion) of an observation; +inf when
  // the point is behind the camera.
  double reprojectionError(const Vec3& X, FeatureRef obs) const;
  // The largest angle (degrees) between two rays of a point's track.
  double triangulationAngleDeg(PointId id) const;
  // triangulationAngleDeg(id) >= minDeg, decided the same way, but stopping at the first pair
  // of rays that reaches minDeg and trying the ends of the track first (the views furthest
  // apart in a video): the filter after every local BA asks this of thousands of points whose
  // tracks hold tens of views, and the full maximum over all pairs was most of its time.
  bool triangulationAngleAtLeast(PointId id, double minDeg) const;
  // Sets Point3D::error of every point.
  void updateErrors();

  // Frames localised after mapping (written with the keyframes; not in the statistics).
  void addLocalized(LocalizedFrame f) { localized_.push_back(std::move(f)); }
  const std::vector<LocalizedFrame>& localized() const { return localized_; }
  std::vector<LocalizedFrame>& mutableLocalized() { return localized_; }

  // Statistics of the model (keyframes only).
  std::int64_t numObservations() const;
  double meanTrackLength() const;
  double meanReprojectionError() const;  // over all observations

  // The model in COLMAP's terms: camera 1, image ids = keyframe id + 1, points2D = all
  // keypoints of the image (converted to COLMAP's convention and the native size); localised
  // frames follow with ids after the last keyframe's, their PnP inliers as points2D and in
  // the points' tracks.
  io::ColmapModel toColmap() const;
  std::vector<io::PlyPoint> toPly() const;

 private:
  const KeyframeStore* keyframes_;
  Camera camera_;
  std::map<int, RegisteredImage> images_;
  std::unordered_map<PointId, Point3D> points_;
  PointId nextPointId_ = 0;
  std::vector<LocalizedFrame> localized_;
};

}  // namespace vidmap::sfm
