#include "vidmap/sfm/mapper.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "vidmap/core/camera_model.h"
#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/geometry/two_view_batch.h"
#include "vidmap/sfm/focal_estimation.h"
#include "vidmap/sfm/pair_verification.h"

#if defined(VIDMAP_HAVE_CUDA)
#include "vidmap/geometry/score_batch_cuda.h"
#endif

namespace vidmap::sfm {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Adds the scope's seconds to *acc, and one to *calls when given (a stage's calls in the run
// record).
struct Timer {
  double* acc;
  Clock::time_point t0 = Clock::now();
  explicit Timer(double* a, std::int64_t* calls = nullptr) : acc(a) {
    if (calls) ++*calls;
  }
  ~Timer() { *acc += secondsSince(t0); }
};

// A camera's first distortion coefficient (k1), 0 for a model without distortion.
double firstDistortion(const Camera& camera) {
  const auto d = static_cast<size_t>(modelDistortionIndex(camera.model()));
  return d < camera.params().size() ? camera.params()[d] : 0.0;
}

}  // namespace

void MapperOptions::check() const {
  twoView.check();
  checkRange("mapper.minPairInliers", minPairInliers, 5, 1000000);
  checkRange("mapper.selfCalibrationMinPairs", selfCalibrationMinPairs, 1, 1000000);
  if (selfCalibrationProfileRange != 0)
    checkRange("mapper.selfCalibrationProfileRange", selfCalibrationProfileRange, 1.01, 10.0);
  checkRange("mapper.selfCalibrationProfileMinRatio", selfCalibrationProfileMinRatio, 0.0, 1e12);
  checkRange("mapper.initMinPoints", initMinPoints, 5, 1000000);
  checkRange("mapper.initMinAngleDeg", initMinAngleDeg, 0.0, 90.0);
  checkRange("mapper.initMaxPendingKeyframes", initMaxPendingKeyframes, 2, 1000000);
  checkRange("mapper.initRelaxedMinAngleDeg", initRelaxedMinAngleDeg, 0.0, 90.0);
  checkRange("mapper.initLastResortMinAngleDeg", initLastResortMinAngleDeg, 0.0, 90.0);
  checkRange("mapper.pnpMaxErrorPx", pnpMaxErrorPx, 0.1, 1000.0);
  checkRange("mapper.pnpMinInliers", pnpMinInliers, 6, 1000000);
  checkRange("mapper.pnpMinInlierRatio", pnpMinInlierRatio, 0.0, 1.0);
  checkRange("mapper.maxRegistrationTrials", maxRegistrationTrials, 1, 1000000);
  checkRange("mapper.maxJumpOverDepth", maxJumpOverDepth, 0.0, 1e9);
  checkRange("mapper.rotationOnlyMaxChi2", rotationOnlyMaxChi2, 0.0, 1e12);
  checkRange("mapper.maxReprojErrorPx", maxReprojErrorPx, 0.1, 1000.0);
  checkRange("mapper.minTriAngleDeg", minTriAngleDeg, 0.0, 90.0);
  checkRange("mapper.minTriDepthFraction", minTriDepthFraction, 0.0, 1.0);
  checkRange("mapper.localBaImages", localBaImages, 2, 1000);
  checkRange("mapper.localBaIterations", localBaIterations, 0, 1000);
  checkRange("mapper.localBaFunctionTolerance", localBaFunctionTolerance, 0.0, 1.0);
  checkRange("mapper.baMinParallaxDeg", baMinParallaxDeg, 0.0, 90.0);
  checkRange("mapper.localBaMaxPoints", localBaMaxPoints, 0, 1 << 30);
  checkRange("mapper.localBaMaxConstantImages", localBaMaxConstantImages, 0, 1 << 30);
  checkRange("mapper.baCudaMinObservations", baCudaMinObservations, 0, 1 << 30);
  checkRange("mapper.baCudaOneBlockCholesky", baCudaOneBlockCholesky, 0,
             ba::Options::kOneBlockCholeskyColumnsLimit);
  checkRange("mapper.globalBaIterations", globalBaIterations, 0, 1000);
  checkRange("mapper.globalBaGrowth", globalBaGrowth, 1.0, 100.0);
  checkRange("mapper.globalBaErrorBudget", globalBaErrorBudget, 1.0, 100.0);
  // Below globalBaGrowth: every milestone is past it (a global BA at each).
  checkRange("mapper.globalBaMaxGrowth", globalBaMaxGrowth, 1.0, 100.0);
  checkRange("mapper.globalBaBudgetMinImages", globalBaBudgetMinImages, 0, 1000000);
  checkRange("mapper.globalBaGrowingTolerance", globalBaGrowingTolerance, 0.0, 1.0);
  checkRange("mapper.refineIntrinsicsMinImages", refineIntrinsicsMinImages, 2, 1000000);
  checkRange("mapper.minFocalRatio", minFocalRatio, 1e-3, 1.0);
  checkRange("mapper.maxFocalRatio", maxFocalRatio, 1.0, 1e3);
  checkRange("mapper.maxDistortion", maxDistortion, 1e-9, 1e6);
  checkRange("mapper.maxConsecutiveFailures", maxConsecutiveFailures, 1, 1000000);
  checkRange("mapper.minModelImages", minModelImages, 2, 1000000);
  checkRange("mapper.mergeMinCommonPoints", mergeMinCommonPoints, 3, 1000000);
  checkRange("mapper.mergeMinInlierRatio", mergeMinInlierRatio, 0.0, 1.0);
  checkRange("mapper.mergeMaxErrorGrowth", mergeMaxErrorGrowth, 1.0, 100.0);
  checkRange("mapper.mergeMaxShapeChange", mergeMaxShapeChange, 0.0, 1e9);
}

