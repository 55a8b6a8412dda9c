#include "vidmap/sfm/model_merge.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"

namespace vidmap::sfm {

namespace {

// How far the camera centres of `before` moved in `after` beyond a similarity: the RMS residual
// of the Umeyama alignment over the centres' RMS spread; 0 when too few or degenerate.
double shapeChange(const Reconstruction& before, const Reconstruction& after) {
  geometry::Vec3List a, b;
  for (const auto& [id, im] : before.images())
    if (after.isRegistered(id)) {
      a.push_back(im.pose.center());
      b.push_back(after.image(id).pose.center());
    }
  if (a.size() < 3) return 0;
  geometry::Sim3 sim;
  try {
    sim = geometry::alignUmeyama(a, b, true);
  } catch (const Error&) {
    return 0;  // collinear or coincident centres (a rotation): no shape to keep
  }
  Eigen::Vector3d mean = Eigen::Vector3d::Zero();
  for (const auto& x : b) mean += x;
  mean /= static_cast<double>(b.size());
  double res = 0, spread = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    res += (b[i] - sim.apply(a[i])).squaredNorm();
    spread += (b[i] - mean).squaredNorm();
  }
  return spread > 0 ? std::sqrt(res / spread) : 0;
}

}  // namespace

void ModelMergerOptions::check() const {
  checkRange("merge.minCommonPoints", minCommonPoints, 3, 1000000);
  checkRange("merge.minInlierRatio", minInlierRatio, 0.0, 1.0);
  checkRange("merge.maxReprojErrorPx", maxReprojErrorPx, 0.1, 1000.0);
  checkRange("merge.minAlignAngleDeg", minAlignAngleDeg, 0.0, 90.0);
  checkRange("merge.minAbsorb2D3D", minAbsorb2D3D, 1, 1000000);
  checkRange("merge.maxErrorGrowth", maxErrorGrowth, 1.0, 100.0);
  checkRange("merge.maxShapeChange", maxShapeChange, 0.0, 1e9);
  checkRange("merge.minAnchorLinks", minAnchorLinks, 1, 1000000);
  checkRange("merge.anchorScaleTolerance", anchorScaleTolerance, 1.0, 100.0);
}

ModelMerger::ModelMerger(const CorrespondenceGraph& graph, const Triangulator& triangulator,
                         const ModelMergerOptions& options)
    : graph_(graph), triangulator_(triangulator), options_(options) {
  options_.check();
}

int ModelMerger::linkCount(const Reconstruction& a, const Reconstruction& b) const {
  int n = 0;
  for (const auto& [id, im] : a.images())
    for (const auto& [other, matches] : graph_.neighbours(id))
      if (b.isRegistered(other)) n += matches;
  return n;
}

