#include "vidmap/sfm/mapper.h"

#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/geometry/pnp.h"
#include "vidmap/geometry/triangulation.h"
#include "vidmap/sfm/focal_estimation.h"
#include "vidmap/sfm/pair_verification.h"

namespace vidmap::sfm {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Timer {
  double* acc;
  Clock::time_point t0 = Clock::now();
  explicit Timer(double* a) : acc(a) {}
  ~Timer() { *acc += secondsSince(t0); }
};

}  // namespace

void MapperOptions::check() const {
  twoView.check();
  checkRange("mapper.minPairInliers", minPairInliers, 5, 1000000);
  checkRange("mapper.selfCalibrationMinPairs", selfCalibrationMinPairs, 1, 1000000);
  checkRange("mapper.initMinPoints", initMinPoints, 5, 1000000);
  checkRange("mapper.initMinAngleDeg", initMinAngleDeg, 0.0, 90.0);
  checkRange("mapper.initMaxPendingKeyframes", initMaxPendingKeyframes, 2, 1000000);
  checkRange("mapper.initRelaxedMinAngleDeg", initRelaxedMinAngleDeg, 0.0, 90.0);
  checkRange("mapper.pnpMaxErrorPx", pnpMaxErrorPx, 0.1, 1000.0);
  checkRange("mapper.pnpMinInliers", pnpMinInliers, 6, 1000000);
  checkRange("mapper.pnpMinInlierRatio", pnpMinInlierRatio, 0.0, 1.0);
  checkRange("mapper.maxJumpOverDepth", maxJumpOverDepth, 0.0, 1e9);
  checkRange("mapper.maxReprojErrorPx", maxReprojErrorPx, 0.1, 1000.0);
  checkRange("mapper.minTriAngleDeg", minTriAngleDeg, 0.0, 90.0);
  checkRange("mapper.localBaImages", localBaImages, 2, 1000);
  checkRange("mapper.localBaIterations", localBaIterations, 0, 1000);
  checkRange("mapper.globalBaIterations", globalBaIterations, 0, 1000);
  checkRange("mapper.globalBaGrowth", globalBaGrowth, 1.0, 100.0);
  checkRange("mapper.globalBaGrowingTolerance", globalBaGrowingTolerance, 0.0, 1.0);
  checkRange("mapper.refineIntrinsicsMinImages", refineIntrinsicsMinImages, 2, 1000000);
  checkRange("mapper.maxConsecutiveFailures", maxConsecutiveFailures, 1, 1000000);
  checkRange("mapper.minModelImages", minModelImages, 2, 1000000);
  checkRange("mapper.mergeMinCommonPoints", mergeMinCommonPoints, 3, 1000000);
  checkRange("mapper.mergeMinInlierRatio", mergeMinInlierRatio, 0.0, 1.0);
  checkRange("mapper.mergeMaxErrorGrowth", mergeMaxErrorGrowth, 1.0, 100.0);
  checkRange("mapper.mergeMaxShapeChange", mergeMaxShapeChange, 0.0, 1e9);
}

Mapper::Mapper(const Camera& camera, const MapperOptions& options)
    : options_(options), camera_(camera) {
  options_.check();
  focalKnown_ = camera_.fixed() || !options_.selfCalibrateFocal;
}

std::vector<const Reconstruction*> Mapper::models() const {
  std::vector<const Reconstruction*> out;
  for (const auto& m : finished_) out.push_back(m.get());
  if (active_) out.push_back(active_.get());
  return out;
}

Vec2 Mapper::undistorted(int image, int keypoint) const {
  return camera_.pinhole().project(keyframes_[image].normalized[keypoint]);
}

void Mapper::refreshNormalized() {
  for (Keyframe& kf : keyframes_)
    for (size_t k = 0; k < kf.keypoints.size(); ++k)
      kf.normalized[k] = camera_.normalize(kf.keypoints[k]);
}

