#include "vidmap/sfm/registration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vidmap/core/check.h"
#include "vidmap/geometry/pnp.h"
#include "vidmap/geometry/refine.h"
#include "vidmap/geometry/score_batch.h"
#if defined(VIDMAP_HAVE_CUDA)
#include "vidmap/geometry/score_batch_cuda.h"
#endif
#include "vidmap/geometry/similarity.h"

namespace vidmap::sfm {

void RegistrationOptions::check() const {
  checkRange("registration.pnpMaxErrorPx", pnpMaxErrorPx, 0.1, 1000.0);
  checkRange("registration.pnpMinInliers", pnpMinInliers, 6, 1000000);
  checkRange("registration.pnpMinInlierRatio", pnpMinInlierRatio, 0.0, 1.0);
  checkRange("registration.maxJumpOverDepth", maxJumpOverDepth, 0.0, 1e9);
  checkRange("registration.rotationOnlyMaxChi2", rotationOnlyMaxChi2, 0.0, 1e12);
  require(pnpDevice == nullptr || pnpLockstep,
          "registration.pnpDevice: set only with registration.pnpLockstep");
#if !defined(VIDMAP_HAVE_CUDA)
  require(pnpDevice == nullptr, "registration.pnpDevice: this build has no CUDA");
#endif
}

const char* toString(Refusal r) {
  switch (r) {
    case Refusal::kNone:
      return "none";
    case Refusal::kFew2D3D:
      return "few_2d3d";
    case Refusal::kPnP:
      return "pnp";
    case Refusal::kInlierRatio:
      return "inlier_ratio";
    case Refusal::kRotationOnly:
      return "rotation_only";
    case Refusal::kJump:
      return "jump";
    case Refusal::kNotConnected:
      return "not_connected";
  }
  return "?";
}

namespace {

std::string format(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Distinct keypoints among the correspondences `refs` (keypoint, point) with mask set (all
// when mask is empty).
int distinctKeypoints(const std::vector<std::pair<int, PointId>>& refs,
                      const std::vector<char>& mask = {}) {
  std::set<int> k;
  for (size_t i = 0; i < refs.size(); ++i)
    if (mask.empty() || mask[i]) k.insert(refs[i].first);
  return static_cast<int>(k.size());
}

}  // namespace

Registration::Registration(const CorrespondenceGraph& graph, const RegistrationOptions& options)
    : graph_(graph), options_(options) {
  options_.check();
}

int count2D3D(const CorrespondenceGraph& graph, const Reconstruction& rec, int id) {
  int n = 0;
  for (int k = 0; k < graph.numKeypoints(id); ++k) {
    bool any = false;
    for (const FeatureRef& r : graph.correspondences(id, k)) {
      const PointId p = rec.pointOf(r.image, r.feature);
      if (p != kNoPoint) any = true;
    }
    n += any;
  }
  return n;
}

RegistrationOutcome Registration::registerImage(Reconstruction& rec, const Camera& camera,
                                                int id) const {
  RegistrationOutcome out;
  // Every refusal is logged with its numbers (verbose) and returned.
  auto refuse = [&](Refusal r, std::string detail) {
    out.refusal = r;
    out.detail = std::move(detail);
    if (options_.verbose)
      std::fprintf(stderr, "registration:   %d refused (%s): %s\n", id, toString(r),
                   out.detail.c_str());
    return out;
  };
  const geometry::Pinhole pin = camera.pinhole();
  const KeyframeStore& keyframes = rec.keyframes();
  // 2D-3D correspondences through the graph; a keypoint may name several points (RANSAC
  // chooses).
  geometry::Vec2List px;
  geometry::Vec3List X;
  std::vector<std::pair<int, PointId>> refs;
  for (int k = 0; k < graph_.numKeypoints(id); ++k) {
    PointId seen[8];
    int ns = 0;
    for (const FeatureRef& r : graph_.correspondences(id, k)) {
      const PointId p = rec.pointOf(r.image, r.feature);
      if (p == kNoPoint) continue;
      bool dup = false;
      for (int s = 0; s < ns; ++s) dup |= seen[s] == p;
      if (dup || ns == 8) continue;
      seen[ns++] = p;
      px.push_back(pin.project(keyframes[id].normalized[k]));
      X.push_back(rec.point(p).X);
      refs.emplace_back(k, p);
    }
  }
  out.correspondences = static_cast<int>(px.size());
  out.keypoints = distinctKeypoints(refs);
  if (out.keypoints < options_.pnpMinInliers)
    return refuse(Refusal::kFew2D3D, format("%d keypoints with a 2D-3D correspondence < %d",
                                            out.keypoints, options_.pnpMinInliers));
  geometry::PnPOptions po;
  po.max_error_px = options_.pnpMaxErrorPx;
  po.min_num_inliers = options_.pnpMinInliers;
  const geometry::PnPResult r = pnp(px, X, pin, po);
  if (options_.verbose)
    std::fprintf(stderr,
                 "registration:   PnP of %d: %zu correspondences, %s, %d inliers, rms %.2f px %s\n",
                 id, px.size(), r.success ? "success" : "failure", r.num_inliers, r.rms_error_px,
                 r.message.c_str());
  if (!r.success)
    return refuse(Refusal::kPnP, format("%d correspondences of %d keypoints: %s",
                                        out.correspondences, out.keypoints, r.message.c_str()));
  out.inliers = distinctKeypoints(refs, r.inlier_mask);
  if (out.inliers < options_.pnpMinInliers)
    return refuse(Refusal::kPnP,
                  format("%d inlier keypoints < %d (%d inliers of %d correspondences)", out.inliers,
                         options_.pnpMinInliers, r.num_inliers, out.correspondences));
  if (out.inliers < options_.pnpMinInlierRatio * out.keypoints)
    return refuse(Refusal::kInlierRatio,
                  format("%d inliers of %d keypoints (%.3f < %.3f), rms %.2f px", out.inliers,
                         out.keypoints, out.inliers / static_cast<double>(out.keypoints),
                         options_.pnpMinInlierRatio, r.rms_error_px));
  geometry::Pose pose = r.pose;
  std::vector<char> inliers = r.inlier_mask;
  // The keyframe nearest in video order among the registered ones it has verified matches
  // with anchors two checks (in a video, the one before; in a loop of photos that closes, the
  // start of the loop rather than an image across the loop, nearer in order); for photos
  // (anchorByMatches), the one with the most verified matches.
  int nearest = -1;
  const std::map<int, int>& neighbours = graph_.neighbours(id);
  if (options_.anchorByMatches) {
    int most = 0;
    for (const auto& [k, n] : neighbours)
      if (n > most && rec.isRegistered(k)) most = n, nearest = k;
  }
  for (int pass = 0; pass < 2 && nearest < 0; ++pass)
    for (const auto& [k, im] : rec.images())
      if ((pass == 1 || neighbours.count(k)) &&
          (nearest < 0 || std::abs(k - id) < std::abs(nearest - id)))
        nearest = k;
  const Vec3 anchor = rec.image(nearest).pose.center();
  // Sum of squared pixel residuals of `p` over the correspondences with mask set.
  auto ssr = [&](const geometry::Pose& p, const std::vector<char>& mask) {
    double s2 = 0;
    for (size_t i = 0; i < px.size(); ++i) {
      if (!mask[i]) continue;
      const Vec3 xc = p.apply(X[i]);
      s2 += xc.z() > 0 ? (pin.project({xc.x() / xc.z(), xc.y() / xc.z()}) - px[i]).squaredNorm()
                       : 1e12;
    }
    return s2;
  };
  // Model selection: a pure rotation about the anchor's centre (3 degrees of freedom) against
  // the full pose (6), both fitted by least squares to PnP's inliers. Under the rotation the
  // full pose's 3 extra parameters lower the squared residuals by sigma^2 chi^2(3); the
  // rotation is kept only when the full pose gains no more than rotationOnlyMaxChi2 sigma^2,
  // sigma^2 the full pose's residual variance (a likelihood-ratio test, the translation's Wald
  // test to first order). Then the translation is not observed (the points are far against the
  // motion), and keeping PnP's would triangulate from a baseline that does not exist and let the
  // scale run away in rotation-heavy video. A real baseline, however small, is kept: pinning it
  // to the anchor's centre makes the triangulator refuse what the keyframe sees as behind the
  // camera (docs/benchmarks.md, "Registration's rotation-only pose: a chi-square test").
  {
    geometry::Vec2List normalized(px.size());
    std::vector<int> idx;
    for (size_t i = 0; i < px.size(); ++i) {
      normalized[i] = pin.normalize(px[i]);
      if (inliers[i]) idx.push_back(static_cast<int>(i));
    }
    geometry::Pose rot = geometry::rotationAboutCentre(X, normalized, anchor, inliers);
    geometry::refineRotationAboutCentre(normalized, X, idx, anchor, &rot);
    geometry::Pose full = pose;  // PnP's, refined with a robust loss; least squares here
    geometry::refineAbsolutePose(normalized, X, idx, &full);
    const int n = static_cast<int>(idx.size());
    const double sFull = std::min(ssr(full, inliers), ssr(pose, inliers));
    const double sRot = ssr(rot, inliers);
    // Keypoints are not better than this; exact synthetic ones must not divide by zero.
    constexpr double kMinSigmaPx = 0.05;
    const double sigma2 = std::max(sFull / std::max(2 * n - 6, 1), kMinSigmaPx * kMinSigmaPx);
    const double chi2 = (sRot - sFull) / sigma2;
    const bool rotation = chi2 <= options_.rotationOnlyMaxChi2;
    if (options_.verbose)
      std::fprintf(stderr,
                   "mapper:   model of %d: %d inliers, rms full pose %.3f px, rotation about %d "
                   "%.3f px, sigma %.3f px, chi2 %.1f: %s\n",
                   id, n, std::sqrt(sFull / std::max(n, 1)), nearest,
                   std::sqrt(sRot / std::max(n, 1)), std::sqrt(sigma2), chi2,
                   rotation ? "rotation" : "full pose");
    if (rotation) {
      pose = rot;
      for (size_t i = 0; i < px.size(); ++i) {
        const Vec3 xc = pose.apply(X[i]);
        inliers[i] =
            xc.z() > 0 && (pin.project({xc.x() / xc.z(), xc.y() / xc.z()}) - px[i]).norm() <
                              options_.pnpMaxErrorPx;
      }
      out.inliers = distinctKeypoints(refs, inliers);
      if (out.inliers < options_.pnpMinInliers)
        return refuse(Refusal::kRotationOnly,
                      format("the rotation about keyframe %d keeps %d inlier keypoints < %d",
                             nearest, out.inliers, options_.pnpMinInliers));
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
    if (!(jump < options_.maxJumpOverDepth * medianDepth))
      return refuse(Refusal::kJump,
                    format("the centre moved %.4g from keyframe %d, more than %.3g x the median "
                           "depth %.4g",
                           jump, nearest, options_.maxJumpOverDepth, medianDepth));
  }
  rec.registerImage(id, pose);
  for (size_t i = 0; i < refs.size(); ++i) {
    if (!inliers[i]) continue;
    const auto [k, p] = refs[i];
    if (rec.pointOf(id, k) != kNoPoint) continue;
    bool seen = false;
    for (const FeatureRef& o : rec.point(p).track) seen |= o.image == id;
    if (!seen) rec.addObservation(p, {id, k});
  }
  return out;
}

geometry::PnPResult Registration::pnp(const geometry::Vec2List& px, const geometry::Vec3List& X,
                                      const geometry::Pinhole& pin,
                                      const geometry::PnPOptions& po) const {
  if (!options_.pnpLockstep) return geometry::estimatePnP(px, X, pin, po);
  if (!scorer_) {
#if defined(VIDMAP_HAVE_CUDA)
    if (options_.pnpDevice)
      scorer_ = std::make_shared<geometry::CudaBatchScorer>(*options_.pnpDevice);
#endif
    if (!scorer_) scorer_ = std::make_shared<geometry::CpuBatchScorer>();
  }
  return geometry::estimatePnP(px, X, pin, po, *scorer_);
}

bool Registration::localize(const Reconstruction& rec, const TrackedFrame& f,
                            LocalizedFrame* out) const {
  if (!rec.isRegistered(f.keyframe)) return false;
  const Camera& cam = rec.camera();
  geometry::PnPOptions po;
  po.max_error_px = options_.pnpMaxErrorPx;
  po.min_num_inliers = options_.pnpMinInliers;
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
  if (static_cast<int>(px.size()) < options_.pnpMinInliers) return false;
  const geometry::PnPResult r = geometry::estimatePnP(px, X, cam.pinhole(), po);
  if (!r.success || r.num_inliers < options_.pnpMinInliers ||
      r.num_inliers < options_.pnpMinInlierRatio * static_cast<double>(px.size()))
    return false;
  *out = {};
  out->frame = &f;
  out->pose = r.pose;
  for (size_t i = 0; i < idx.size(); ++i)
    if (r.inlier_mask[i]) {
      out->inliers.push_back(idx[i]);
      out->inlierPoints.push_back(pts[i]);
    }
  return true;
}

}  // namespace vidmap::sfm