void ModelMerger::mergeAll(std::vector<std::unique_ptr<Reconstruction>>& finished_, int limit,
                           ModelGrower& grower, MergeStats* stats) const {
  // Pairs that failed, cleared when one of them changes.
  std::set<std::pair<const Reconstruction*, const Reconstruction*>> failed;
  auto bySize = [&] {
    std::vector<size_t> order(finished_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return finished_[a]->numImages() > finished_[b]->numImages();
    });
    return order;
  };
  auto changed = [&](const Reconstruction* m) {
    for (auto it = failed.begin(); it != failed.end();)
      it = it->first == m || it->second == m ? failed.erase(it) : std::next(it);
  };
  // Rounds until nothing changes: pair merges, then each model (the largest first) registers
  // what no model holds (keyframes of a dropped model, left out before a break, or between two
  // models). A keyframe a model gained links it to a model it did not reach before (a ring of
  // photos whose neighbours share few tracks: the keyframe between two models joins one, and its
  // points give the next model's images their 2D-3D correspondences), so the pair merges run
  // again after a round that grew a model.
  for (bool grew = true; grew;) {
    grew = false;
    for (bool merged = true; merged;) {
      merged = false;
      // The larger model absorbs the smaller (COLMAP merges into the larger too).
      const std::vector<size_t> order = bySize();
      for (size_t x = 0; x < order.size() && !merged; ++x)
        for (size_t y = x + 1; y < order.size() && !merged; ++y) {
          const Reconstruction* big = finished_[order[x]].get();
          const Reconstruction* small = finished_[order[y]].get();
          if (failed.count({big, small})) continue;
          const int links = linkCount(*big, *small);
          if (links < options_.minCommonPoints) continue;
          if (options_.verbose)
            std::fprintf(stderr, "mapper: merge a model of %d images into one of %d (%d matches)\n",
                         small->numImages(), big->numImages(), links);
          if (mergePair(finished_, order[x], static_cast<std::ptrdiff_t>(order[y]), limit, grower,
                        stats)) {
            finished_.erase(finished_.begin() + static_cast<std::ptrdiff_t>(order[y]));
            changed(big);
            changed(small);
            merged = true;
          } else {
            failed.insert({big, small});
          }
        }
    }
    for (size_t i : bySize())
      if (mergePair(finished_, i, -1, limit, grower, stats)) {
        changed(finished_[i].get());
        grew = finished_.size() > 1;  // another round of pair merges has something to merge
      }
  }
}

bool ModelMerger::mergePair(std::vector<std::unique_ptr<Reconstruction>>& finished_,
                            size_t bigIndex, std::ptrdiff_t smallIndex, int limit,
                            ModelGrower& grower, MergeStats* stats) const {
  const Reconstruction* small = smallIndex >= 0 ? finished_[smallIndex].get() : nullptr;
  if (small) ++stats->attempts;
  std::unique_ptr<Reconstruction>& slot = finished_[bigIndex];
  Reconstruction& big = *slot;  // the grower lends the slot and gives it back
  // Absorption: the smaller model's keyframes not joined yet, and keyframes before `limit`
  // that no model holds (a model of the same scene may register what its part could not).
  std::vector<int> cands;
  bool reachable = false;
  for (int id = 0; id < limit; ++id) {
    if (big.isRegistered(id)) continue;
    bool elsewhere = false;
    for (const auto& m : finished_)
      if (m && m.get() != small && m->isRegistered(id)) elsewhere = true;
    if (elsewhere) continue;
    cands.push_back(id);
    reachable = reachable || small || count2D3D(graph_, big, id) >= options_.minAbsorb2D3D;
  }
  // Without a smaller model: nothing to do unless a keyframe no model holds can be tried now;
  // then all of them are candidates, since one that joins gives the others their 2D-3D
  // correspondences (the mapper's registration tries each once it has enough).
  if (!small && !reachable) return false;
  const Reconstruction before = big;  // restored when the merge is refused
  const double errBig = big.meanReprojectionError();
  const double errSmall = small ? small->meanReprojectionError() : errBig;
  std::string alignRefusal;
  const bool aligned = small && options_.byAlignment && alignAndJoin(big, *small, &alignRefusal);
  if (!alignRefusal.empty()) ++stats->refusals[alignRefusal];

  const int imagesBefore = big.numImages();
  grower.absorb(slot, cands);
  const int absorbed = big.numImages() - imagesBefore;
  // c. Absorption registered some of the smaller model's images but not enough: those images
  // anchor the similarity (their poses in both models), the rest join through it.
  bool anchored = false;
  if (small && !aligned && absorbed > 0 && options_.byAnchor) {
    int left = 0;
    for (const auto& [id, im] : small->images()) left += !big.isRegistered(id);
    if (left > small->numImages() / 4) {
      std::string anchorRefusal;
      anchored = anchorAndJoin(big, *small, &anchorRefusal);
      if (!anchorRefusal.empty()) ++stats->refusals[anchorRefusal];
    }
  }
  if (aligned || anchored || absorbed > 0) grower.refine(slot);
  if (!small && absorbed == 0) return false;

  // Kept when (nearly) all of the smaller model joined and the error is that of the parts.
  int smallLeft = 0;
  if (small)
    for (const auto& [id, im] : small->images()) smallLeft += !big.isRegistered(id);
  const double err = big.meanReprojectionError();
  // The larger model keeps its trajectory (up to a similarity): a wrong merge bends it.
  const double bent = shapeChange(before, big);
  const double maxErr = options_.maxErrorGrowth * std::max(errBig, errSmall);
  const char* refusal = nullptr;
  char why[160] = "";
  if (small && smallLeft > small->numImages() / 4) {
    refusal = "images_left_out";
    std::snprintf(why, sizeof why, "%d of the smaller model's %d images did not join (> 1/4)",
                  smallLeft, small->numImages());
  } else if (!(err <= maxErr)) {
    refusal = "error_growth";
    std::snprintf(why, sizeof why, "mean reprojection error %.3f px > %.3f px (%.2f x the parts')",
                  err, maxErr, options_.maxErrorGrowth);
  } else if (!(bent <= options_.maxShapeChange)) {
    refusal = "shape_change";
    std::snprintf(why, sizeof why, "the larger model's centres moved %.4f of their spread > %.4f",
                  bent, options_.maxShapeChange);
  }
  const bool ok = refusal == nullptr;
  if (options_.verbose)
    std::fprintf(stderr,
                 "mapper: merge %s%s%s: %s, %d keyframes absorbed by PnP, %d of the smaller "
                 "model's %d left out, error %.3f px (parts %.3f, %.3f px), shape change %.4f, %d "
                 "images\n",
                 ok ? "kept" : "refused (", ok ? "" : refusal,
                 ok ? "" : std::string("): ").append(why).c_str(),
                 aligned    ? "aligned"
                 : anchored ? "anchored on a shared image"
                            : "not aligned",
                 absorbed, smallLeft, small ? small->numImages() : 0, err, errBig, errSmall, bent,
                 big.numImages());
  if (!ok) {
    if (small) ++stats->refusals[refusal];
    big = before;
    return false;
  }
  stats->merged += small != nullptr;
  stats->aligned += aligned;
  stats->anchored += anchored;
  stats->imagesAbsorbed += absorbed;
  return true;
}

