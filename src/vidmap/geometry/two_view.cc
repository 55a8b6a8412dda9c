#include "vidmap/geometry/two_view.h"

#include "vidmap/geometry/two_view_steps.h"

#include <algorithm>

#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/refine.h"
#include "vidmap/geometry/triangulation.h"

namespace vidmap::geometry {

const char* toString(TwoViewConfig c) {
  switch (c) {
    case TwoViewConfig::kDegenerate:
      return "degenerate";
    case TwoViewConfig::kCalibrated:
      return "calibrated";
    case TwoViewConfig::kUncalibrated:
      return "uncalibrated";
    case TwoViewConfig::kPlanar:
      return "planar";
    case TwoViewConfig::kPanoramic:
      return "panoramic";
  }
  return "?";
}

void TwoViewOptions::check() const {
  checkRange("two_view.max_error_px", max_error_px, 1e-6, 1e4);
  checkRange("two_view.confidence", confidence, 0.0, 1.0 - 1e-12);
  checkRange("two_view.min_iterations", min_iterations, 1, 10000000);
  checkRange("two_view.max_iterations", max_iterations, min_iterations, 10000000);
  checkRange("two_view.min_num_inliers", min_num_inliers, 5, 100000000);
  checkRange("two_view.min_e_f_inlier_ratio", min_e_f_inlier_ratio, 0.0, 1.0);
  checkRange("two_view.max_h_inlier_ratio", max_h_inlier_ratio, 0.0, 1.0);
  checkRange("two_view.min_triangulation_angle_deg", min_triangulation_angle_deg, 0.0, 90.0);
  checkRange("two_view.loss_scale_px", loss_scale_px, 0.0, 1e4);
  checkRange("two_view.e_fail_ratio", e_fail_ratio, 0.0, 1.0);
  checkRange("two_view.prior_min_iterations", prior_min_iterations, 1, max_iterations);
}

template <class M>
static RansacResult<Mat3> toMat3(const RansacResult<M>& r) {
  RansacResult<Mat3> o;
  o.success = r.success;
  o.model = r.model;
  o.inlier_mask = r.inlier_mask;
  o.num_inliers = r.num_inliers;
  o.cost = r.cost;
  o.iterations = r.iterations;
  return o;
}

RansacResult<Mat3> estimateEssential(const Vec2List& x1n, const Vec2List& x2n,
                                     const RansacOptions& options) {
  require(x1n.size() == x2n.size(), "estimateEssential: the point lists differ in size");
  requireFinite(x1n, "estimateEssential: x1n");
  requireFinite(x2n, "estimateEssential: x2n");
  EssentialEstimator est(x1n, x2n);
  return toMat3(ransac(est, options));
}

static std::vector<int> maskToIndices(const std::vector<char>& mask) {
  std::vector<int> idx;
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) idx.push_back(static_cast<int>(i));
  return idx;
}