void Mapper::addKeyframe(Keyframe kf, const std::vector<PairMatches>& pairs) {
  require(kf.id == static_cast<int>(keyframes_.size()),
          "mapper: keyframe id " + std::to_string(kf.id) + " is not the next (" +
              std::to_string(keyframes_.size()) + ")");
  require(kf.colors.empty() || kf.colors.size() == kf.keypoints.size(),
          "mapper: keyframe colours and keypoints differ in number");
  for (const PairMatches& pm : pairs) {
    const int n = kf.id + 1;
    require(pm.image1 >= 0 && pm.image2 >= 0 && pm.image1 < n && pm.image2 < n &&
                pm.image1 != pm.image2 && (pm.image1 == kf.id || pm.image2 == kf.id),
            "mapper: a pair of keyframe " + std::to_string(kf.id) + " names keyframes (" +
                std::to_string(pm.image1) + ", " + std::to_string(pm.image2) + ")");
    const auto size = [&](int i) {
      return static_cast<int>(i == kf.id ? kf.keypoints.size() : keyframes_[i].keypoints.size());
    };
    for (const auto& [i, j] : pm.matches)
      require(i >= 0 && j >= 0 && i < size(pm.image1) && j < size(pm.image2),
              "mapper: a match of pair (" + std::to_string(pm.image1) + ", " +
                  std::to_string(pm.image2) + ") names a keypoint out of range");
  }
  kf.colors.resize(kf.keypoints.size());
  kf.normalized.resize(kf.keypoints.size());
  for (size_t k = 0; k < kf.keypoints.size(); ++k)
    kf.normalized[k] = camera_.normalize(kf.keypoints[k]);
  const int id = kf.id;
  graph_.addImage(id, static_cast<int>(kf.keypoints.size()));
  keyframes_.push_back(std::move(kf));
  ++stats_.keyframes;

  {
    Timer t(&stats_.verifySeconds);
    verifyPairs(pairs);
  }

  if (!active_) {
    Timer t(&stats_.initSeconds);
    tryInitialize(id);
  }
  if (active_) registerPending();

  // A break: the newest keyframes all failed to register.
  if (active_) {
    const int n = options_.maxConsecutiveFailures;
    int lastRegistered = -1;
    for (const auto& [k, im] : active_->images()) lastRegistered = std::max(lastRegistered, k);
    if (id - lastRegistered >= n) {
      const int restart = lastRegistered + 1;
      if (options_.verbose)
        std::fprintf(stderr, "mapper: keyframes %d-%d not registered: the model ends (%d images)\n",
                     restart, id, active_->numImages());
      finishModel();
      mergeFinishedModels(restart);
      segmentStart_ = restart;
      triedWith_.clear();
      Timer t(&stats_.initSeconds);
      for (int k = restart + 1; k <= id && !active_; ++k) tryInitialize(k);
      if (active_) registerPending();
    }
  }
}

// addKeyframe() has checked the pair's keyframes and keypoint indices.
Mapper::PairCheck Mapper::estimatePair(const PairMatches& pm) const {
  PairCheck c;
  c.a = pm.image1, c.b = pm.image2;
  c.matches = pm.matches;
  if (c.a > c.b) {
    std::swap(c.a, c.b);
    for (auto& p : c.matches) std::swap(p.first, p.second);
  }
  if (graph_.hasPair(c.a, c.b) || static_cast<int>(c.matches.size()) < options_.minPairInliers)
    return c;
  geometry::Vec2List p1, p2;
  p1.reserve(c.matches.size());
  p2.reserve(c.matches.size());
  for (const auto& [i, j] : c.matches) {
    p1.push_back(undistorted(c.a, i));
    p2.push_back(undistorted(c.b, j));
  }
  const geometry::Pinhole cam = camera_.pinhole();
  const PairVerification v = pairVerification(options_.twoView, options_.videoVerification,
                                              focalKnown_, pm, c.a != pm.image1);
  c.geometry = geometry::estimateRelativePose(p1, p2, cam, cam, v.options, v.prior());
  c.estimated = true;
  return c;
}

