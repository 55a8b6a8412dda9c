#include "vidmap/sfm/reconstruction.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "vidmap/core/error.h"

namespace vidmap::sfm {

void Reconstruction::registerImage(int id, const geometry::Pose& pose) {
  require(id >= 0 && id < static_cast<int>(keyframes_->size()),
          "reconstruction: keyframe " + std::to_string(id) + " does not exist");
  require(!isRegistered(id),
          "reconstruction: keyframe " + std::to_string(id) + " is already registered");
  RegisteredImage im;
  im.pose = pose;
  im.point3d.assign((*keyframes_)[id].keypoints.size(), kNoPoint);
  images_.emplace(id, std::move(im));
}

PointId Reconstruction::pointOf(int image, int keypoint) const {
  auto it = images_.find(image);
  if (it == images_.end()) return kNoPoint;
  return it->second.point3d.at(keypoint);
}

PointId Reconstruction::addPoint(const Vec3& X, const std::vector<FeatureRef>& track) {
  const PointId id = nextPointId_++;
  Point3D p;
  p.X = X;
  points_.emplace(id, std::move(p));
  for (const FeatureRef& o : track) addObservation(id, o);
  // The colour of the first observation.
  if (!track.empty()) {
    const Keyframe& kf = (*keyframes_)[track.front().image];
    if (track.front().feature < static_cast<int>(kf.colors.size()))
      points_[id].color = kf.colors[track.front().feature];
  }
  return id;
}

void Reconstruction::addObservation(PointId id, FeatureRef obs) {
  Point3D& p = points_.at(id);
  RegisteredImage& im = images_.at(obs.image);
  PointId& slot = im.point3d.at(obs.feature);
  require(slot == kNoPoint, "reconstruction: keypoint already has a 3D point");
  for (const FeatureRef& o : p.track)
    require(o.image != obs.image, "reconstruction: point already observed by this image");
  slot = id;
  ++im.numPoints;
  p.track.push_back(obs);
}

bool Reconstruction::deleteObservation(PointId id, FeatureRef obs) {
  Point3D& p = points_.at(id);
  auto it = std::find(p.track.begin(), p.track.end(), obs);
  require(it != p.track.end(), "reconstruction: observation not in the track");
  RegisteredImage& im = images_.at(obs.image);
  im.point3d[obs.feature] = kNoPoint;
  --im.numPoints;
  p.track.erase(it);
  if (p.track.size() < 2) {
    deletePoint(id);
    return true;
  }
  return false;
}

void Reconstruction::deletePoint(PointId id) {
  auto it = points_.find(id);
  if (it == points_.end()) return;
  for (const FeatureRef& o : it->second.track) {
    RegisteredImage& im = images_.at(o.image);
    im.point3d[o.feature] = kNoPoint;
    --im.numPoints;
  }
  points_.erase(it);
}

PointId Reconstruction::mergePoints(PointId a, PointId b) {
  if (a == b) return a;
  std::vector<FeatureRef> moved = points_.at(b).track;
  deletePoint(b);
  for (const FeatureRef& o : moved) {
    bool seen = false;
    for (const FeatureRef& q : points_.at(a).track) seen |= q.image == o.image;
    if (!seen) addObservation(a, o);
  }
  return a;
}

double Reconstruction::reprojectionError(const Vec3& X, FeatureRef obs) const {
  const RegisteredImage& im = images_.at(obs.image);
  const Vec3 xc = im.pose.apply(X);
  if (!(xc.z() > 1e-12)) return std::numeric_limits<double>::infinity();
  const Vec2 px = camera_.project(xc);
  return (px - (*keyframes_)[obs.image].keypoints[obs.feature]).norm();
}

double Reconstruction::triangulationAngleDeg(PointId id) const {
  const Point3D& p = points_.at(id);
  double best = 0;
  std::vector<Vec3> rays;
  rays.reserve(p.track.size());
  for (const FeatureRef& o : p.track)
    rays.push_back((p.X - images_.at(o.image).pose.center()).normalized());
  for (size_t i = 0; i < rays.size(); ++i)
    for (size_t j = i + 1; j < rays.size(); ++j)
      best = std::max(best, std::acos(std::clamp(rays[i].dot(rays[j]), -1.0, 1.0)));
  return best * 180.0 / M_PI;
}

bool Reconstruction::triangulationAngleAtLeast(PointId id, double minDeg) const {
  const Point3D& p = points_.at(id);
  std::vector<Vec3> rays;
  rays.reserve(p.track.size());
  for (const FeatureRef& o : p.track)
    rays.push_back((p.X - images_.at(o.image).pose.center()).normalized());
  // The same expression per pair as triangulationAngleDeg: rounding is monotone, so the
  // maximum reaches minDeg exactly when one pair does.
  const size_t n = rays.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = n; j-- > i + 1;)
      if (std::acos(std::clamp(rays[i].dot(rays[j]), -1.0, 1.0)) * 180.0 / M_PI >= minDeg)
        return true;
  return false;
}