void MapperStats::writeTo(io::RunRecord& r) const {
  r.addStage("mapper.verify", verifySeconds * 1e3, 0, verifyCalls);
  r.addStage("mapper.init", initSeconds * 1e3, 0, initCalls);
  r.addStage("mapper.register", registerSeconds * 1e3, 0, registrations);
  r.addStage("mapper.localize", localizeSeconds * 1e3, 0, localizedFrames);
  r.addStage("mapper.triangulate", triangulateSeconds * 1e3, 0, triangulateCalls);
  r.addStage("mapper.local_ba", localBaSeconds * 1e3, 0, localBa);
  r.addStage("mapper.global_ba", globalBaSeconds * 1e3, 0, globalBa);
  r.setCount("global_ba_skipped", globalBaSkipped);
  r.addStage("mapper.filter", filterSeconds * 1e3, 0, filterCalls);
  r.addStage("mapper.merge", mergeSeconds * 1e3, 0, modelsMerged);
  r.setCount("pairs_verified", pairsVerified);
  r.setCount("pairs_verified_ahead", pairsVerifiedAhead);
  r.setCount("pairs_ahead_differed", pairsAheadDiffered);
  r.setCount("verify_rounds", verifyRounds);
  r.setCount("verify_hypotheses", verifyHypotheses);
  r.setCount("pairs_rejected", pairsRejected);
  r.setCount("track_matches_kept", trackMatchesKept);
  r.setCount("track_matches_rejected", trackMatchesRejected);
  r.setCount("track_matches_unchecked", trackMatchesUnchecked);
  r.setCount("pair_matches", pairMatches);
  r.setCount("verified_matches", verifiedMatches);
  r.setMetric("self_calibrated_focal_px", selfCalibratedFocal);  // 0: not calibrated
  r.setCount("init_attempts", initAttempts);
  r.setCount("init_last_resort", lastResortInits);
  r.setCount("pnp_failures", pnpFailures);
  r.setCount("models_started", modelsStarted);
  r.setCount("models_dropped", modelsDropped);
  r.setCount("intrinsics_runaways", intrinsicsRunaways);
  r.setCount("models_merged", modelsMerged);
  r.setCount("models_aligned", modelsAligned);
  r.setCount("models_anchored", modelsAnchored);
  r.setCount("merge_attempts", mergeAttempts);
  r.setCount("images_absorbed", imagesAbsorbed);
  r.setCount("tracked_frames", trackedFrames);
  for (const auto& [reason, n] : registrationRefusals)
    r.setCount("registration_refusals." + reason, n);
  for (const auto& [reason, n] : triangulationRefusals)
    r.setCount("triangulation_refusals." + reason, n);
  for (const auto& [reason, n] : mergeRefusals) r.setCount("merge_refusals." + reason, n);
  r.setCount("unjoined_keyframes", static_cast<std::int64_t>(unjoined.size()));
  for (const UnjoinedKeyframe& u : unjoined)
    r.addListItem("unjoined_keyframes", {{"keyframe", std::int64_t{u.id}},
                                         {"name", u.name},
                                         {"reason", u.reason},
                                         {"detail", u.detail}});
}

TriangulatorOptions MapperOptions::triangulator() const {
  TriangulatorOptions o;
  o.maxReprojErrorPx = maxReprojErrorPx;
  o.minAngleDeg = minTriAngleDeg;
  o.minDepthFraction = minTriDepthFraction;
  o.verbose = verbose;
  return o;
}

ModelMergerOptions MapperOptions::merger() const {
  ModelMergerOptions o;
  o.byAlignment = mergeByAlignment;
  o.minCommonPoints = mergeMinCommonPoints;
  o.minInlierRatio = mergeMinInlierRatio;
  o.maxReprojErrorPx = pnpMaxErrorPx;
  o.minAbsorb2D3D = pnpMinInliers;
  o.maxErrorGrowth = mergeMaxErrorGrowth;
  o.maxShapeChange = mergeMaxShapeChange;
  o.verbose = verbose;
  return o;
}

RegistrationOptions MapperOptions::registration() const {
  RegistrationOptions o;
  o.pnpMaxErrorPx = pnpMaxErrorPx;
  o.pnpMinInliers = pnpMinInliers;
  o.pnpMinInlierRatio = pnpMinInlierRatio;
  o.maxJumpOverDepth = maxJumpOverDepth;
  o.rotationOnlyMaxChi2 = rotationOnlyMaxChi2;
  o.anchorByMatches = photos;
  o.verbose = verbose;
  return o;
}

Mapper::Mapper(const Camera& camera, const MapperOptions& options)
    : options_((options.check(), options)),
      camera_(camera),
      triangulator_(graph_, options_.triangulator()),
      registration_(graph_, options_.registration()),
      merger_(graph_, triangulator_, options_.merger()) {
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
  // Every keypoint of every keyframe (Newton's undistortion each) after each camera change:
  // independent, so over the keyframes in parallel.
  parallelFor(static_cast<std::int64_t>(keyframes_.size()), [&](std::int64_t i) {
    Keyframe& kf = keyframes_[i];
    for (size_t k = 0; k < kf.keypoints.size(); ++k)
      kf.normalized[k] = camera_.normalize(kf.keypoints[k]);
  });
  if (cameraSink_) cameraSink_();
}

void Mapper::addKeyframe(Keyframe kf, const std::vector<PairMatches>& pairs,
                         const VerifiedAhead* ahead) {
  if (keyframeSink_) keyframeSink_(kf, pairs);
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
    Timer t(&stats_.verifySeconds, &stats_.verifyCalls);
    verifyPairs(pairs, ahead);
  }
  if (verifiedSink_) verifiedSink_(id);

  if (!active_) {
    Timer t(&stats_.initSeconds, &stats_.initCalls);
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
      tried_.clear();
      Timer t(&stats_.initSeconds, &stats_.initCalls);
      for (int k = restart + 1; k <= id && !active_; ++k) tryInitialize(k);
      if (active_) registerPending();
    }
  }
}

