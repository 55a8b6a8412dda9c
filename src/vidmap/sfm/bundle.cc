#include "vidmap/sfm/bundle.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <unordered_map>

#include "vidmap/ba/problem.h"
#include "vidmap/ba/solver.h"
#include "vidmap/core/check.h"

namespace vidmap::sfm {

namespace {

// The adjuster's model for the camera, and whether observations are the raw keypoints (the
// model is the camera's own) or undistorted pixels of the pinhole part (a known camera whose
// distortion the adjuster has no model for; it is held constant).
struct BaCamera {
  ba::CameraModel model = ba::CameraModel::kPinhole;
  bool raw = true;
  std::uint32_t freeMask = 0;  // intrinsics that may vary when refining
};

BaCamera baCamera(const Camera& cam) {
  BaCamera b;
  switch (cam.model()) {
    case CameraModel::kSimplePinhole:
      b.freeMask = 0x1;  // f
      break;
    case CameraModel::kPinhole:
      b.freeMask = 0x3;  // fx, fy
      break;
    case CameraModel::kSimpleRadial:
      b.freeMask = 0x9;  // f, k
      break;
    case CameraModel::kRadial:
      b.freeMask = 0x19;  // f, k1, k2
      break;
    case CameraModel::kOpenCV:
    case CameraModel::kFullOpenCV:
    case CameraModel::kBal:  // not a camera of the mapper
      b.raw = false;
      return b;
  }
  b.model = cam.model();
  return b;
}

// The points seen by `images`, sorted by id, with how many of the images see each.
struct SeenPoints {
  std::vector<PointId> ids;
  std::vector<int> count;
};

SeenPoints seenPoints(const Reconstruction& rec, const std::vector<int>& images) {
  std::vector<PointId> all;
  for (int id : images)
    for (PointId p : rec.image(id).point3d)
      if (p != kNoPoint) all.push_back(p);
  std::sort(all.begin(), all.end());
  SeenPoints s;
  for (size_t k = 0; k < all.size();) {
    size_t e = k;
    while (e < all.size() && all[e] == all[k]) ++e;
    s.ids.push_back(all[k]);
    s.count.push_back(static_cast<int>(e - k));
    k = e;
  }
  return s;
}

// selectWindowPoints on the images' points as seenPoints lists them.
std::vector<PointId> selectFrom(const Reconstruction& rec, const std::vector<int>& images,
                                const SeenPoints& seen, const BundleOptions& options) {
  const std::vector<PointId>& ids = seen.ids;
  if (options.maxPoints == 0 || static_cast<int>(ids.size()) <= options.maxPoints) return ids;
  // The points ranked once, best observed first (ties: the lower id, the ids' order kept by
  // the stable sort); the buckets hold ranks.
  std::vector<std::pair<int, int>> key;  // (-seen by, -track length)
  key.reserve(ids.size());
  for (size_t k = 0; k < ids.size(); ++k)
    key.emplace_back(-seen.count[k], -static_cast<int>(rec.point(ids[k]).track.size()));
  std::vector<int> order(ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key[a] < key[b]; });
  std::vector<int> rankOf(ids.size());  // by index into ids
  for (size_t r = 0; r < order.size(); ++r) rankOf[order[r]] = static_cast<int>(r);
  const auto rankOfId = [&](PointId p) {
    return rankOf[std::lower_bound(ids.begin(), ids.end(), p) - ids.begin()];
  };

