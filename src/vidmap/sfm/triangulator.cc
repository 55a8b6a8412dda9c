#include "vidmap/sfm/triangulator.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "vidmap/core/check.h"
#include "vidmap/geometry/triangulation.h"
#include "vidmap/geometry/triangulation_batch.h"
#if defined(VIDMAP_HAVE_CUDA)
#include "vidmap/geometry/triangulation_batch_cuda.h"
#endif

namespace vidmap::sfm {

void TriangulatorOptions::check() const {
  checkRange("triangulator.maxReprojErrorPx", maxReprojErrorPx, 0.1, 1000.0);
  checkRange("triangulator.minAngleDeg", minAngleDeg, 0.0, 90.0);
  checkRange("triangulator.minDepthFraction", minDepthFraction, 0.0, 1.0);
  checkRange("triangulator.deviceMinTracks", deviceMinTracks, 1, 1 << 30);
#if !defined(VIDMAP_HAVE_CUDA)
  require(device == nullptr, "triangulator.device: this build has no CUDA");
#endif
}

Triangulator::Triangulator(const CorrespondenceGraph& graph, const TriangulatorOptions& options)
    : graph_(graph), options_(options) {
  options_.check();
}

namespace {

const char* refusalKey(geometry::TriangulationStatus s) {
  switch (s) {
    case geometry::TriangulationStatus::kOk:
      return "ok";
    case geometry::TriangulationStatus::kTooFewViews:
      return "too_few_views";
    case geometry::TriangulationStatus::kDegenerate:
      return "degenerate";
    case geometry::TriangulationStatus::kBehindCamera:
      return "behind_camera";
    case geometry::TriangulationStatus::kLargeError:
      return "large_error";
    case geometry::TriangulationStatus::kSmallAngle:
      return "small_angle";
  }
  return "?";
}

}  // namespace

// The new tracks of an image as the model is before triangulateImage changes it, solved in one
// batch: the joint solution of each, and the two-view fallbacks (the image's keypoint with each
// other view) of those whose joint solution failed, in a second batch.
struct Triangulator::Speculation {
  struct Track {
    std::vector<FeatureRef> fresh;
    int joint = 0;   // in `joint`
    int pairs = -1;  // first of fresh.size() - 1 in `pairs`, or -1
  };
  std::vector<Track> tracks;
  std::vector<int> byKeypoint;  // keypoint -> index in tracks, or -1
  std::vector<geometry::TrackTriangulation> joint, pairs;