template <class Undistorted, class Keypoint>
bool Mapper::preparePairWith(const MapperOptions& o, FocalLength focal, const PairMatches& pm,
                             Undistorted&& undistorted, Keypoint&& keypoint, PairCheck* c,
                             PairPoints* pts, PairVerification* v) {
  c->a = pm.image1, c->b = pm.image2;
  c->matches = pm.matches;
  if (c->a > c->b) {
    std::swap(c->a, c->b);
    for (auto& p : c->matches) std::swap(p.first, p.second);
  }
  // Track matches are checked against the geometry of the descriptor matches (the pair's
  // first matches), not verified on their own (sfm/pair_verification.h, trackMatchesFit).
  const size_t all = c->matches.size();
  const size_t described =
      pm.firstTrackMatch >= 0 ? std::min(all, static_cast<size_t>(pm.firstTrackMatch)) : all;
  c->descriptorMatches = described;
  if (static_cast<int>(described) < o.minPairInliers) {
    c->trackUnchecked = static_cast<int>(all - described);
    if (o.verbose && c->trackUnchecked > 0) {
      // How far the tracks' keypoints moved: near 0 for tracks that stuck.
      std::vector<double> motion;
      for (size_t k = described; k < all; ++k)
        motion.push_back(
            (keypoint(c->a, c->matches[k].first) - keypoint(c->b, c->matches[k].second)).norm());
      std::nth_element(motion.begin(), motion.begin() + motion.size() / 2, motion.end());
      std::fprintf(stderr,
                   "mapper: pair %d-%d: %d track matches, %zu descriptor matches: not verified "
                   "(median motion %.1f px)\n",
                   c->a, c->b, c->trackUnchecked, described, motion[motion.size() / 2]);
    }
    c->matches.resize(described);
    return false;
  }
  pts->p1.reserve(described);
  pts->p2.reserve(described);
  for (size_t k = 0; k < all; ++k) {
    const auto& [i, j] = c->matches[k];
    (k < described ? pts->p1 : pts->t1).push_back(undistorted(c->a, i));
    (k < described ? pts->p2 : pts->t2).push_back(undistorted(c->b, j));
  }
  *v = pairVerification(o.twoView, o.videoVerification, focal, pm, c->a != pm.image1);
  return true;
}

// addKeyframe() has checked the pair's keyframes and keypoint indices.
bool Mapper::preparePair(const PairMatches& pm, PairCheck* c, PairPoints* pts,
                         PairVerification* v) const {
  if (graph_.hasPair(std::min(pm.image1, pm.image2), std::max(pm.image1, pm.image2))) {
    c->a = std::min(pm.image1, pm.image2), c->b = std::max(pm.image1, pm.image2);
    return false;
  }
  return preparePairWith(
      options_, focalState(), pm, [&](int image, int k) { return undistorted(image, k); },
      [&](int image, int k) { return keyframes_[image].keypoints[k]; }, c, pts, v);
}

FocalLength Mapper::focalState() const {
  return camera_.fixed() ? FocalLength::kGiven
         : focalKnown_   ? FocalLength::kEstimated
                         : FocalLength::kUnknown;
}

void Mapper::fitTrackMatches(const geometry::Pinhole& cam, PairCheck* c, PairPoints* pts,
                             const PairVerification& v) {
  const size_t described = c->descriptorMatches;
  if (described >= c->matches.size()) return;
  const std::vector<char> fit =
      trackMatchesFit(c->geometry, cam, pts->t1, pts->t2, v.options.max_error_px);
  std::vector<std::pair<int, int>> kept(c->matches.begin(), c->matches.begin() + described);
  for (size_t k = 0; k < fit.size(); ++k) {
    const auto& m = c->matches[described + k];
    if (fit[k]) {
      kept.push_back(m);
      pts->p1.push_back(pts->t1[k]);
      pts->p2.push_back(pts->t2[k]);
    } else if (c->geometry.success()) {
      c->trackRejected.push_back(m);
    } else {
      ++c->trackUnchecked;
    }
  }
  c->matches = std::move(kept);
  // The pair's geometry (its inliers, triangulated points and angle, which choose the
  // initial pair) from the descriptor matches and the track matches that fit them.
  if (c->matches.size() > described) {
    geometry::TwoViewGeometry g =
        geometry::estimateRelativePose(pts->p1, pts->p2, cam, cam, v.options, v.prior());
    if (g.success()) {
      c->geometry = std::move(g);
    } else {
      c->geometry.inlier_mask.resize(c->matches.size(), 1);
      c->geometry.num_inliers += static_cast<int>(c->matches.size() - described);
    }
  }
}

void Mapper::estimatePrepared(const geometry::Pinhole& cam, PairCheck* c, PairPoints* pts,
                              const PairVerification& v) {
  c->geometry = geometry::estimateRelativePose(pts->p1, pts->p2, cam, cam, v.options, v.prior());
  c->estimated = true;
  fitTrackMatches(cam, c, pts, v);
}

// What verifyAhead found for one keyframe's pairs, with the inputs it found it from.
struct VerifiedAhead {
  struct Entry {
    PairMatches pm;
    bool prepared = false;      // false: left to addKeyframe (too few matches, keypoints unknown)
    Mapper::PairPoints points;  // as preparePair made them
    Mapper::PairCheck check;    // estimated
  };
  FocalLength focal = FocalLength::kUnknown;
  geometry::Pinhole cam;
  std::vector<Entry> entries;  // one per pair, in the order given

  // The check of pair k when addKeyframe's inputs are the same as these (else null).
  const Mapper::PairCheck* match(size_t k, const PairMatches& pm, FocalLength f,
                                 const geometry::Pinhole& c, const Mapper::PairPoints& p) const {
    if (k >= entries.size() || !entries[k].prepared || f != focal || c != cam) return nullptr;
    const Entry& e = entries[k];
    if (e.pm.image1 != pm.image1 || e.pm.image2 != pm.image2 || e.pm.matches != pm.matches ||
        e.pm.firstTrackMatch != pm.firstTrackMatch || e.pm.essential != pm.essential)
      return nullptr;
    const Mapper::PairPoints& q = e.points;
    if (q.p1 != p.p1 || q.p2 != p.p2 || q.t1 != p.t1 || q.t2 != p.t2) return nullptr;
    return &e.check;
  }
};

