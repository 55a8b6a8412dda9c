#include "vidmap/geometry/pnp.h"

#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/ransac.h"
#include "vidmap/geometry/ransac_lockstep.h"
#include "vidmap/geometry/refine.h"

namespace vidmap::geometry {

void PnPOptions::check() const {
  checkRange("pnp.max_error_px", max_error_px, 1e-6, 1e4);
  checkRange("pnp.confidence", confidence, 0.0, 1.0 - 1e-12);
  checkRange("pnp.min_iterations", min_iterations, 1, 10000000);
  checkRange("pnp.max_iterations", max_iterations, min_iterations, 10000000);
  checkRange("pnp.min_num_inliers", min_num_inliers, 3, 100000000);
  checkRange("pnp.loss_scale_px", loss_scale_px, 0.0, 1e4);
}

namespace {

PnPResult estimatePnPWith(const Vec2List& pixels, const Vec3List& world, const Pinhole& camera,
                          const PnPOptions& opt, BatchScorer* scorer) {
  opt.check();
  require(pixels.size() == world.size(), "estimatePnP: " + std::to_string(pixels.size()) +
                                             " image points but " + std::to_string(world.size()) +
                                             " world points");
  requireFinite(pixels, "estimatePnP: pixels");
  requireFinite(world, "estimatePnP: world");
  camera.check("estimatePnP: camera");
  PnPResult out;
  const int n = static_cast<int>(pixels.size());
  if (n < std::max(4, opt.min_num_inliers)) {
    out.message = std::to_string(n) + " correspondences, at least " +
                  std::to_string(std::max(4, opt.min_num_inliers)) + " needed";
    return out;
  }
  Vec2List xn(n);
  for (int i = 0; i < n; ++i) xn[i] = camera.normalize(pixels[i]);
  AbsolutePoseEstimator est(xn, world);
  RansacOptions ro;
  ro.max_error = opt.max_error_px / camera.meanFocal();
  ro.confidence = opt.confidence;
  ro.min_iterations = opt.min_iterations;
  ro.max_iterations = opt.max_iterations;
  ro.seed = opt.seed;
  ro.final_refinements = 1;  // the robust refinement below finishes the job
  RansacResult<AbsolutePoseModel> r;
  if (scorer) {
    ScoreBatch problems;
    problems.add(ModelKind::kProjection, est.packed(), ro.max_error * ro.max_error);
    scorer->setProblems(problems);
    RansacTask<AbsolutePoseEstimator> task(est, ro, 0);
    runLockstep({&task}, *scorer);
    r = task.result();
  } else {
    r = ransac(est, ro);
  }
  out.iterations = r.iterations;
  if (!r.success || r.num_inliers < opt.min_num_inliers) {
    out.message = "no pose with " + std::to_string(opt.min_num_inliers) + " inliers (best " +
                  std::to_string(r.success ? r.num_inliers : 0) + ")";
    return out;
  }
  // Final refinement on the inliers with a robust loss, then the inliers of the refined pose.
  std::vector<int> inl;
  for (int i = 0; i < n; ++i)
    if (r.inlier_mask[i]) inl.push_back(i);
  Pose pose = r.model.pose;
  LmOptions lm;
  lm.max_iterations = 10;
  lm.loss_scale = opt.loss_scale_px / camera.meanFocal();
  refineAbsolutePose(xn, world, inl, &pose, lm);
  const AbsolutePoseModel model = AbsolutePoseModel::from(pose);
  const double t2 = ro.max_error * ro.max_error;
  out.pose = pose;
  out.inlier_mask.assign(n, 0);
  out.num_inliers = 0;
  for (int i = 0; i < n; ++i) {
    out.inlier_mask[i] = est.residualSq(model, i) < t2;
    out.num_inliers += out.inlier_mask[i];
  }
  if (out.num_inliers < opt.min_num_inliers) {
    out.message = "the refined pose keeps " + std::to_string(out.num_inliers) + " inliers";
    return out;
  }
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    if (!out.inlier_mask[i]) continue;
    const Vec3 p = out.pose.apply(world[i]);
    sum += (camera.project(p.hnormalized()) - pixels[i]).squaredNorm();
  }
  out.rms_error_px = std::sqrt(sum / out.num_inliers);
  out.success = true;
  return out;
}

}  // namespace

PnPResult estimatePnP(const Vec2List& pixels, const Vec3List& world, const Pinhole& camera,
                      const PnPOptions& options) {
  return estimatePnPWith(pixels, world, camera, options, nullptr);
}

PnPResult estimatePnP(const Vec2List& pixels, const Vec3List& world, const Pinhole& camera,
                      const PnPOptions& options, BatchScorer& scorer) {
  return estimatePnPWith(pixels, world, camera, options, &scorer);
}

}  // namespace vidmap::geometry