void Mapper::commitPair(const PairCheck& c) {
  if (graph_.hasPair(c.a, c.b)) return;
  stats_.pairMatches += static_cast<std::int64_t>(c.matches.size());
  if (!c.estimated) {
    ++stats_.pairsRejected;
    return;
  }
  const geometry::TwoViewGeometry& g = c.geometry;
  if (options_.verbose)
    std::fprintf(stderr,
                 "mapper: pair %d-%d: %zu matches, %s, %d inliers (E %d F %d H %d), %zu points, "
                 "median angle %.2f deg\n",
                 c.a, c.b, c.matches.size(), geometry::toString(g.config), g.num_inliers,
                 g.num_e_inliers, g.num_f_inliers, g.num_h_inliers, g.point_indices.size(),
                 g.median_triangulation_angle_deg);
  if (!g.success() || g.num_inliers < options_.minPairInliers) {
    ++stats_.pairsRejected;
    return;
  }
  std::vector<std::pair<int, int>> inl;
  for (size_t k = 0; k < c.matches.size(); ++k)
    if (g.inlier_mask[k]) inl.push_back(c.matches[k]);
  graph_.addPair(c.a, c.b, inl);
  ++stats_.pairsVerified;
  stats_.verifiedMatches += static_cast<std::int64_t>(inl.size());
  pairs_[{c.a, c.b}] = pairInfo(g);
}

void Mapper::verifyPairs(const std::vector<PairMatches>& pairs) {
  // The two-view estimates are independent (each RANSAC has its own seeded generator): they
  // run in parallel, and are committed in the given order, so the result does not depend on
  // the number of threads.
  std::vector<PairCheck> checks(pairs.size());
  std::vector<std::string> errors(pairs.size());
  // An exception must not leave an OpenMP region: it is carried out and thrown after.
  parallelForDynamic(
      static_cast<std::int64_t>(pairs.size()),
      [&](std::int64_t k) {
        try {
          checks[k] = estimatePair(pairs[k]);
        } catch (const std::exception& e) {
          errors[k] = e.what();
        }
      },
      1);
  for (const auto& e : errors)
    if (!e.empty()) throw Error(e);
  for (const PairCheck& c : checks) commitPair(c);
}

Mapper::PairInfo Mapper::pairInfo(const geometry::TwoViewGeometry& g) const {
  PairInfo info;
  info.config = g.config;
  info.inliers = g.num_inliers;
  info.triangulated = static_cast<int>(g.point_indices.size());
  info.medianAngleDeg = g.median_triangulation_angle_deg;
  info.relative = g.relative;
  info.F = g.F;
  info.H = g.H;
  info.fInliers = g.num_f_inliers;
  info.hInliers = g.num_h_inliers;
  return info;
}

bool Mapper::selfCalibrate(int newest) {
  std::vector<FocalObservation> obs;
  for (const auto& [key, p] : pairs_) {
    if (key.first < segmentStart_) continue;
    FocalObservation o;
    // A homography that explains (nearly) all of F's inliers: a rotation, or a translation
    // too small against the depth to tell (a plane seen while moving is the exception).
    if (p.hInliers > 0 &&
        (p.config == geometry::TwoViewConfig::kPanoramic || p.hInliers >= 0.9 * p.fInliers)) {
      o.kind = FocalObservation::kRotation;
      o.M = p.H;
      o.weight = p.hInliers;
    } else if (p.fInliers > 0 && p.hInliers < 0.7 * p.fInliers && p.F.norm() > 0) {
      // Parallax: H explains too little for a plane or a rotation, F is well conditioned.
      o.kind = FocalObservation::kFundamental;
      o.M = p.F;
      o.weight = p.fInliers;
    } else {
      continue;
    }
    obs.push_back(o);
  }
  const bool waitedLong = newest - segmentStart_ + 1 >= options_.initMaxPendingKeyframes;
  if (static_cast<int>(obs.size()) < options_.selfCalibrationMinPairs && !waitedLong) return false;
  focalKnown_ = true;
  const geometry::Pinhole pin = camera_.pinhole();
  const double side = std::max(camera_.width(), camera_.height());
  const auto e = estimateFocal(obs, pin.cx, pin.cy, 0.3 * side, 3.0 * side);
  if (options_.verbose)
    std::fprintf(
        stderr, "mapper: self-calibration from %zu pairs: focal %.1f (cost %.4f, sharpness %.1f)\n",
        obs.size(), e ? e->focal : 0.0, e ? e->cost : 0.0, e ? e->sharpness : 0.0);
  // A flat cost (no distinct minimum), or a minimum at the end of the range (the cost still
  // falls outside it), keeps the initial guess; bundle adjustment refines it.
  if (!e || e->sharpness < 2.0 || e->atBoundary) return true;
  auto& params = camera_.mutableParams();
  const bool shared = camera_.model() == io::CameraModelId::kSimplePinhole ||
                      camera_.model() == io::CameraModelId::kSimpleRadial ||
                      camera_.model() == io::CameraModelId::kRadial;
  params[0] = e->focal;
  if (!shared) params[1] = e->focal;
  stats_.selfCalibratedFocal = e->focal;
  refreshNormalized();
  // The pairs' poses and triangulations depend on the focal length: verify them again.
  const geometry::Pinhole cam = camera_.pinhole();
  for (auto& [key, p] : pairs_) {
    if (key.first < segmentStart_) continue;
    const auto m = graph_.pairMatches(key.first, key.second);
    geometry::Vec2List p1, p2;
    for (const auto& [i, j] : m) {
      p1.push_back(undistorted(key.first, i));
      p2.push_back(undistorted(key.second, j));
    }
    const geometry::TwoViewGeometry g =
        geometry::estimateRelativePose(p1, p2, cam, cam, options_.twoView);
    p = pairInfo(g);
  }
  return true;
}