bool ModelMerger::alignAndJoin(Reconstruction& big, const Reconstruction& small,
                               std::string* refusal, geometry::Sim3* simOut) const {
  auto refuse = [&](const char* key) {
    if (refusal) *refusal = key;
    return false;
  };
  // 3D-3D correspondences: a point of the smaller model and a point of the larger one that
  // the graph links through a keypoint of each track, both seen at minAlignAngleDeg.
  std::set<std::pair<PointId, PointId>> links, lowAngle;
  std::map<PointId, bool> wellSeen;  // big's points, memoised
  for (const auto& [pid, p] : small.points()) {
    const bool smallOk = small.triangulationAngleAtLeast(pid, options_.minAlignAngleDeg);
    for (const FeatureRef& o : p.track)
      for (const FeatureRef& r : graph_.correspondences(o.image, o.feature)) {
        const PointId q = big.pointOf(r.image, r.feature);
        if (q == kNoPoint || links.count({pid, q}) || lowAngle.count({pid, q})) continue;
        auto it = wellSeen.find(q);
        if (it == wellSeen.end())
          it = wellSeen.emplace(q, big.triangulationAngleAtLeast(q, options_.minAlignAngleDeg))
                   .first;
        (smallOk && it->second ? links : lowAngle).insert({pid, q});
      }
  }
  geometry::Vec3List src, dst;
  std::vector<std::pair<PointId, PointId>> ids(links.begin(), links.end());
  for (const auto& [a, b] : ids) {
    src.push_back(small.point(a).X);
    dst.push_back(big.point(b).X);
  }
  if (static_cast<int>(ids.size()) < options_.minCommonPoints) {
    if (options_.verbose)
      std::fprintf(stderr,
                   "mapper:   alignment refused (alignment_few_links): %zu 3D-3D correspondences "
                   "seen at %.2f deg in both models < %d (%d links at lower angles)\n",
                   ids.size(), options_.minAlignAngleDeg, options_.minCommonPoints,
                   static_cast<int>(lowAngle.size()));
    return refuse("alignment_few_links");
  }
  // The residual (pixels, whatever the models' scales): the median reprojection error of the
  // transformed points over the images of both tracks (the smaller model's point in the
  // larger model's images, the larger's in the smaller's). A point behind a camera counts as
  // infinitely far.
  const double maxErr = options_.maxReprojErrorPx;
  auto residualSq = [&](int i, const geometry::Sim3& sim) {
    std::vector<double> errs;
    const Vec3 inBig = sim.apply(src[i]);
    for (const FeatureRef& o : big.point(ids[i].second).track)
      errs.push_back(big.reprojectionError(inBig, o));
    const Vec3 inSmall = sim.applyInverse(dst[i]);
    for (const FeatureRef& o : small.point(ids[i].first).track)
      errs.push_back(small.reprojectionError(inSmall, o));
    const auto mid = errs.begin() + static_cast<std::ptrdiff_t>(errs.size() / 2);
    std::nth_element(errs.begin(), mid, errs.end());
    const double med = *mid;
    return std::isfinite(med) ? med * med : std::numeric_limits<double>::infinity();
  };
  geometry::RansacOptions ro;
  ro.max_error = maxErr;
  ro.confidence = 0.9999;
  ro.max_iterations = 1000;
  ro.seed = 1;
  const geometry::RansacResult<geometry::Sim3> e =
      geometry::estimateSimilarity(src, dst, ro, residualSq);
  if (options_.verbose)
    std::fprintf(stderr,
                 "mapper:   alignment: %zu 3D-3D correspondences, %s, %d inliers, scale %.4g\n",
                 ids.size(), e.success ? "success" : "failure", e.num_inliers, e.model.s);
  if (!e.success || e.num_inliers < options_.minCommonPoints) {
    if (options_.verbose)
      std::fprintf(stderr,
                   "mapper:   alignment refused (alignment_few_inliers): %d inliers < %d (median "
                   "reprojection error within %.2f px)\n",
                   e.num_inliers, options_.minCommonPoints, maxErr);
    return refuse("alignment_few_inliers");
  }
  if (e.num_inliers < options_.minInlierRatio * static_cast<double>(ids.size())) {
    if (options_.verbose)
      std::fprintf(stderr,
                   "mapper:   alignment refused (alignment_inlier_ratio): %d inliers of %zu "
                   "(%.3f < %.3f)\n",
                   e.num_inliers, ids.size(), e.num_inliers / static_cast<double>(ids.size()),
                   options_.minInlierRatio);
    return refuse("alignment_inlier_ratio");
  }
  if (simOut) *simOut = e.model;
  std::vector<std::pair<PointId, PointId>> fuse;
  for (size_t i = 0; i < ids.size(); ++i)
    if (e.inlier_mask[i]) fuse.push_back(ids[i]);
  join(big, small, e.model, fuse);
  return true;
}