  const int g = options.pointGrid;
  const Camera& cam = rec.camera();
  const double cw = std::max(1, cam.width()) / static_cast<double>(g);
  const double ch = std::max(1, cam.height()) / static_cast<double>(g);
  // One bucket per (image, cell), in the images' order, then the cells' raster order.
  std::vector<std::vector<int>> buckets(images.size() * g * g);
  for (size_t i = 0; i < images.size(); ++i) {
    const std::vector<PointId>& p3 = rec.image(images[i]).point3d;
    const std::vector<Vec2>& kps = rec.keyframes()[images[i]].keypoints;
    for (size_t f = 0; f < p3.size(); ++f) {
      if (p3[f] == kNoPoint) continue;
      const int cx = std::clamp(static_cast<int>(kps[f].x() / cw), 0, g - 1);
      const int cy = std::clamp(static_cast<int>(kps[f].y() / ch), 0, g - 1);
      buckets[(i * g + cy) * g + cx].push_back(rankOfId(p3[f]));
    }
  }
  for (auto& b : buckets) std::sort(b.begin(), b.end());
  const size_t cap = static_cast<size_t>(options.maxPoints);
  std::vector<PointId> kept;
  kept.reserve(cap);
  std::vector<char> taken(ids.size(), 0);  // by rank
  // Round robin: each pass takes the best point not yet kept of every bucket.
  const auto serve = [&](size_t begin, size_t end) {
    std::vector<size_t> next(buckets.size(), 0);
    bool any = true;
    while (any && kept.size() < cap) {
      any = false;
      for (size_t k = begin; k < end && kept.size() < cap; ++k) {
        const std::vector<int>& b = buckets[k];
        while (next[k] < b.size() && taken[b[next[k]]]) ++next[k];
        if (next[k] == b.size()) continue;
        const int r = b[next[k]++];
        taken[r] = 1;
        kept.push_back(ids[order[r]]);
        any = true;
      }
    }
  };
  if (!images.empty()) serve(0, static_cast<size_t>(g) * g);  // the first image's points
  serve(0, buckets.size());
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace

std::vector<PointId> selectWindowPoints(const Reconstruction& rec, const std::vector<int>& images,
                                        const BundleOptions& options) {
  options.check();
  return selectFrom(rec, images, seenPoints(rec, images), options);
}

void BundleOptions::check() const {
  checkRange("bundle.lossScale", lossScale, 1e-300, 1e300);
  checkRange("bundle.maxIterations", maxIterations, 0, 1 << 20);
  checkRange("bundle.functionTolerance", functionTolerance, 0.0, 1.0);
  checkRange("bundle.riseTolerance", riseTolerance, 0.0, 1.0);
  checkRange("bundle.riseBase", riseBase, 0.0, 1e300);
  checkRange("bundle.numThreads", numThreads, 0, 4096);
  checkRange("bundle.cudaMinObservations", cudaMinObservations, 0, 1 << 30);
  checkRange("bundle.cudaOneBlockCholeskyMaxColumns", cudaOneBlockCholeskyMaxColumns, 0,
             ba::Options::kOneBlockCholeskyColumnsLimit);
  checkRange("bundle.maxPoints", maxPoints, 0, 1 << 30);
  checkRange("bundle.maxConstantImages", maxConstantImages, 0, 1 << 30);
  checkRange("bundle.pointGrid", pointGrid, 1, 1 << 10);
  checkRange("bundle.minParallaxDeg", minParallaxDeg, 0.0, 90.0);
}

BundleReport adjustBundle(Reconstruction& rec, const std::vector<int>& variableImages,
                          const BundleOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  options.check();
  BundleReport rep;
  // Per-image flags and slots are vectors over the keyframe ids (dense from 0): the window is
  // assembled for every local BA, and maps here cost as much as a small window's solve.
  const int numIds = static_cast<int>(rec.keyframes().size());
  std::vector<int> variable;  // sorted, distinct
  if (variableImages.empty()) {
    for (const auto& [id, im] : rec.images()) variable.push_back(id);
  } else {
    for (int id : variableImages)
      if (rec.isRegistered(id)) variable.push_back(id);
    std::sort(variable.begin(), variable.end());
    variable.erase(std::unique(variable.begin(), variable.end()), variable.end());
  }
  if (variable.empty()) return rep;
  std::vector<char> isVariable(numIds, 0);
  for (int id : variable) isVariable[id] = 1;

  // The points seen by the variable images, with how many of them see each.
  const SeenPoints seen = seenPoints(rec, variable);
  if (seen.ids.empty()) return rep;
  std::vector<PointId> pointIds;
  if (options.maxPoints > 0 && static_cast<int>(seen.ids.size()) > options.maxPoints) {
    std::vector<int> ordered;  // variableImages' order: its first image is served first
    std::vector<char> listed(numIds, 0);
    for (int id : variableImages.empty() ? variable : variableImages)
      if (id >= 0 && id < numIds && isVariable[id] && !listed[id]) {
        listed[id] = 1;
        ordered.push_back(id);
      }
    // The same points as seen in `ordered`'s order: the counts do not depend on it.
    pointIds = selectFrom(rec, ordered, seen, options);
    rep.pointsLeftOut = static_cast<int>(seen.ids.size() - pointIds.size());
  } else {
    pointIds = seen.ids;
  }
  // The other images that see them, by the number of refined points they share.
  std::vector<int> sharedWith(numIds, 0);
  for (PointId p : pointIds)
    for (const FeatureRef& o : rec.point(p).track)
      if (!isVariable[o.image]) ++sharedWith[o.image];
  std::vector<std::pair<int, int>> byShared;  // (-shared, image): most shared first
  for (int img = 0; img < numIds; ++img)
    if (sharedWith[img] > 0) byShared.emplace_back(-sharedWith[img], img);
  std::sort(byShared.begin(), byShared.end());
  if (options.maxConstantImages > 0 &&
      static_cast<int>(byShared.size()) > options.maxConstantImages) {
    for (size_t k = options.maxConstantImages; k < byShared.size(); ++k)
      rep.observationsLeftOut -= byShared[k].first;
    byShared.resize(options.maxConstantImages);
  }
  std::vector<int> constant;
  for (const auto& [n, img] : byShared) constant.push_back(img);
  std::sort(constant.begin(), constant.end());

  const Camera& cam = rec.camera();
  const BaCamera bc = baCamera(cam);
  ba::Problem prob;
  prob.model = bc.model;
  prob.rotation = ba::RotationType::kQuaternion;
  ba::CameraIntrinsics intr;
  if (bc.raw) {
    for (size_t i = 0; i < cam.params().size(); ++i) intr.params[i] = cam.params()[i];
  } else {
    const geometry::Pinhole p = cam.pinhole();
    intr.params = {p.fx, p.fy, p.cx, p.cy, 0};
  }
  const std::uint32_t all = (1u << ba::numIntrinsics(bc.model)) - 1;
  const bool refine = options.refineIntrinsics && !cam.fixed() && bc.raw;
  std::uint32_t freeMask = bc.freeMask;
  if (options.holdFocal) freeMask &= bc.model == ba::CameraModel::kPinhole ? ~0x3u : ~0x1u;
  // The radial models' distortion follows f, cx, cy (bits 3 on); PINHOLE has none.
  if (options.holdDistortion) freeMask &= 0x7u;
  // The principal point: cx, cy follow the focal length(s) in every raw model.
  if (options.refinePrincipalPoint) freeMask |= bc.model == ba::CameraModel::kPinhole ? 0xcu : 0x6u;
  intr.constantMask = refine ? (all & ~freeMask) : all;
  prob.cameras.push_back(intr);

  // Constant images first: with a single one, the gauge option holds it and the scale.
  std::vector<int> order(constant.begin(), constant.end());
  order.insert(order.end(), variable.begin(), variable.end());
  std::vector<int> slot(numIds, -1);
  for (int id : order) {
    const geometry::Pose& pose = rec.image(id).pose;
    const Eigen::Quaterniond q(pose.R);
    ba::ImagePose ip;
    ip.rotation = {q.w(), q.x(), q.y(), q.z()};
    ip.translation = {pose.t.x(), pose.t.y(), pose.t.z()};
    ip.camera = 0;
    ip.constantMask = isVariable[id] ? 0 : ba::Problem::kPoseMask;
    slot[id] = static_cast<int>(prob.images.size());
    prob.images.push_back(ip);
  }
  std::vector<Vec3> centres;
  if (options.minParallaxDeg > 0)
    for (int id : order) centres.push_back(rec.image(id).pose.center());
  prob.points.reserve(pointIds.size());
  const double minParallaxCos = std::cos(options.minParallaxDeg * M_PI / 180);
  for (PointId pid : pointIds) {
    const Point3D& p = rec.point(pid);
    ba::Point3 q;
    q.xyz = {p.X.x(), p.X.y(), p.X.z()};
    const int pi = static_cast<int>(prob.points.size());
    const size_t first = prob.observations.size();
    for (const FeatureRef& o : p.track) {
      const int at = slot[o.image];
      if (at < 0) continue;  // an image beyond maxConstantImages
      const Vec2& kp = rec.keyframes()[o.image].keypoints[o.feature];
      const Vec2 px = bc.raw ? kp : cam.undistortPixel(kp);
      prob.observations.push_back({at, pi, px.x(), px.y()});
    }
    // The parallax the problem sees: the rays of the point's observations against the first's
    // (at least half the largest angle between two of them, by the triangle inequality).
    if (options.minParallaxDeg > 0 && prob.observations.size() - first >= 2) {
      const Vec3 r0 = (p.X - centres[prob.observations[first].image]).normalized();
      double minCos = 1;
      for (size_t k = first + 1; k < prob.observations.size(); ++k)
        minCos = std::min(minCos, r0.dot((p.X - centres[prob.observations[k].image]).normalized()));
      if (minCos > minParallaxCos) {
        q.constant = true;
        ++rep.pointsHeld;
      }
    }
    prob.points.push_back(q);
  }
  // The localised frames, after the keyframes: variable poses observing the points above.
  std::vector<int> localizedSlot;
  if (options.withLocalized && variableImages.empty() && !rec.localized().empty()) {
    std::unordered_map<PointId, int> pointIndex;
    for (size_t i = 0; i < pointIds.size(); ++i) pointIndex[pointIds[i]] = static_cast<int>(i);
    for (const LocalizedFrame& lf : rec.localized()) {
      const Eigen::Quaterniond q(lf.pose.R);
      ba::ImagePose ip;
      ip.rotation = {q.w(), q.x(), q.y(), q.z()};
      ip.translation = {lf.pose.t.x(), lf.pose.t.y(), lf.pose.t.z()};
      ip.camera = 0;
      const int at = static_cast<int>(prob.images.size());
      localizedSlot.push_back(at);
      prob.images.push_back(ip);
      for (size_t k = 0; k < lf.inliers.size(); ++k) {
        const auto it = pointIndex.find(lf.inlierPoints[k]);
        if (it == pointIndex.end()) continue;
        const Vec2& kp = lf.frame->keypoints[lf.inliers[k]];
        const Vec2 px = bc.raw ? kp : cam.undistortPixel(kp);
        prob.observations.push_back({at, it->second, px.x(), px.y()});
      }
    }
  }

  ba::Options bo;
  bo.backend = static_cast<int>(prob.observations.size()) < options.cudaMinObservations
                   ? ba::BackendType::kCpu
                   : options.backend;
  bo.loss = options.loss;
  bo.lossScale = options.lossScale;
  bo.maxNumIterations = options.maxIterations;
  bo.numThreads = options.numThreads;
  bo.context = options.gpuContext;
  bo.cudaOneBlockCholeskyMaxColumns = options.cudaOneBlockCholeskyMaxColumns;
  bo.gauge = constant.size() >= 2 ? ba::Gauge::kNone : ba::Gauge::kFirstImageAndScale;
  bo.functionTolerance = options.functionTolerance;
  bo.riseTolerance = options.riseTolerance;
  bo.riseBase = options.riseBase;
  bo.parameterTolerance = 1e-8;

  rep.ran = true;
  rep.images = static_cast<int>(order.size());
  rep.constantImages = static_cast<int>(constant.size());
  rep.points = static_cast<int>(pointIds.size());
  rep.observations = static_cast<int>(prob.observations.size());
  rep.initialRmsPx = ba::rmsReprojectionError(prob);
  const ba::Summary sum = ba::solve(prob, bo);
  rep.iterations = sum.numIterations();
  rep.usable = sum.isSolutionUsable();
  rep.preprocessorSeconds = sum.preprocessorSeconds;
  rep.minimizerSeconds = sum.minimizerSeconds;
  rep.backendSeconds = sum.backendSeconds;
  rep.graphCaptureSeconds = sum.graphCaptureSeconds;
  rep.teardownSeconds = sum.teardownSeconds;
  rep.backend = ba::toString(sum.backend);
  if (rep.usable) {
    rep.finalRmsPx = ba::rmsReprojectionError(prob);
    for (int id : variable) {
      const ba::ImagePose& ip = prob.images[slot[id]];
      Eigen::Quaterniond q(ip.rotation[0], ip.rotation[1], ip.rotation[2], ip.rotation[3]);
      geometry::Pose& pose = rec.image(id).pose;
      pose.R = q.normalized().toRotationMatrix();
      pose.t = {ip.translation[0], ip.translation[1], ip.translation[2]};
    }
    for (size_t k = 0; k < localizedSlot.size(); ++k) {
      const ba::ImagePose& ip = prob.images[localizedSlot[k]];
      Eigen::Quaterniond q(ip.rotation[0], ip.rotation[1], ip.rotation[2], ip.rotation[3]);
      geometry::Pose& pose = rec.mutableLocalized()[k].pose;
      pose.R = q.normalized().toRotationMatrix();
      pose.t = {ip.translation[0], ip.translation[1], ip.translation[2]};
    }
    for (size_t i = 0; i < pointIds.size(); ++i) {
      const auto& x = prob.points[i].xyz;
      rec.point(pointIds[i]).X = {x[0], x[1], x[2]};
    }
    if (refine) {
      auto& params = rec.mutableCamera().mutableParams();
      for (size_t i = 0; i < params.size(); ++i) params[i] = prob.cameras[0].params[i];
    }
  } else {
    rep.finalRmsPx = rep.initialRmsPx;
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rep.cpuSeconds = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  return rep;
}

}  // namespace vidmap::sfm