void Reconstruction::updateErrors() {
  for (auto& [id, p] : points_) {
    double s = 0;
    for (const FeatureRef& o : p.track) s += reprojectionError(p.X, o);
    p.error = p.track.empty() ? 0 : s / p.track.size();
  }
}

std::int64_t Reconstruction::numObservations() const {
  std::int64_t n = 0;
  for (const auto& [id, p] : points_) n += static_cast<std::int64_t>(p.track.size());
  return n;
}

double Reconstruction::meanTrackLength() const {
  return points_.empty() ? 0.0 : static_cast<double>(numObservations()) / points_.size();
}

double Reconstruction::meanReprojectionError() const {
  double s = 0;
  std::int64_t n = 0;
  for (const auto& [id, p] : points_)
    for (const FeatureRef& o : p.track) {
      s += reprojectionError(p.X, o);
      ++n;
    }
  return n ? s / n : 0.0;
}

io::ColmapModel Reconstruction::toColmap() const {
  io::ColmapModel m;
  m.cameras[1] = camera_.toColmap(1);
  for (const auto& [id, im] : images_) {
    const Keyframe& kf = (*keyframes_)[id];
    io::ColmapImage ci;
    ci.id = static_cast<std::uint32_t>(id + 1);
    const Eigen::Quaterniond q(im.pose.R);
    ci.qvec = {q.w(), q.x(), q.y(), q.z()};
    ci.tvec = {im.pose.t.x(), im.pose.t.y(), im.pose.t.z()};
    ci.camera_id = 1;
    ci.name = kf.name;
    ci.points2d.resize(kf.keypoints.size());
    for (size_t k = 0; k < kf.keypoints.size(); ++k) {
      const Vec2 c = camera_.toColmapPixel(kf.keypoints[k]);
      ci.points2d[k].x = c.x();
      ci.points2d[k].y = c.y();
      if (im.point3d[k] != kNoPoint)
        ci.points2d[k].point3d_id = static_cast<std::uint64_t>(im.point3d[k]) + 1;
    }
    m.images[ci.id] = std::move(ci);
  }
  // Localised frames: their inlier keypoints, linked to the points.
  std::unordered_map<PointId, std::vector<io::ColmapTrackElement>> extra;
  std::uint32_t nextId = static_cast<std::uint32_t>(keyframes_->size()) + 1;
  for (const LocalizedFrame& lf : localized_) {
    io::ColmapImage ci;
    ci.id = nextId++;
    const Eigen::Quaterniond q(lf.pose.R);
    ci.qvec = {q.w(), q.x(), q.y(), q.z()};
    ci.tvec = {lf.pose.t.x(), lf.pose.t.y(), lf.pose.t.z()};
    ci.camera_id = 1;
    ci.name = lf.frame->name;
    for (size_t k = 0; k < lf.inliers.size(); ++k) {
      if (!points_.count(lf.inlierPoints[k])) continue;
      const Vec2 c = camera_.toColmapPixel(lf.frame->keypoints[lf.inliers[k]]);
      io::ColmapPoint2D p2;
      p2.x = c.x();
      p2.y = c.y();
      p2.point3d_id = static_cast<std::uint64_t>(lf.inlierPoints[k]) + 1;
      extra[lf.inlierPoints[k]].push_back({ci.id, static_cast<std::uint32_t>(ci.points2d.size())});
      ci.points2d.push_back(p2);
    }
    m.images[ci.id] = std::move(ci);
  }
  for (const auto& [id, p] : points_) {
    io::ColmapPoint3D cp;
    cp.id = static_cast<std::uint64_t>(id) + 1;
    cp.xyz = {p.X.x(), p.X.y(), p.X.z()};
    cp.rgb = {p.color.r, p.color.g, p.color.b};
    double s = 0;
    for (const FeatureRef& o : p.track) {
      s += reprojectionError(p.X, o);
      cp.track.push_back(
          {static_cast<std::uint32_t>(o.image + 1), static_cast<std::uint32_t>(o.feature)});
    }
    // COLMAP's error is in the pixels of its own (native) image.
    cp.error = p.track.empty() ? 0 : s / p.track.size() / camera_.scale();
    auto it = extra.find(id);
    if (it != extra.end()) cp.track.insert(cp.track.end(), it->second.begin(), it->second.end());
    m.points3d[cp.id] = std::move(cp);
  }
  return m;
}

std::vector<io::PlyPoint> Reconstruction::toPly() const {
  std::vector<io::PlyPoint> out;
  out.reserve(points_.size());
  // Points in id order, so the file does not depend on hash order.
  std::vector<PointId> ids;
  for (const auto& [id, p] : points_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (PointId id : ids) {
    const Point3D& p = points_.at(id);
    io::PlyPoint q;
    q.xyz = {static_cast<float>(p.X.x()), static_cast<float>(p.X.y()), static_cast<float>(p.X.z())};
    q.rgb = {p.color.r, p.color.g, p.color.b};
    out.push_back(q);
  }
  return out;
}

}  // namespace vidmap::sfm