namespace detail {

bool setupTwoView(const Vec2List& pts1, const Vec2List& pts2, const Pinhole& cam1,
                  const Pinhole& cam2, const TwoViewOptions& opt, bool has_prior, TwoViewSetup* s,
                  TwoViewGeometry* g) {
  opt.check();
  require(pts1.size() == pts2.size(), "estimateRelativePose: pts1 has " +
                                          std::to_string(pts1.size()) + " points but pts2 has " +
                                          std::to_string(pts2.size()));
  requireFinite(pts1, "estimateRelativePose: pts1");
  requireFinite(pts2, "estimateRelativePose: pts2");
  cam1.check("estimateRelativePose: cam1");
  cam2.check("estimateRelativePose: cam2");
  const int n = static_cast<int>(pts1.size());
  s->n = n;
  if (n < std::max(5, opt.min_num_inliers)) {
    g->message = std::to_string(n) + " correspondences, at least " +
                 std::to_string(std::max(5, opt.min_num_inliers)) + " needed";
    return false;
  }
  s->x1.resize(n);
  s->x2.resize(n);
  for (int i = 0; i < n; ++i) {
    s->x1[i] = cam1.normalize(pts1[i]);
    s->x2[i] = cam2.normalize(pts2[i]);
  }
  RansacOptions ro;
  ro.confidence = opt.confidence;
  ro.min_iterations = opt.min_iterations;
  ro.max_iterations = opt.max_iterations;
  ro.seed = opt.seed;
  ro.final_refinements = 1;  // the pose refinement below finishes the job
  if (opt.stop_below_min_inliers) ro.min_inliers = opt.min_num_inliers;

  // E in normalized units: the pixel threshold over the mean focal length (as COLMAP).
  s->px_to_normalized = 4.0 / (cam1.fx + cam1.fy + cam2.fx + cam2.fy);
  s->e = ro;
  s->e.max_error = opt.max_error_px * s->px_to_normalized;
  if (has_prior) s->e.min_iterations = opt.prior_min_iterations;
  s->fh = ro;
  s->fh.max_error = opt.max_error_px;
  return true;
}

bool needsFundamental(const TwoViewOptions& opt, int n, const RansacResult<Mat3R>& er) {
  const bool e_none = !er.success || er.num_inliers < opt.min_num_inliers;
  const bool e_part = !e_none && er.num_inliers < opt.e_fail_ratio * n;
  if (!opt.estimate_fundamental || n < 7) return false;
  switch (opt.fundamental) {
    case TwoViewOptions::Fundamental::kAlways:
      return true;
    case TwoViewOptions::Fundamental::kWhenEssentialFails:
      return e_none || e_part;
    case TwoViewOptions::Fundamental::kWhenEssentialExplainsPart:
      return e_part;
  }
  return true;
}

bool homographyWaitsForEssential(const TwoViewOptions& opt) {
  return opt.estimate_homography && opt.homography_test_only;
}

RansacOptions homographyOptions(const TwoViewOptions& opt, const TwoViewSetup& s,
                                const RansacResult<Mat3R>& er) {
  RansacOptions h = s.fh;
  if (!opt.homography_test_only || !er.success || er.num_inliers < opt.min_num_inliers ||
      needsFundamental(opt, s.n, er))
    return h;
  // An H with max_h_inlier_ratio * nE inliers is found at `confidence` after this many
  // samples (Hartley and Zisserman, eq. 4.18); a better H stops earlier by itself.
  const double w = opt.max_h_inlier_ratio * er.num_inliers / s.n;
  const int needed =
      ransacIterationsNeeded(w, HomographyEstimator::kSampleSize, h.confidence, h.max_iterations);
  h.max_iterations = std::max(h.min_iterations, std::min(h.max_iterations, needed));
  return h;
}

}  // namespace detail

TwoViewGeometry estimateRelativePose(const Vec2List& pts1, const Vec2List& pts2,
                                     const Pinhole& cam1, const Pinhole& cam2,
                                     const TwoViewOptions& opt, const Mat3* essential_prior) {
  detail::TwoViewSetup s;
  TwoViewGeometry g;
  if (!detail::setupTwoView(pts1, pts2, cam1, cam2, opt, essential_prior != nullptr, &s, &g))
    return g;
  EssentialEstimator eest(s.x1, s.x2);
  RansacResult<Mat3R> er, fr, hr;
  if (essential_prior) {
    const Mat3R prior = *essential_prior;
    er = ransac(eest, s.e, &prior);
  } else {
    er = ransac(eest, s.e);
  }
  if (detail::needsFundamental(opt, s.n, er)) fr = ransac(FundamentalEstimator(pts1, pts2), s.fh);
  if (opt.estimate_homography)
    hr = ransac(HomographyEstimator(pts1, pts2), detail::homographyOptions(opt, s, er));
  return detail::finishTwoView(pts1, pts2, cam1, cam2, opt, s, eest, er, fr, hr);
}