bool Mapper::tryInitialize(int newest) {
  if (!focalKnown_ && !selfCalibrate(newest)) return false;
  auto usable = [&](const std::pair<int, int>& key, const PairInfo& p, double minAngle) {
    if (key.first < segmentStart_) return false;
    if (std::find(failedInitPairs_.begin(), failedInitPairs_.end(), key) != failedInitPairs_.end())
      return false;
    if (p.config == geometry::TwoViewConfig::kDegenerate ||
        p.config == geometry::TwoViewConfig::kPanoramic)
      return false;
    return p.triangulated >= options_.initMinPoints && p.medianAngleDeg >= minAngle;
  };
  for (;;) {
    // The strict rule on the pairs of the newest keyframe: the most triangulated points.
    std::pair<int, int> best{-1, -1};
    int bestPoints = 0;
    for (const auto& [key, p] : pairs_)
      if (key.second == newest && usable(key, p, options_.initMinAngleDeg) &&
          p.triangulated > bestPoints) {
        best = key;
        bestPoints = p.triangulated;
      }
    // The relaxed rule once enough keyframes waited: the largest median angle so far.
    if (best.first < 0 && newest - segmentStart_ + 1 >= options_.initMaxPendingKeyframes) {
      double bestAngle = -1;
      for (const auto& [key, p] : pairs_)
        if (key.second <= newest && usable(key, p, options_.initRelaxedMinAngleDeg) &&
            p.medianAngleDeg > bestAngle) {
          best = key;
          bestAngle = p.medianAngleDeg;
        }
    }
    if (best.first < 0) return false;
    ++stats_.initAttempts;
    const bool ok = initializeFrom(best.first, best.second);
    if (options_.verbose)
      std::fprintf(stderr, "mapper: initialise from %d-%d: %s\n", best.first, best.second,
                   ok ? "ok" : "failed");
    if (ok) return true;
    failedInitPairs_.push_back(best);
  }
}

bool Mapper::initializeFrom(int a, int b) {
  auto rec = std::make_unique<Reconstruction>(&keyframes_, camera_);
  const PairInfo& info = pairs_.at({a, b});
  rec->registerImage(a, geometry::Pose{});
  rec->registerImage(b, info.relative);
  active_ = std::move(rec);
  triangulateImage(b);
  if (active_->numPoints() < options_.initMinPoints) {
    active_.reset();
    return false;
  }
  {
    Timer t(&stats_.globalBaSeconds);
    BundleOptions bo;
    bo.maxIterations = options_.globalBaIterations;
    bo.loss = ba::LossType::kSoftL1;
    bo.backend = options_.backend;
    bo.gpuContext = options_.globalBaContext;
    adjustBundle(*active_, {}, bo);
    ++stats_.globalBa;
  }
  filterAll();
  if (active_->numPoints() < options_.initMinPoints) {
    active_.reset();
    return false;
  }
  ++stats_.modelsStarted;
  lastGlobalBaImages_ = 2;
  triedWith_.clear();
  return true;
}

int Mapper::count2D3D(int id) const {
  std::set<PointId> pts;
  int n = 0;
  for (int k = 0; k < graph_.numKeypoints(id); ++k) {
    bool any = false;
    for (const FeatureRef& r : graph_.correspondences(id, k)) {
      const PointId p = active_->pointOf(r.image, r.feature);
      if (p != kNoPoint) any = true;
    }
    n += any;
  }
  return n;
}