  // The batch's track of keypoint k when its views are still `fresh`.
  const Track* find(int k, const std::vector<FeatureRef>& fresh) const {
    if (k >= static_cast<int>(byKeypoint.size()) || byKeypoint[k] < 0) return nullptr;
    const Track& t = tracks[byKeypoint[k]];
    return t.fresh == fresh ? &t : nullptr;
  }
};

std::vector<geometry::TrackTriangulation> Triangulator::solve(
    const geometry::TriangulationBatch& batch, const geometry::TriangulationOptions& to) const {
#if defined(VIDMAP_HAVE_CUDA)
  if (options_.device && batch.numTracks() >= options_.deviceMinTracks) {
    if (!cuda_) cuda_ = std::make_shared<geometry::CudaTriangulator>(*options_.device);
    return cuda_->triangulate(batch, to);
  }
#endif
  return geometry::triangulateBatch(batch, to);
}

template <class ViewOf>
Triangulator::Speculation Triangulator::speculate(const Reconstruction& rec, int id,
                                                  const geometry::TriangulationOptions& to,
                                                  const ViewOf& viewOf) const {
  Speculation s;
  const int n = graph_.numKeypoints(id);
  s.byKeypoint.assign(n, -1);
  geometry::TriangulationBatch batch;
  std::map<int, int> viewIndex;  // image -> view of the batch
  std::vector<int> views;
  std::vector<Vec2> pixels;
  auto add = [&](geometry::TriangulationBatch& b, const std::vector<FeatureRef>& refs) {
    views.clear();
    pixels.clear();
    for (const FeatureRef& f : refs) {
      const geometry::TrackObservation o = viewOf(f);
      auto [it, isNew] = viewIndex.try_emplace(f.image, 0);
      if (isNew) it->second = batch.addView(o.pose, o.camera);
      views.push_back(it->second);
      pixels.push_back(o.pixel);
    }
    return b.addTrack(views.data(), pixels.data(), static_cast<int>(refs.size()));
  };
  for (int k = 0; k < n; ++k) {
    if (rec.pointOf(id, k) != kNoPoint) continue;
    // A keypoint whose correspondences see a point will most likely continue its track: it is
    // left to the loop (solved alone there if it does not).
    std::vector<FeatureRef> fresh{{id, k}};
    bool seesPoint = false;
    for (const FeatureRef& r : graph_.correspondences(id, k)) {
      if (!rec.isRegistered(r.image)) continue;
      if (rec.pointOf(r.image, r.feature) == kNoPoint)
        fresh.push_back(r);
      else
        seesPoint = true;
    }
    if (fresh.size() < 2 || seesPoint) continue;
    s.byKeypoint[k] = static_cast<int>(s.tracks.size());
    s.tracks.push_back({std::move(fresh), 0, -1});
    s.tracks.back().joint = add(batch, s.tracks.back().fresh);
  }
  if (s.tracks.empty()) return s;
  s.joint = solve(batch, to);
  geometry::TriangulationBatch second;
  for (Speculation::Track& t : s.tracks) {
    if (s.joint[t.joint].ok() || t.fresh.size() <= 2) continue;
    for (size_t j = 1; j < t.fresh.size(); ++j) {
      const int i = add(second, {t.fresh[0], t.fresh[j]});
      if (j == 1) t.pairs = i;
    }
  }
  second.views = batch.views;  // the pairs' views are the first batch's
  if (second.numTracks() > 0) s.pairs = solve(second, to);
  return s;
}

void Triangulator::triangulateImage(Reconstruction& rec, const Camera& camera, int id,
                                    bool log) const {
  std::int64_t created = 0, continued = 0;
  std::map<std::string, std::int64_t> refused;
  geometry::TriangulationOptions to;
  to.max_error_px = options_.maxReprojErrorPx;
  to.min_angle_deg = options_.minAngleDeg;
  const geometry::Pinhole pin = camera.pinhole();
  const KeyframeStore& keyframes = rec.keyframes();
  const geometry::Pose& pose = rec.image(id).pose;
  // The nearest depth a new point may have (minDepthFraction of the image's median depth).
  double minDepth = 0;
  if (options_.minDepthFraction > 0) {
    std::vector<double> depth;
    for (PointId p : rec.image(id).point3d)
      if (p != kNoPoint) depth.push_back(pose.apply(rec.point(p).X).z());
    if (depth.size() >= 10) {
      std::nth_element(depth.begin(), depth.begin() + depth.size() / 2, depth.end());
      minDepth = options_.minDepthFraction * depth[depth.size() / 2];
    }
  }
  auto viewOf = [&](const FeatureRef& f) {
    geometry::TrackObservation o;
    o.pose = rec.image(f.image).pose;
    o.camera = pin;
    o.pixel = pin.project(keyframes[f.image].normalized[f.feature]);
    return o;
  };
  // The new tracks of the image in one batch (geometry/triangulation_batch.h), with the views
  // they have before this call; the loop below makes the same decisions as one track at a time
  // and takes a batch result only where its views are still the track's (a point made earlier
  // in the loop may have claimed one of them; such a track is solved alone: same arithmetic).
  const Speculation spec = options_.batched ? speculate(rec, id, to, viewOf) : Speculation{};
  for (int k = 0; k < graph_.numKeypoints(id); ++k) {
    if (rec.pointOf(id, k) != kNoPoint) continue;
    const auto& corr = graph_.correspondences(id, k);
    if (corr.empty()) continue;
    // Continue an existing track when the keypoint sees its point.
    PointId bestP = kNoPoint;
    double bestErr = options_.maxReprojErrorPx;
    std::vector<FeatureRef> fresh{{id, k}};
    for (const FeatureRef& r : corr) {
      if (!rec.isRegistered(r.image)) continue;
      const PointId p = rec.pointOf(r.image, r.feature);
      if (p == kNoPoint) {
        fresh.push_back(r);
        continue;
      }
      bool seen = false;
      for (const FeatureRef& o : rec.point(p).track) seen |= o.image == id;
      if (seen) continue;
      const double e = rec.reprojectionError(rec.point(p).X, {id, k});
      if (e < bestErr) {
        bestErr = e;
        bestP = p;
      }
    }
    if (bestP != kNoPoint) {
      rec.addObservation(bestP, {id, k});
      ++continued;
      continue;
    }
    if (fresh.size() < 2) continue;
    const Speculation::Track* pre = spec.find(k, fresh);
    std::vector<geometry::TrackObservation> obs;
    if (!pre)
      for (const FeatureRef& f : fresh) obs.push_back(viewOf(f));
    geometry::TrackTriangulation t =
        pre ? spec.joint[pre->joint] : geometry::triangulateTrack(obs, to);
    std::vector<FeatureRef> track = fresh;
    const geometry::TriangulationStatus joint = t.status;
    if (!t.ok() && fresh.size() > 2) {
      // One wrong view spoils the joint solution: the best two-view point with this keypoint,
      // then the views that agree with it.
      geometry::TrackTriangulation best;
      for (size_t j = 1; j < fresh.size(); ++j) {
        const geometry::TrackTriangulation tj =
            pre ? spec.pairs[pre->pairs + j - 1] : geometry::triangulateTrack({obs[0], obs[j]}, to);
        if (tj.ok() && (!best.ok() || tj.angle_deg > best.angle_deg)) best = tj;
      }
      if (!best.ok()) {
        ++refused[refusalKey(joint)];
        continue;
      }
      t = best;
      track.assign(1, fresh[0]);
      for (size_t j = 1; j < fresh.size(); ++j)
        if (rec.reprojectionError(t.X, fresh[j]) < options_.maxReprojErrorPx)
          track.push_back(fresh[j]);
      if (track.size() < 2) {
        ++refused["no_agreeing_views"];
        continue;
      }
    }
    if (!t.ok()) {
      ++refused[refusalKey(t.status)];
      continue;
    }
    if (pose.apply(t.X).z() < minDepth) {
      ++refused["too_near"];
      continue;
    }
    // Each image once in a track (the graph may hold two keypoints of one image).
    std::vector<FeatureRef> unique;
    for (const FeatureRef& f : track) {
      bool dup = false;
      for (const FeatureRef& u : unique) dup |= u.image == f.image;
      if (!dup) unique.push_back(f);
    }
    if (unique.size() >= 2) {
      rec.addPoint(t.X, unique);
      ++created;
    }
  }
  stats_.created += created;
  stats_.continued += continued;
  std::string why;
  for (const auto& [reason, n] : refused) {
    stats_.refused[reason] += n;
    why += " " + reason + " " + std::to_string(n);
  }
  if (log)
    std::fprintf(stderr,
                 "triangulator: image %d: %lld new points, %lld continued, refused:%s (threshold "
                 "%.2f px, min angle %.2f deg)\n",
                 id, static_cast<long long>(created), static_cast<long long>(continued),
                 why.empty() ? " none" : why.c_str(), options_.maxReprojErrorPx,
                 options_.minAngleDeg);
}

void Triangulator::completeAndMerge(Reconstruction& rec, int id) const {
  const double maxErr = options_.maxReprojErrorPx;
  for (int k = 0; k < graph_.numKeypoints(id); ++k) {
    PointId a = rec.pointOf(id, k);
    if (a == kNoPoint) continue;
    for (const FeatureRef& r : graph_.correspondences(id, k)) {
      if (!rec.isRegistered(r.image) || !rec.hasPoint(a)) continue;
      const PointId b = rec.pointOf(r.image, r.feature);
      if (b == a) continue;
      if (b == kNoPoint) {
        bool seen = false;
        for (const FeatureRef& o : rec.point(a).track) seen |= o.image == r.image;
        if (!seen && rec.reprojectionError(rec.point(a).X, r) < maxErr) rec.addObservation(a, r);
        continue;
      }
      // Merge two tracks when one position explains both (weighted by track length).
      const Point3D& pa = rec.point(a);
      const Point3D& pb = rec.point(b);
      const double wa = static_cast<double>(pa.track.size()),
                   wb = static_cast<double>(pb.track.size());
      const Vec3 X = (wa * pa.X + wb * pb.X) / (wa + wb);
      bool ok = true;
      for (const FeatureRef& o : pa.track) ok = ok && rec.reprojectionError(X, o) < maxErr;
      for (const FeatureRef& o : pb.track) ok = ok && rec.reprojectionError(X, o) < maxErr;
      if (!ok) continue;
      rec.point(a).X = X;
      rec.mergePoints(a, b);
    }
  }
}

void Triangulator::retriangulate(Reconstruction& rec, const Camera& camera) const {
  std::vector<int> ids;
  for (const auto& [id, im] : rec.images()) ids.push_back(id);
  for (int id : ids) triangulateImage(rec, camera, id, false);
  for (int id : ids) completeAndMerge(rec, id);
}

}  // namespace vidmap::sfm