namespace detail {

TwoViewGeometry finishTwoView(const Vec2List& pts1, const Vec2List& pts2, const Pinhole& cam1,
                              const Pinhole& cam2, const TwoViewOptions& opt, const TwoViewSetup& s,
                              const EssentialEstimator& eest, const RansacResult<Mat3R>& er,
                              const RansacResult<Mat3R>& fr, const RansacResult<Mat3R>& hr) {
  TwoViewGeometry g;
  const int n = s.n;
  const Vec2List& x1 = s.x1;
  const Vec2List& x2 = s.x2;
  const double px_to_normalized = s.px_to_normalized;
  g.num_e_inliers = er.success ? er.num_inliers : 0;
  g.num_f_inliers = fr.success ? fr.num_inliers : 0;
  g.num_h_inliers = hr.success ? hr.num_inliers : 0;
  if (er.success) g.E = er.model;
  if (fr.success) g.F = fr.model;
  if (hr.success) g.H = hr.model;

  const int m = opt.min_num_inliers;
  const bool e_ok = g.num_e_inliers >= m, f_ok = g.num_f_inliers >= m, h_ok = g.num_h_inliers >= m;
  bool planar_or_pano = false;
  Mat3 E_use;
  std::vector<char> mask;
  if (e_ok && g.num_e_inliers >= opt.min_e_f_inlier_ratio * g.num_f_inliers) {
    g.config = TwoViewConfig::kCalibrated;
    planar_or_pano = h_ok && g.num_h_inliers > opt.max_h_inlier_ratio * g.num_e_inliers;
    E_use = g.E;
    mask = er.inlier_mask;
    g.num_inliers = g.num_e_inliers;
  } else if (f_ok) {
    g.config = TwoViewConfig::kUncalibrated;
    planar_or_pano = h_ok && g.num_h_inliers > opt.max_h_inlier_ratio * g.num_f_inliers;
    E_use = cam2.K().transpose() * g.F * cam1.K();
    mask = fr.inlier_mask;
    g.num_inliers = g.num_f_inliers;
  } else if (h_ok) {
    planar_or_pano = true;
    E_use = e_ok ? g.E : Mat3::Zero();
    mask = hr.inlier_mask;
    g.num_inliers = g.num_h_inliers;
  } else {
    g.message = "no model with " + std::to_string(m) + " inliers (E " +
                std::to_string(g.num_e_inliers) + ", F " + std::to_string(g.num_f_inliers) +
                ", H " + std::to_string(g.num_h_inliers) + ")";
    return g;
  }
  g.inlier_mask = mask;
  std::vector<int> inl = maskToIndices(mask);

  // The pose from E (or from K2^T F K1), with the cheirality test and LM on the inliers.
  const Vec3List& h1 = eest.rays1();
  const Vec3List& h2 = eest.rays2();
  bool have_pose = false;
  if (E_use.norm() > 0) {
    Pose rel;
    if (poseFromEssential(E_use, h1, h2, inl, &rel) >= 5) {
      LmOptions lm;
      lm.loss_scale = opt.loss_scale_px * px_to_normalized;
      refineRelativePose(h1, h2, inl, &rel, lm);
      g.relative = rel;
      have_pose = true;
      if (g.config == TwoViewConfig::kCalibrated) {
        // The inliers of the refined E.
        g.E = essentialFromPose(rel);
        const Mat3R Er = g.E;
        const double t2 = opt.max_error_px * px_to_normalized * opt.max_error_px * px_to_normalized;
        g.num_inliers = 0;
        for (int i = 0; i < n; ++i) {
          g.inlier_mask[i] = eest.residualSq(Er, i) < t2;
          g.num_inliers += g.inlier_mask[i];
        }
        g.num_e_inliers = g.num_inliers;
        inl = maskToIndices(g.inlier_mask);
      }
    }
  }
  // Triangulate the inliers in camera 1's frame; keep those in front, within the error, and
  // record the median angle (COLMAP's test of enough parallax).
  std::vector<double> angles;
  if (have_pose) {
    const Pose p1, p2 = g.relative;
    const Vec3 c2 = p2.center();
    for (int i : inl) {
      const auto X = triangulateOptimal(p1, p2, x1[i], x2[i]);
      if (!X) continue;
      const Vec3 q2 = p2.apply(*X);
      if (!(X->z() > 0) || !(q2.z() > 0)) continue;
      const double e1 = (cam1.project(X->hnormalized()) - pts1[i]).norm();
      const double e2 = (cam2.project(q2.hnormalized()) - pts2[i]).norm();
      if (e1 > opt.max_error_px || e2 > opt.max_error_px) continue;
      const double ang = triangulationAngle(Vec3::Zero(), c2, *X) * 180.0 / M_PI;
      angles.push_back(ang);
      if (ang < opt.min_triangulation_angle_deg) continue;
      g.point_indices.push_back(i);
      g.points.push_back(*X);
    }
    if (!angles.empty()) {
      std::nth_element(angles.begin(), angles.begin() + angles.size() / 2, angles.end());
      g.median_triangulation_angle_deg = angles[angles.size() / 2];
    }
  }
  if (planar_or_pano) {
    if (have_pose && g.median_triangulation_angle_deg >= opt.min_triangulation_angle_deg) {
      g.config = TwoViewConfig::kPlanar;
    } else {
      // Pure rotation: H in normalized coordinates is a multiple of R.
      g.config = TwoViewConfig::kPanoramic;
      const Mat3 Hn = cam2.K().inverse() * g.H * cam1.K();
      const double det = Hn.determinant();
      if (!(std::abs(det) > 0) || !std::isfinite(det)) {
        g.config = TwoViewConfig::kDegenerate;
        g.message = "the homography of a pure rotation is singular";
        return g;
      }
      g.relative.R = nearestRotation(Hn / std::cbrt(det));
      g.relative.t.setZero();
      g.inlier_mask = hr.inlier_mask;
      g.num_inliers = g.num_h_inliers;
      g.point_indices.clear();
      g.points.clear();
      g.message = "pure rotation: median triangulation angle " +
                  std::to_string(g.median_triangulation_angle_deg) + " deg";
    }
  }
  if (g.config != TwoViewConfig::kPanoramic && !have_pose) {
    g.config = TwoViewConfig::kDegenerate;
    g.message = "no relative pose passes the cheirality test";
  }
  return g;
}

}  // namespace detail

}  // namespace vidmap::geometry