std::shared_ptr<const VerifiedAhead> Mapper::verifyAhead(
    const Camera& camera, FocalLength focal, const std::vector<PairMatches>& pairs,
    const std::function<const std::vector<Vec2>*(int)>& keypoints) const {
  auto out = std::make_shared<VerifiedAhead>();
  out->focal = focal;
  out->cam = camera.pinhole();
  // The batched path (verifyPairs) takes none: on the GPU its geometry may differ in the last
  // bits from the per-pair path's, which this is.
  if (options_.batchedVerification || options_.verifyContext) return out;
  out->entries.resize(pairs.size());
  MapperOptions quiet = options_;  // no verbose lines from here: addKeyframe prints them
  quiet.verbose = false;
  parallelForDynamic(
      static_cast<std::int64_t>(pairs.size()),
      [&](std::int64_t k) {
        VerifiedAhead::Entry& e = out->entries[k];
        e.pm = pairs[k];
        const std::vector<Vec2>* k1 = keypoints(e.pm.image1);
        const std::vector<Vec2>* k2 = keypoints(e.pm.image2);
        if (!k1 || !k2 || e.pm.image1 == e.pm.image2) return;
        for (const auto& [i, j] : e.pm.matches)  // else addKeyframe refuses the pair
          if (i < 0 || j < 0 || static_cast<size_t>(i) >= k1->size() ||
              static_cast<size_t>(j) >= k2->size())
            return;
        const auto kp = [&](int image, int i) -> const Vec2& {
          return image == e.pm.image1 ? (*k1)[i] : (*k2)[i];
        };
        // As addKeyframe's keyframes hold it (Keyframe::normalized), then undistorted().
        const auto und = [&](int image, int i) {
          return out->cam.project(camera.normalize(kp(image, i)));
        };
        PairVerification v;
        if (!preparePairWith(quiet, focal, e.pm, und, kp, &e.check, &e.points, &v)) return;
        e.prepared = true;
        PairPoints pts = e.points;
        estimatePrepared(out->cam, &e.check, &pts, v);
      },
      1);
  return out;
}

void Mapper::commitPair(const PairCheck& c) {
  if (graph_.hasPair(c.a, c.b)) return;
  stats_.pairMatches +=
      static_cast<std::int64_t>(c.matches.size() + c.trackRejected.size()) + c.trackUnchecked;
  stats_.trackMatchesUnchecked += c.trackUnchecked;
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
  PairMatches out{c.a, c.b, {}};
  for (size_t k = 0; k < c.matches.size(); ++k)
    (g.inlier_mask[k] ? inl : out.matches).push_back(c.matches[k]);
  // The track matches that do not fit end their tracks like the pair's outliers.
  out.matches.insert(out.matches.end(), c.trackRejected.begin(), c.trackRejected.end());
  stats_.trackMatchesRejected += static_cast<std::int64_t>(c.trackRejected.size());
  stats_.trackMatchesKept +=
      static_cast<std::int64_t>(c.matches.size() - std::min(c.matches.size(), c.descriptorMatches));
  if (outlierSink_ && !out.matches.empty()) outlierSink_(out);
  graph_.addPair(c.a, c.b, inl);
  ++stats_.pairsVerified;
  stats_.verifiedMatches += static_cast<std::int64_t>(inl.size());
  pairs_[{c.a, c.b}] = pairInfo(g);
}