void Mapper::registerPending(const std::vector<int>* only) {
  std::vector<int> ids;
  if (only) {
    ids = *only;
  } else {
    for (int id = segmentStart_; id < static_cast<int>(keyframes_.size()); ++id) ids.push_back(id);
  }
  for (;;) {
    std::vector<std::pair<int, int>> cands;  // (count, id)
    for (int id : ids) {
      if (active_->isRegistered(id)) continue;
      const int c = count2D3D(id);
      if (c < options_.pnpMinInliers) continue;
      auto it = triedWith_.find(id);
      if (it != triedWith_.end() && it->second >= c) continue;
      cands.emplace_back(c, id);
    }
    if (cands.empty()) break;
    std::sort(cands.rbegin(), cands.rend());
    bool progress = false;
    for (const auto& [c, id] : cands) {
      bool ok;
      {
        Timer t(&stats_.registerSeconds);
        ok = registerImage(id);
      }
      if (options_.verbose)
        std::fprintf(stderr, "mapper: register %d (%d 2D-3D): %s\n", id, c, ok ? "ok" : "failed");
      if (!ok) {
        triedWith_[id] = c;
        ++stats_.pnpFailures;
        continue;
      }
      ++stats_.registrations;
      {
        Timer t(&stats_.triangulateSeconds);
        triangulateImage(id);
      }
      localBundle(id);
      {
        Timer t(&stats_.triangulateSeconds);
        completeAndMerge(id);
      }
      if (active_->numImages() >= options_.globalBaGrowth * lastGlobalBaImages_ &&
          active_->numImages() > lastGlobalBaImages_) {
        globalBundle(options_.globalBaGrowingTolerance);
        filterAll();
        retriangulateAll();
      }
      progress = true;
      break;
    }
    if (!progress) break;
  }
}