void ModelMerger::join(Reconstruction& big, const Reconstruction& small, const geometry::Sim3& sim,
                       const std::vector<std::pair<PointId, PointId>>& fuse) const {
  // The smaller model's images and points join in the larger one's frame.
  std::set<int> joined;
  for (const auto& [id, im] : small.images())
    if (!big.isRegistered(id)) {
      big.registerImage(id, geometry::transformPose(im.pose, sim));
      joined.insert(id);
    }
  std::map<PointId, PointId> moved;  // small's point -> its copy in big
  for (const auto& [pid, p] : small.points()) {
    std::vector<FeatureRef> track;
    for (const FeatureRef& o : p.track)
      if (joined.count(o.image)) track.push_back(o);
    if (track.size() < 2) continue;
    const PointId q = big.addPoint(sim.apply(p.X), track);
    big.point(q).color = p.color;
    moved[pid] = q;
  }
  // One track triangulated in both models becomes one point (the inliers agree within the
  // threshold in every image of both; BA settles the position).
  for (const auto& [ps, pb] : fuse) {
    auto it = moved.find(ps);
    if (it == moved.end()) continue;
    const PointId a = pb, b = it->second;
    if (a == b || !big.hasPoint(a) || !big.hasPoint(b)) continue;
    big.mergePoints(a, b);
  }
  for (int id : joined) triangulator_.completeAndMerge(big, id);
}