void Mapper::verifyPairs(const std::vector<PairMatches>& pairs, const VerifiedAhead* ahead) {
  // The two-view estimates are independent (each RANSAC has its own seeded generator): they
  // run in parallel, and are committed in the given order, so the result does not depend on
  // the number of threads. The batched path runs the same RANSACs in lock-step, each round's
  // hypotheses of all pairs scored in one call (on the GPU with verifyContext): the same
  // geometry bit for bit (geometry/two_view_batch.h).
  const auto n = static_cast<std::int64_t>(pairs.size());
  std::vector<PairCheck> checks(pairs.size());
  if (options_.batchedVerification || options_.verifyContext) {
    if (!verifyScorer_) {
#if defined(VIDMAP_HAVE_CUDA)
      if (options_.verifyContext)
        verifyScorer_ = std::make_unique<geometry::CudaBatchScorer>(*options_.verifyContext);
#endif
      if (!verifyScorer_) verifyScorer_ = std::make_unique<geometry::CpuBatchScorer>();
    }
    std::vector<PairPoints> pts(pairs.size());
    std::vector<PairVerification> v(pairs.size());
    std::vector<char> todo(pairs.size());
    parallelFor(
        n, [&](std::int64_t k) { todo[k] = preparePair(pairs[k], &checks[k], &pts[k], &v[k]); });
    std::vector<geometry::TwoViewPair> in;
    std::vector<std::int64_t> which;
    const geometry::Pinhole cam = camera_.pinhole();
    for (std::int64_t k = 0; k < n; ++k) {
      if (!todo[k]) continue;
      in.push_back({&pts[k].p1, &pts[k].p2, cam, cam, v[k].options, v[k].essential});
      which.push_back(k);
    }
    geometry::TwoViewBatchStats bs;
    std::vector<geometry::TwoViewGeometry> g =
        geometry::estimateRelativePoses(in, *verifyScorer_, {}, &bs);
    stats_.verifyRounds += bs.rounds;
    stats_.verifyHypotheses += bs.hypotheses;
    for (size_t i = 0; i < which.size(); ++i) {
      checks[which[i]].geometry = std::move(g[i]);
      checks[which[i]].estimated = true;
    }
    // The track matches that fit each pair's geometry (per pair: few pairs have any).
    parallelForDynamic(
        static_cast<std::int64_t>(which.size()),
        [&](std::int64_t i) {
          const std::int64_t k = which[i];
          fitTrackMatches(cam, &checks[k], &pts[k], v[k]);
        },
        1);
  } else {
    // A pair verified ahead with the same inputs keeps that geometry (the same computation).
    const geometry::Pinhole cam = camera_.pinhole();
    const FocalLength focal = focalState();
    std::vector<char> took(pairs.size(), 0), differed(pairs.size(), 0);
    // An exception must not leave an OpenMP region: parallelFor carries the first one out.
    parallelForDynamic(
        n,
        [&](std::int64_t k) {
          PairCheck& c = checks[k];
          PairPoints pts;
          PairVerification v;
          if (!preparePair(pairs[k], &c, &pts, &v)) return;
          if (ahead) {
            if (const PairCheck* done = ahead->match(k, pairs[k], focal, cam, pts)) {
              c = *done;
              took[k] = 1;
              return;
            }
            differed[k] =
                k < static_cast<std::int64_t>(ahead->entries.size()) && ahead->entries[k].prepared;
          }
          estimatePrepared(cam, &c, &pts, v);
        },
        1);
    for (size_t k = 0; k < pairs.size(); ++k) {
      stats_.pairsVerifiedAhead += took[k];
      stats_.pairsAheadDiffered += differed[k];
    }
  }
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

bool Mapper::waitedLong(int newest) const {
  // Counted in sampled frames, not keyframes: a gate that keeps few keyframes (the KLT gate
  // keeps one every 3-4 frames of a turn) must not make the wait longer in time and in angle,
  // or the strict rule meets the wide pairs of little overlap whose poses are wrong
  // (docs/benchmarks.md, "Why the synthetic pan breaks under --klt gate at 640 px").
  return keyframes_[newest].frameIndex - keyframes_[segmentStart_].frameIndex + 1 >=
         options_.initMaxPendingKeyframes;
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
  if (static_cast<int>(obs.size()) < options_.selfCalibrationMinPairs && !waitedLong(newest))
    return false;
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
  setSelfCalibratedFocal(e->focal);
  stats_.homographyFocal = e->focal;
  // The homographies read a translation as rotation (a pan walked sideways comes out 2-3% long):
  // the pairs' calibrated profile from there (sfm::profileFocal).
  const double range = options_.selfCalibrationProfileRange;
  if (range > 0) {
    std::vector<FocalPair> fp;
    for (const auto& [key, p] : pairs_) {
      if (key.first < segmentStart_ || p.config == geometry::TwoViewConfig::kDegenerate) continue;
      FocalPair q;
      for (const auto& [i, j] : graph_.pairMatches(key.first, key.second)) {
        q.p1.push_back(undistorted(key.first, i));
        q.p2.push_back(undistorted(key.second, j));
      }
      q.relative = p.relative;
      fp.push_back(std::move(q));
    }
    const auto pr = profileFocal(fp, pin.cx, pin.cy, e->focal, e->focal / range, e->focal * range,
                                 options_.twoView.max_error_px);
    if (options_.verbose)
      std::fprintf(stderr,
                   "mapper: self-calibration's profile over %zu pairs, %d points: %s %.1f "
                   "(cost %.2f, at the start %.2f, ratio %.1f)\n",
                   fp.size(), pr ? pr->points : 0,
                   !pr              ? "none"
                   : pr->atBoundary ? "at the range's end, kept"
                                    : "focal",
                   pr ? pr->focal : 0.0, pr ? pr->cost : 0.0, pr ? pr->startCost : 0.0,
                   pr ? pr->ratio : 0.0);
    // Moved only where the pairs reject the homographies' estimate (TUM fr1-rpy's first pairs,
    // about 90 matches each, leave the profile too flat to: ratio 4).
    if (pr && !pr->atBoundary && pr->ratio >= options_.selfCalibrationProfileMinRatio) {
      setSelfCalibratedFocal(pr->focal);
      stats_.selfCalibrationProfiled = true;
    }
  }
  return true;
}

void Mapper::setSelfCalibratedFocal(double focal) {
  auto& params = camera_.mutableParams();
  const bool shared = modelNumFocals(camera_.model()) == 1;
  params[0] = focal;
  if (!shared) params[1] = focal;
  stats_.selfCalibratedFocal = focal;
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
}

bool Mapper::tryInitialize(int newest, bool lastResort) {
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
    if (best.first < 0 && (lastResort || waitedLong(newest))) {
      const double minAngle =
          lastResort ? options_.initLastResortMinAngleDeg : options_.initRelaxedMinAngleDeg;
      double bestAngle = -1;
      for (const auto& [key, p] : pairs_)
        if (key.second <= newest && usable(key, p, minAngle) && p.medianAngleDeg > bestAngle) {
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
  triangulator_.triangulateImage(*active_, camera_, b);
  if (active_->numPoints() < options_.initMinPoints) {
    active_.reset();
    return false;
  }
  {
    Timer t(&stats_.globalBaSeconds);
    adjustBundle(*active_, {}, globalBundleOptions());
    ++stats_.globalBa;
  }
  filterAll();
  if (active_->numPoints() < options_.initMinPoints) {
    active_.reset();
    return false;
  }
  ++stats_.modelsStarted;
  resetGlobalSchedule();
  tried_.clear();
  return true;
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
      const int c = registration_.count2D3D(*active_, id);
      if (c < options_.pnpMinInliers) {
        // Not tried: the reason it stays out unless a later try says otherwise.
        auto& last = lastRefusal_[id];
        if (last.refusal == Refusal::kNone || last.refusal == Refusal::kNotConnected) {
          last.refusal = Refusal::kNotConnected;
          last.keypoints = c;
          last.detail = std::to_string(c) + " keypoints with a 2D-3D correspondence < " +
                        std::to_string(options_.pnpMinInliers);
        }
        continue;
      }
      // A refused keyframe is tried again when its correspondences grew, or when the model
      // grew since (new points, a local BA) while it has tries left.
      auto it = tried_.find(id);
      if (it != tried_.end() && c <= it->second.count2D3D &&
          (active_->numImages() <= it->second.modelImages ||
           it->second.trials >= options_.maxRegistrationTrials))
        continue;
      cands.emplace_back(c, id);
    }
    if (cands.empty()) break;
    std::sort(cands.rbegin(), cands.rend());
    bool progress = false;
    for (const auto& [c, id] : cands) {
      RegistrationOutcome out;
      {
        Timer t(&stats_.registerSeconds);
        out = registration_.registerImage(*active_, camera_, id);
      }
      if (options_.verbose)
        std::fprintf(stderr, "mapper: register %d (%d 2D-3D): %s%s%s\n", id, c,
                     out ? "ok" : "failed: ", out ? "" : toString(out.refusal),
                     out ? "" : (" (" + out.detail + ")").c_str());
      if (!out) {
        Trial& tr = tried_[id];
        tr.count2D3D = c;
        tr.modelImages = active_->numImages();
        ++tr.trials;
        ++stats_.pnpFailures;
        ++stats_.registrationRefusals[toString(out.refusal)];
        lastRefusal_[id] = out;
        continue;
      }
      tried_.erase(id);
      lastRefusal_.erase(id);
      ++stats_.registrations;
      {
        Timer t(&stats_.triangulateSeconds, &stats_.triangulateCalls);
        triangulator_.triangulateImage(*active_, camera_, id);
      }
      localBundle(id);
      {
        Timer t(&stats_.triangulateSeconds, &stats_.triangulateCalls);
        triangulator_.completeAndMerge(*active_, id);
      }
      if (globalBaDue()) {
        globalBundle(options_.globalBaGrowingTolerance);
        filterAll();
        retriangulateAll();
        resetGlobalSchedule();
      }
      progress = true;
      break;
    }
    if (!progress) break;
  }
  stats_.triangulationRefusals = triangulator_.stats().refused;
}

void GlobalBaSchedule::adjusted(const Reconstruction& rec) {
  lastImages = lastMilestoneImages = rec.numImages();
  errorAfter = rec.meanReprojectionError();
}

GlobalBaSchedule::Decision GlobalBaSchedule::decide(const Reconstruction& rec,
                                                    const MapperOptions& options) {
  const int n = rec.numImages();
  lastDecision = Decision::kNone;
  if (n <= lastMilestoneImages || n < options.globalBaGrowth * lastMilestoneImages)
    return lastDecision;
  lastMilestoneImages = n;
  lastError = 0;
  if (n < options.globalBaBudgetMinImages || n >= options.globalBaMaxGrowth * lastImages)
    return lastDecision = Decision::kRun;
  lastError = rec.meanReprojectionError();
  lastDecision =
      lastError > options.globalBaErrorBudget * errorAfter ? Decision::kRun : Decision::kSkip;
  return lastDecision;
}

bool Mapper::globalBaDue() {
  GlobalBaSchedule& g = globalSchedule_;
  GlobalBaSchedule::Decision d;
  {
    Timer t(&stats_.globalBaSeconds);
    d = g.decide(*active_, options_);
  }
  if (d == GlobalBaSchedule::Decision::kNone) return false;
  if (options_.verbose)
    std::fprintf(stderr,
                 "mapper: global BA milestone at %d images: mean error %.3f px, %.3f after the "
                 "last one (%d images): %s\n",
                 active_->numImages(), g.lastError, g.errorAfter, g.lastImages,
                 d == GlobalBaSchedule::Decision::kRun ? "run" : "within budget, skipped");
  if (d == GlobalBaSchedule::Decision::kSkip) ++stats_.globalBaSkipped;
  return d == GlobalBaSchedule::Decision::kRun;
}

void Mapper::resetGlobalSchedule() {
  Timer t(&stats_.globalBaSeconds);
  globalSchedule_.adjusted(*active_);
}

void Mapper::localBundle(int id) {
  Reconstruction& rec = *active_;
  // The images sharing the most points with the new keyframe.
  std::vector<int> shared(keyframes_.size(), 0);
  for (PointId p : rec.image(id).point3d) {
    if (p == kNoPoint) continue;
    for (const FeatureRef& o : rec.point(p).track)
      if (o.image != id) ++shared[o.image];
  }
  std::vector<std::pair<int, int>> byCount;
  for (int img = 0; img < static_cast<int>(shared.size()); ++img)
    if (shared[img] > 0) byCount.emplace_back(shared[img], img);
  std::sort(byCount.rbegin(), byCount.rend());
  std::vector<int> local{id};
  for (const auto& [c, img] : byCount) {
    if (static_cast<int>(local.size()) >= options_.localBaImages) break;
    local.push_back(img);
  }
  BundleOptions bo;
  bo.maxIterations = options_.localBaIterations;
  bo.functionTolerance = options_.localBaFunctionTolerance;
  bo.loss = ba::LossType::kSoftL1;
  bo.backend = options_.backend;
  bo.cudaMinObservations = options_.baCudaMinObservations;
  bo.cudaOneBlockCholeskyMaxColumns = options_.baCudaOneBlockCholesky;
  bo.maxPoints = options_.localBaMaxPoints;
  bo.maxConstantImages = options_.localBaMaxConstantImages;
  bo.minParallaxDeg = options_.baMinParallaxDeg;
  BundleReport rep;
  bo.gpuContext = options_.localBaContext;
  {
    Timer t(&stats_.localBaSeconds);
    rep = adjustBundle(rec, local, bo);
    ++stats_.localBa;
  }
  if (options_.verbose)
    std::fprintf(
        stderr,
        "mapper: local BA %d: %d images (%d constant), %d points (%d left out, %d held), %d "
        "observations (%d left out), %d iterations, rms %.3f -> %.3f px, %.1f ms (cpu %.1f ms; "
        "%s: preprocessor %.1f ms, minimizer %.1f ms; backend %.1f, capture %.1f, teardown %.1f "
        "ms)\n",
        id, rep.images, rep.constantImages, rep.points, rep.pointsLeftOut, rep.pointsHeld,
        rep.observations, rep.observationsLeftOut, rep.iterations, rep.initialRmsPx, rep.finalRmsPx,
        rep.seconds * 1e3, rep.cpuSeconds * 1e3, rep.backend, rep.preprocessorSeconds * 1e3,
        rep.minimizerSeconds * 1e3, rep.backendSeconds * 1e3, rep.graphCaptureSeconds * 1e3,
        rep.teardownSeconds * 1e3);
  std::vector<PointId> cand;
  for (int img : local)
    for (PointId p : rec.image(img).point3d)
      if (p != kNoPoint) cand.push_back(p);
  filterPoints(cand);
}

BundleOptions Mapper::globalBundleOptions() const {
  BundleOptions bo;
  bo.maxIterations = options_.globalBaIterations;
  bo.loss = ba::LossType::kSoftL1;
  bo.backend = options_.backend;
  bo.cudaMinObservations = options_.baCudaMinObservations;
  bo.cudaOneBlockCholeskyMaxColumns = options_.baCudaOneBlockCholesky;
  bo.gpuContext = options_.globalBaContext;
  bo.minParallaxDeg = options_.baMinParallaxDeg;
  bo.holdDistortion = distortionHeld_;
  return bo;
}

bool Mapper::plausible(const Camera& camera) const {
  const int side = std::max(camera.width(), camera.height());
  const geometry::Pinhole p = camera.pinhole();
  for (double f : {p.fx, p.fy})
    if (!(f >= options_.minFocalRatio * side && f <= options_.maxFocalRatio * side)) return false;
  for (size_t i = static_cast<size_t>(modelDistortionIndex(camera.model()));
       i < camera.params().size(); ++i)
    if (!(std::abs(camera.params()[i]) <= options_.maxDistortion)) return false;
  return true;
}

void Mapper::globalBundle(double functionTolerance) {
  Reconstruction& rec = *active_;
  BundleOptions bo = globalBundleOptions();
  bo.functionTolerance = functionTolerance;
  bo.refineIntrinsics = rec.numImages() >= options_.refineIntrinsicsMinImages;
  const Camera before = rec.camera();
  BundleReport rep;
  {
    Timer t(&stats_.globalBaSeconds);
    rep = adjustBundle(rec, {}, bo);
    ++stats_.globalBa;
  }
  if (bo.refineIntrinsics && !plausible(rec.camera())) {
    // A runaway (MapperOptions::maxDistortion): again from the focal length before it (the
    // mapper's start when that too was implausible), without distortion, which stays held.
    if (options_.verbose)
      std::fprintf(stderr,
                   "mapper: global BA left the camera implausible (focal %.1f px, k1 %.4g): "
                   "again without distortion\n",
                   rec.camera().params()[0], firstDistortion(rec.camera()));
    Camera reset = plausible(before) ? before : camera_;
    std::vector<double>& params = reset.mutableParams();
    for (auto i = static_cast<size_t>(modelDistortionIndex(reset.model())); i < params.size(); ++i)
      params[i] = 0;
    rec.mutableCamera() = reset;
    distortionHeld_ = true;
    ++stats_.intrinsicsRunaways;
    bo.holdDistortion = true;
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
    // k1 beside the focal length: the two run away together (f up, k1 up).
    std::fprintf(stderr,
                 "mapper: global BA: %d images, %d points, rms %.3f -> %.3f px, %d iterations, "
                 "centre spread %.4g, focal %.1f px, k1 %.4g, %.1f ms (%s: preprocessor %.1f ms, "
                 "minimizer %.1f ms)\n",
                 rep.images, rep.points, rep.initialRmsPx, rep.finalRmsPx, rep.iterations,
                 std::sqrt(spread / rec.numImages()), rec.camera().params()[0],
                 firstDistortion(rec.camera()), rep.seconds * 1e3, rep.backend,
                 rep.preprocessorSeconds * 1e3, rep.minimizerSeconds * 1e3);
  }
  if (bo.refineIntrinsics && rec.camera().params() != camera_.params()) {
    camera_ = rec.camera();
    refreshNormalized();
  }
}

void Mapper::filterPoints(const std::vector<PointId>& candidates) {
  filterPointsOf(*active_, candidates);
}

void Mapper::filterPointsOf(Reconstruction& rec, const std::vector<PointId>& candidates) {
  Timer t(&stats_.filterSeconds, &stats_.filterCalls);
  std::vector<PointId> ids(candidates);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  // The tests read the model only and each point's result depends on its own track: they run
  // in parallel, the deletions then in the order of the ids, so the model does not depend on
  // the number of threads. A point keeps its angle test's result only when none of its
  // observations is deleted (a deletion changes the rays); the others are tested again below.
  enum : char { kGone, kKeep, kLowAngle, kSomeAbove };
  std::vector<char> verdict(ids.size());
  parallelFor(static_cast<std::int64_t>(ids.size()), [&](std::int64_t i) {
    const auto it = rec.points().find(ids[i]);
    if (it == rec.points().end()) {
      verdict[i] = kGone;
      return;
    }
    const Vec3 X = it->second.X;
    for (const FeatureRef& o : it->second.track)
      // Not finite (a point the adjustment moved onto a camera's plane) counts as above.
      if (!(rec.reprojectionError(X, o) <= options_.maxReprojErrorPx)) {
        verdict[i] = kSomeAbove;
        return;
      }
    verdict[i] = rec.triangulationAngleAtLeast(ids[i], options_.minTriAngleDeg) ? kKeep : kLowAngle;
  });
  for (size_t i = 0; i < ids.size(); ++i) {
    const PointId id = ids[i];
    if (verdict[i] == kLowAngle) rec.deletePoint(id);
    if (verdict[i] != kSomeAbove) continue;
    // Every observation above the error, in track order (a deletion moves the next one to k).
    const Vec3 X = rec.points().at(id).X;
    bool deleted = false;
    for (size_t k = 0; !deleted && k < rec.points().at(id).track.size();) {
      const FeatureRef o = rec.points().at(id).track[k];
      if (!(rec.reprojectionError(X, o) <= options_.maxReprojErrorPx))
        deleted = rec.deleteObservation(id, o);
      else
        ++k;
    }
    if (deleted) continue;
    if (!rec.triangulationAngleAtLeast(id, options_.minTriAngleDeg)) rec.deletePoint(id);
  }
}

void Mapper::filterAll() { filterAllOf(*active_); }

void Mapper::filterAllOf(Reconstruction& rec) {
  std::vector<PointId> all;
  for (const auto& [id, p] : rec.points()) all.push_back(id);
  filterPointsOf(rec, all);
}

void Mapper::retriangulateAll() {
  Timer t(&stats_.triangulateSeconds, &stats_.triangulateCalls);
  triangulator_.retriangulate(*active_, camera_);
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
    for (const auto& [id, im] : active_->images()) droppedIds_.insert(id);
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
  if (trackedSink_) trackedSink_(frame);  // a frame refused above is not recorded
  ++stats_.trackedFrames;
  tracked_.push_back(std::move(frame));
}

void Mapper::localizeTracked(Reconstruction& rec) {
  {
    Timer t(&stats_.localizeSeconds);
    for (const TrackedFrame& f : tracked_) {
      LocalizedFrame lf;
      if (!registration_.localize(rec, f, &lf)) continue;
      rec.addLocalized(std::move(lf));
      ++stats_.localizedFrames;
    }
  }
  if (!options_.adjustLocalized || rec.localized().empty()) return;
  BundleOptions bo = globalBundleOptions();
  bo.withLocalized = true;
  BundleReport rep;
  {
    Timer t(&stats_.globalBaSeconds);
    rep = adjustBundle(rec, {}, bo);
  }
  ++stats_.globalBa;
  // As after every global adjustment: the observations the localised frames pulled above the
  // error (or behind a camera: TUM fr1-rpy under the gate left a point there) leave the model.
  filterAllOf(rec);
  rec.updateErrors();
  if (options_.verbose)
    std::fprintf(stderr,
                 "mapper: global BA with %zu localised frames: %d observations, rms %.3f -> %.3f "
                 "px, %d iterations\n",
                 rec.localized().size(), rep.observations, rep.initialRmsPx, rep.finalRmsPx,
                 rep.iterations);
}

// The merger grows a finished model with the mapper's own registration and refinement: the
// model becomes the current one meanwhile (and goes back to its slot however this ends), with
// its camera.
class Mapper::Grower : public ModelGrower {
 public:
  explicit Grower(Mapper& m) : m_(m) {}
  void absorb(std::unique_ptr<Reconstruction>& model, const std::vector<int>& keyframes) override {
    Lend lend(model, m_.active_);
    if (m_.camera_.params() != m_.active_->camera().params()) {
      m_.camera_ = m_.active_->camera();
      m_.refreshNormalized();
    }
    m_.tried_.clear();
    m_.resetGlobalSchedule();
    m_.registerPending(&keyframes);
  }
  void refine(std::unique_ptr<Reconstruction>& model) override {
    Lend lend(model, m_.active_);
    m_.refineModel();
  }

 private:
  struct Lend {
    std::unique_ptr<Reconstruction>& slot;
    std::unique_ptr<Reconstruction>& active;
    Lend(std::unique_ptr<Reconstruction>& s, std::unique_ptr<Reconstruction>& a)
        : slot(s), active(a) {
      active = std::move(slot);
    }
    ~Lend() { slot = std::move(active); }
  };
  Mapper& m_;
};

void Mapper::mergeFinishedModels(int limit) {
  if (!options_.mergeModels || active_ || finished_.empty()) return;
  Timer t(&stats_.mergeSeconds);
  const Camera savedCamera = camera_;
  const GlobalBaSchedule savedSchedule = globalSchedule_;
  const auto savedTried = tried_;
  MergeStats ms;
  Grower grower(*this);
  merger_.mergeAll(finished_, limit, grower, &ms);
  stats_.mergeAttempts += ms.attempts;
  stats_.modelsMerged += ms.merged;
  stats_.modelsAligned += ms.aligned;
  stats_.modelsAnchored += ms.anchored;
  stats_.imagesAbsorbed += ms.imagesAbsorbed;
  if (camera_.params() != savedCamera.params()) {
    camera_ = savedCamera;
    refreshNormalized();
  }
  globalSchedule_ = savedSchedule;
  tried_ = savedTried;
  for (const auto& [reason, n] : ms.refusals) stats_.mergeRefusals[reason] += n;
  stats_.triangulationRefusals = triangulator_.stats().refused;
}

void Mapper::finish() {
  if (finished_all_) return;
  // No model ever started (so none is active or finished): the last try.
  if (stats_.modelsStarted == 0 && options_.initLastResortMinAngleDeg > 0 &&
      keyframes_.size() >= 2) {
    bool ok = false;
    {
      Timer t(&stats_.initSeconds, &stats_.initCalls);
      ok = tryInitialize(static_cast<int>(keyframes_.size()) - 1, true);
    }
    if (ok) {
      ++stats_.lastResortInits;
      registerPending();
    }
  }
  finishModel();
  mergeFinishedModels(static_cast<int>(keyframes_.size()));
  // Timed inside: the PnP as mapper.localize, the adjustment with them as a global BA.
  for (auto& m : finished_) localizeTracked(*m);
  noteUnjoined();
  finished_all_ = true;
}

void Mapper::noteUnjoined() {
  stats_.unjoined.clear();
  for (const Keyframe& kf : keyframes_) {
    bool held = false;
    for (const auto& m : finished_) held = held || m->isRegistered(kf.id);
    if (held) continue;
    UnjoinedKeyframe u;
    u.id = kf.id;
    u.name = kf.name;
    auto it = lastRefusal_.find(kf.id);
    if (it != lastRefusal_.end() && it->second.refusal != Refusal::kNone) {
      u.reason = toString(it->second.refusal);
      u.detail = it->second.detail;
    } else if (droppedIds_.count(kf.id)) {
      u.reason = "dropped_model";
      u.detail = "its model had fewer than " + std::to_string(options_.minModelImages) + " images";
    } else {
      u.reason = toString(Refusal::kNotConnected);
      u.detail = "no model was started from it or reached it";
    }
    stats_.unjoined.push_back(std::move(u));
  }
}

}  // namespace vidmap::sfm