bool Mapper::registerImage(int id) {
  // 2D-3D correspondences through the graph; a keypoint may name several points (RANSAC
  // chooses).
  geometry::Vec2List px;
  geometry::Vec3List X;
  std::vector<std::pair<int, PointId>> refs;
  for (int k = 0; k < graph_.numKeypoints(id); ++k) {
    PointId seen[8];
    int ns = 0;
    for (const FeatureRef& r : graph_.correspondences(id, k)) {
      const PointId p = active_->pointOf(r.image, r.feature);
      if (p == kNoPoint) continue;
      bool dup = false;
      for (int s = 0; s < ns; ++s) dup |= seen[s] == p;
      if (dup || ns == 8) continue;
      seen[ns++] = p;
      px.push_back(undistorted(id, k));
      X.push_back(active_->point(p).X);
      refs.emplace_back(k, p);
    }
  }
  if (static_cast<int>(px.size()) < options_.pnpMinInliers) return false;
  geometry::PnPOptions po;
  po.max_error_px = options_.pnpMaxErrorPx;
  po.min_num_inliers = options_.pnpMinInliers;
  const geometry::PnPResult r = geometry::estimatePnP(px, X, camera_.pinhole(), po);
  if (options_.verbose)
    std::fprintf(stderr,
                 "mapper:   PnP of %d: %zu correspondences, %s, %d inliers, rms %.2f px %s\n", id,
                 px.size(), r.success ? "success" : "failure", r.num_inliers, r.rms_error_px,
                 r.message.c_str());
  if (!r.success || r.num_inliers < options_.pnpMinInliers ||
      r.num_inliers < options_.pnpMinInlierRatio * static_cast<double>(px.size()))
    return false;
  geometry::Pose pose = r.pose;
  std::vector<char> inliers = r.inlier_mask;
  // The keyframe nearest in video order anchors two checks.
  int nearest = -1;
  for (const auto& [k, im] : active_->images())
    if (nearest < 0 || std::abs(k - id) < std::abs(nearest - id)) nearest = k;
  const Vec3 anchor = active_->image(nearest).pose.center();
  const geometry::Pinhole pin = camera_.pinhole();
  auto rms = [&](const geometry::Pose& p, const std::vector<char>& mask) {
    double s2 = 0;
    int n = 0;
    for (size_t i = 0; i < px.size(); ++i) {
      if (!mask[i]) continue;
      const Vec3 xc = p.apply(X[i]);
      s2 += xc.z() > 0 ? (pin.project({xc.x() / xc.z(), xc.y() / xc.z()}) - px[i]).squaredNorm()
                       : 1e12;
      ++n;
    }
    return std::sqrt(s2 / std::max(n, 1));
  };
  // Model selection: when a pure rotation about the anchor's centre explains the inliers as
  // well as the full pose, the translation is not observed (the points are far against the
  // motion) and PnP's translation is noise; keeping it would triangulate the next points
  // from a baseline that does not exist and let the scale run away in rotation-heavy video.
  {
    Eigen::Matrix3d H = Eigen::Matrix3d::Zero();
    for (size_t i = 0; i < px.size(); ++i)
      if (inliers[i]) {
        const Vec2 n = pin.normalize(px[i]);
        H += (X[i] - anchor).normalized() * Vec3(n.x(), n.y(), 1).normalized().transpose();
      }
    Eigen::JacobiSVD<Eigen::Matrix3d> svd(H, Eigen::ComputeFullU | Eigen::ComputeFullV);
    Eigen::Matrix3d D = Eigen::Matrix3d::Identity();
    D(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1 : 1;
    geometry::Pose rot;
    rot.R = svd.matrixV() * D * svd.matrixU().transpose();
    rot.t = -rot.R * anchor;
    const double ePnp = rms(pose, inliers), eRot = rms(rot, inliers);
    if (options_.verbose)
      std::fprintf(stderr, "mapper:   rms of %d: full pose %.3f px, rotation about %d %.3f px\n",
                   id, ePnp, nearest, eRot);
    if (eRot <= ePnp + options_.rotationOnlyTolerancePx) {
      pose = rot;
      int n = 0;
      for (size_t i = 0; i < px.size(); ++i) {
        const Vec3 xc = pose.apply(X[i]);
        inliers[i] =
            xc.z() > 0 && (pin.project({xc.x() / xc.z(), xc.y() / xc.z()}) - px[i]).norm() <
                              options_.pnpMaxErrorPx;
        n += inliers[i];
      }
      if (n < options_.pnpMinInliers) return false;
    }
  }
  // A sanity check video allows: the camera moved less than the depth of what it sees.
  {
    std::vector<double> depth;
    for (size_t i = 0; i < px.size(); ++i)
      if (inliers[i]) depth.push_back(pose.apply(X[i]).z());
    std::nth_element(depth.begin(), depth.begin() + depth.size() / 2, depth.end());
    const double medianDepth = depth[depth.size() / 2];
    const double jump = (pose.center() - anchor).norm();
    if (options_.verbose)
      std::fprintf(stderr,
                   "mapper:   centre of %d moved %.4g from keyframe %d (median depth %.4g)\n", id,
                   jump, nearest, medianDepth);
    if (!(jump < options_.maxJumpOverDepth * medianDepth)) return false;
  }
  active_->registerImage(id, pose);
  for (size_t i = 0; i < refs.size(); ++i) {
    if (!inliers[i]) continue;
    const auto [k, p] = refs[i];
    if (active_->pointOf(id, k) != kNoPoint) continue;
    bool seen = false;
    for (const FeatureRef& o : active_->point(p).track) seen |= o.image == id;
    if (!seen) active_->addObservation(p, {id, k});
  }
  return true;
}

void Mapper::triangulateImage(int id) {
  Reconstruction& rec = *active_;
  geometry::TriangulationOptions to;
  to.max_error_px = options_.maxReprojErrorPx;
  to.min_angle_deg = options_.minTriAngleDeg;
  const geometry::Pinhole pin = camera_.pinhole();
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
      continue;
    }
    if (fresh.size() < 2) continue;
    auto obsOf = [&](const FeatureRef& f) {
      geometry::TrackObservation o;
      o.pose = rec.image(f.image).pose;
      o.camera = pin;
      o.pixel = undistorted(f.image, f.feature);
      return o;
    };
    std::vector<geometry::TrackObservation> obs;
    for (const FeatureRef& f : fresh) obs.push_back(obsOf(f));
    geometry::TrackTriangulation t = geometry::triangulateTrack(obs, to);
    std::vector<FeatureRef> track = fresh;
    if (!t.ok() && fresh.size() > 2) {
      // One wrong view spoils the joint solution: the best two-view point with this keypoint,
      // then the views that agree with it.
      geometry::TrackTriangulation best;
      for (size_t j = 1; j < fresh.size(); ++j) {
        const geometry::TrackTriangulation tj = geometry::triangulateTrack({obs[0], obs[j]}, to);
        if (tj.ok() && (!best.ok() || tj.angle_deg > best.angle_deg)) best = tj;
      }
      if (!best.ok()) continue;
      t = best;
      track.assign(1, fresh[0]);
      for (size_t j = 1; j < fresh.size(); ++j)
        if (rec.reprojectionError(t.X, fresh[j]) < options_.maxReprojErrorPx)
          track.push_back(fresh[j]);
      if (track.size() < 2) continue;
    }
    if (!t.ok()) continue;
    // Each image once in a track (the graph may hold two keypoints of one image).
    std::vector<FeatureRef> unique;
    for (const FeatureRef& f : track) {
      bool dup = false;
      for (const FeatureRef& u : unique) dup |= u.image == f.image;
      if (!dup) unique.push_back(f);
    }
    if (unique.size() >= 2) rec.addPoint(t.X, unique);
  }
}