bool ModelMerger::anchorAndJoin(Reconstruction& big, const Reconstruction& small,
                                std::string* refusal) const {
  auto refuse = [&](const char* key, const char* fmt, auto... args) {
    if (options_.verbose) {
      std::fprintf(stderr, "mapper:   anchored join refused (%s): ", key);
      std::fprintf(stderr, fmt, args...);
      std::fprintf(stderr, "\n");
    }
    if (refusal) *refusal = key;
    return false;
  };
  // The anchor: of the images both models hold, the one that sees the most of the smaller
  // model's points.
  int anchor = -1;
  for (const auto& [id, im] : small.images())
    if (big.isRegistered(id) && (anchor < 0 || im.numPoints > small.image(anchor).numPoints))
      anchor = id;
  if (anchor < 0) return refuse("anchor_no_shared_image", "%s", "no image in both models");
  // Its camera frame is the same in both models up to the scale s: R_b (s R X + T) + t_b =
  // s (R_s X + t_s) for every X of the smaller model, so R = R_b^T R_s and
  // T = R_b^T (s t_s - t_b); a track triangulated in both models has depths z_b = s z_s.
  const geometry::Pose& pb = big.image(anchor).pose;
  const geometry::Pose& ps = small.image(anchor).pose;
  std::set<std::pair<PointId, PointId>> links;
  for (const auto& [pid, p] : small.points())
    for (const FeatureRef& o : p.track)
      for (const FeatureRef& r : graph_.correspondences(o.image, o.feature)) {
        const PointId q = big.pointOf(r.image, r.feature);
        if (q != kNoPoint) links.insert({pid, q});
      }
  std::vector<double> ratios;
  for (const auto& [a, b] : links) {
    const double zs = ps.apply(small.point(a).X).z(), zb = pb.apply(big.point(b).X).z();
    if (zs > 0 && zb > 0) ratios.push_back(zb / zs);
  }
  if (static_cast<int>(ratios.size()) < options_.minAnchorLinks)
    return refuse("anchor_few_links", "%zu linked points in front of image %d < %d", ratios.size(),
                  anchor, options_.minAnchorLinks);
  std::vector<double> sorted = ratios;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double scale = sorted[sorted.size() / 2];
  // The links must agree on it: a scale from a few wrong links would put the smaller model
  // anywhere (the refinement and the merge's checks come after, but start from here).
  int agree = 0;
  for (double r : ratios)
    agree += std::abs(std::log(r / scale)) < std::log(options_.anchorScaleTolerance);
  if (agree < options_.minAnchorLinks)
    return refuse("anchor_scale_disagrees",
                  "%d of %zu linked points within %.2f x the median depth ratio %.4g < %d", agree,
                  ratios.size(), options_.anchorScaleTolerance, scale, options_.minAnchorLinks);
  geometry::Sim3 sim;
  sim.s = scale;
  sim.R = pb.R.transpose() * ps.R;
  sim.t = pb.R.transpose() * (scale * ps.t - pb.t);
  if (options_.verbose)
    std::fprintf(stderr,
                 "mapper:   anchored on image %d: scale %.4g from %d of %zu linked points\n",
                 anchor, scale, agree, ratios.size());
  join(big, small, sim, {});
  return true;
}

}  // namespace vidmap::sfm