void Mapper::completeAndMerge(int id) {
  Reconstruction& rec = *active_;
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

void Mapper::localBundle(int id) {
  Reconstruction& rec = *active_;
  // The images sharing the most points with the new keyframe.
  std::map<int, int> shared;
  for (PointId p : rec.image(id).point3d) {
    if (p == kNoPoint) continue;
    for (const FeatureRef& o : rec.point(p).track)
      if (o.image != id) ++shared[o.image];
  }
  std::vector<std::pair<int, int>> byCount;
  for (const auto& [img, c] : shared) byCount.emplace_back(c, img);
  std::sort(byCount.rbegin(), byCount.rend());
  std::vector<int> local{id};
  for (const auto& [c, img] : byCount) {
    if (static_cast<int>(local.size()) >= options_.localBaImages) break;
    local.push_back(img);
  }
  BundleOptions bo;
  bo.maxIterations = options_.localBaIterations;
  bo.loss = ba::LossType::kSoftL1;
  bo.backend = options_.backend;
  bo.gpuContext = options_.localBaContext;
  {
    Timer t(&stats_.localBaSeconds);
    adjustBundle(rec, local, bo);
    ++stats_.localBa;
  }
  std::vector<PointId> cand;
  for (int img : local)
    for (PointId p : rec.image(img).point3d)
      if (p != kNoPoint) cand.push_back(p);
  filterPoints(cand);
}

void Mapper::globalBundle(double functionTolerance) {
  Reconstruction& rec = *active_;
  BundleOptions bo;
  bo.maxIterations = options_.globalBaIterations;
  bo.functionTolerance = functionTolerance;
  bo.loss = ba::LossType::kSoftL1;
  bo.backend = options_.backend;
  bo.gpuContext = options_.globalBaContext;
  bo.refineIntrinsics = rec.numImages() >= options_.refineIntrinsicsMinImages;
  BundleReport rep;
  {
    Timer t(&stats_.globalBaSeconds);
    rep = adjustBundle(rec, {}, bo);
    ++stats_.globalBa;
  }
  if (options_.verbose) {
    // The spread of the camera centres: a scale that runs away shows here first.
    Vec3 mean = Vec3::Zero();
    for (const auto& [id, im] : rec.images()) mean += im.pose.center();
    mean /= rec.numImages();
    double spread = 0;
    for (const auto& [id, im] : rec.images()) spread += (im.pose.center() - mean).squaredNorm();
    std::fprintf(stderr,
                 "mapper: global BA: %d images, %d points, rms %.3f -> %.3f px, %d iterations, "
                 "centre spread %.4g\n",
                 rep.images, rep.points, rep.initialRmsPx, rep.finalRmsPx, rep.iterations,
                 std::sqrt(spread / rec.numImages()));
  }
  lastGlobalBaImages_ = rec.numImages();
  if (bo.refineIntrinsics && rec.camera().params() != camera_.params()) {
    camera_ = rec.camera();
    refreshNormalized();
  }
}

void Mapper::filterPoints(const std::vector<PointId>& candidates) {
  Timer t(&stats_.filterSeconds);
  Reconstruction& rec = *active_;
  std::set<PointId> ids(candidates.begin(), candidates.end());
  for (PointId id : ids) {
    if (!rec.hasPoint(id)) continue;
    const std::vector<FeatureRef> track = rec.point(id).track;
    bool deleted = false;
    for (const FeatureRef& o : track) {
      if (rec.reprojectionError(rec.point(id).X, o) > options_.maxReprojErrorPx) {
        if (rec.deleteObservation(id, o)) {
          deleted = true;
          break;
        }
      }
    }
    if (deleted) continue;
    if (rec.triangulationAngleDeg(id) < options_.minTriAngleDeg) rec.deletePoint(id);
  }
}

void Mapper::filterAll() {
  std::vector<PointId> all;
  for (const auto& [id, p] : active_->points()) all.push_back(id);
  filterPoints(all);
}

void Mapper::retriangulateAll() {
  Timer t(&stats_.triangulateSeconds);
  std::vector<int> ids;
  for (const auto& [id, im] : active_->images()) ids.push_back(id);
  for (int id : ids) triangulateImage(id);
  for (int id : ids) completeAndMerge(id);
}

void Mapper::refineModel() {
  globalBundle();
  filterAll();
  retriangulateAll();
  globalBundle();
  filterAll();
}

void Mapper::finishModel() {
  if (!active_) return;
  refineModel();
  if (active_->numImages() >= options_.minModelImages) {
    finished_.push_back(std::move(active_));
  } else {
    ++stats_.modelsDropped;
    active_.reset();
  }
}

void Mapper::addTrackedFrame(TrackedFrame frame) {
  require(frame.keyframe >= 0 && frame.keyframe < static_cast<int>(keyframes_.size()),
          "mapper: a tracked frame names an unknown keyframe");
  require(frame.keypoints.size() == frame.keyframeKeypoint.size(),
          "mapper: a tracked frame's keypoints and matches differ in number");
  const int n = static_cast<int>(keyframes_[frame.keyframe].keypoints.size());
  for (int k : frame.keyframeKeypoint)
    require(k >= 0 && k < n, "mapper: a tracked frame's match names a keypoint out of range");
  ++stats_.trackedFrames;
  tracked_.push_back(std::move(frame));
}

void Mapper::localizeTracked(Reconstruction& rec) {
  const Camera& cam = rec.camera();
  geometry::PnPOptions po;
  po.max_error_px = options_.pnpMaxErrorPx;
  po.min_num_inliers = options_.pnpMinInliers;
  for (const TrackedFrame& f : tracked_) {
    if (!rec.isRegistered(f.keyframe)) continue;
    geometry::Vec2List px;
    geometry::Vec3List X;
    std::vector<int> idx;
    std::vector<PointId> pts;
    std::set<PointId> seen;
    for (size_t k = 0; k < f.keypoints.size(); ++k) {
      const PointId p = rec.pointOf(f.keyframe, f.keyframeKeypoint[k]);
      if (p == kNoPoint || !seen.insert(p).second) continue;
      px.push_back(cam.undistortPixel(f.keypoints[k]));
      X.push_back(rec.point(p).X);
      idx.push_back(static_cast<int>(k));
      pts.push_back(p);
    }
    if (static_cast<int>(px.size()) < options_.pnpMinInliers) continue;
    const geometry::PnPResult r = geometry::estimatePnP(px, X, cam.pinhole(), po);
    if (!r.success || r.num_inliers < options_.pnpMinInliers ||
        r.num_inliers < options_.pnpMinInlierRatio * static_cast<double>(px.size()))
      continue;
    LocalizedFrame lf;
    lf.frame = &f;
    lf.pose = r.pose;
    for (size_t i = 0; i < idx.size(); ++i)
      if (r.inlier_mask[i]) {
        lf.inliers.push_back(idx[i]);
        lf.inlierPoints.push_back(pts[i]);
      }
    rec.addLocalized(std::move(lf));
    ++stats_.localizedFrames;
  }
}

void Mapper::finish() {
  if (finished_all_) return;
  finishModel();
  mergeFinishedModels(static_cast<int>(keyframes_.size()));
  {
    Timer t(&stats_.registerSeconds);
    for (auto& m : finished_) localizeTracked(*m);
  }
  finished_all_ = true;
}

}  // namespace vidmap::sfm
