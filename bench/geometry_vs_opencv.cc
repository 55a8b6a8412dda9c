// Relative pose and PnP, vidmap against OpenCV on the same correspondences: accuracy against the
// ground truth and time: the median over repeats of the calling thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID; one thread each, cv::setNumThreads(1)), so that other processes on a
// shared machine do not distort the ratio.
// Usage: geometry_vs_opencv [repeats]; prints JSON. Real pairs are skipped when the data are
// absent.
#include <Eigen/Core>
#include <cstdio>
#include <ctime>
#include <opencv2/calib3d.hpp>
#include <opencv2/core.hpp>
#include <opencv2/core/eigen.hpp>
#include <string>
#include <vector>

#include "vidmap/geometry/opencv_pairs.h"
#include "vidmap/geometry/pnp.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/geometry/triangulation.h"
#include "vidmap/geometry/two_view.h"

using namespace vidmap::geometry;
namespace t = vidmap::geometry::testing;

namespace {

double threadMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

template <class F>
double medianMs(int repeats, F&& f) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const double a = threadMs();
    f();
    ms.push_back(threadMs() - a);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

cv::Mat toCv(const Mat3& m) {
  cv::Mat c;
  cv::eigen2cv(m, c);
  return c;
}

std::vector<cv::Point2d> toCv(const Vec2List& v) {
  std::vector<cv::Point2d> o;
  for (const auto& p : v) o.emplace_back(p.x(), p.y());
  return o;
}

struct Row {
  std::string name;
  int n = 0;
  double ours_rot = 0, ours_dir = 0, ours_ms = 0, cv_rot = 0, cv_dir = 0, cv_ms = 0;
  int ours_inl = 0, cv_inl = 0;
};

std::string json(const Row& r, const char* dir_key) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "{\"case\": \"%s\", \"n\": %d, \"vidmap\": {\"rot_err_deg\": %.4f, \"%s\": %.4f, "
                "\"inliers\": %d, \"ms\": %.3f}, \"opencv\": {\"rot_err_deg\": %.4f, \"%s\": %.4f, "
                "\"inliers\": %d, \"ms\": %.3f}, \"speedup\": %.2f}",
                r.name.c_str(), r.n, r.ours_rot, dir_key, r.ours_dir, r.ours_inl, r.ours_ms,
                r.cv_rot, dir_key, r.cv_dir, r.cv_inl, r.cv_ms, r.cv_ms / r.ours_ms);
  return buf;
}

// E + pose: vidmap's E-only verification against findEssentialMat + recoverPose.
Row relativePose(const std::string& name, const Vec2List& p1, const Vec2List& p2,
                 const Pinhole& cam, const Pose& truth, int repeats, double thr_px) {
  Row r;
  r.name = name;
  r.n = static_cast<int>(p1.size());
  TwoViewOptions o;
  o.max_error_px = thr_px;
  o.estimate_fundamental = false;
  o.estimate_homography = false;
  TwoViewGeometry g;
  r.ours_ms = medianMs(repeats, [&] { g = estimateRelativePose(p1, p2, cam, cam, o); });
  r.ours_rot = t::rotationErrorDeg(g.relative.R, truth.R);
  r.ours_dir = t::directionErrorDeg(g.relative.t, truth.t);
  r.ours_inl = g.num_inliers;
  const auto c1 = toCv(p1), c2 = toCv(p2);
  const cv::Mat K = toCv(cam.K());
  cv::Mat E, R, tv, mask;
  r.cv_ms = medianMs(repeats, [&] {
    E = cv::findEssentialMat(c1, c2, K, cv::RANSAC, 0.999, thr_px, mask);
    if (E.rows == 3) cv::recoverPose(E, c1, c2, K, R, tv, mask);
  });
  if (E.rows == 3 && !R.empty()) {
    Mat3 Re;
    Vec3 te;
    cv::cv2eigen(R, Re);
    cv::cv2eigen(tv, te);
    r.cv_rot = t::rotationErrorDeg(Re, truth.R);
    r.cv_dir = t::directionErrorDeg(te, truth.t);
    r.cv_inl = cv::countNonZero(mask);
  } else {
    r.cv_rot = r.cv_dir = 180;
  }
  return r;
}

Row pnp(const std::string& name, const Vec2List& px, const Vec3List& X, const Pinhole& cam,
        const Pose& truth, int repeats, double thr_px) {
  Row r;
  r.name = name;
  r.n = static_cast<int>(px.size());
  PnPOptions o;
  o.max_error_px = thr_px;
  PnPResult res;
  r.ours_ms = medianMs(repeats, [&] { res = estimatePnP(px, X, cam, o); });
  r.ours_rot = t::rotationErrorDeg(res.pose.R, truth.R);
  r.ours_dir = (res.pose.center() - truth.center()).norm();
  r.ours_inl = res.num_inliers;
  std::vector<cv::Point3d> obj;
  for (const auto& p : X) obj.emplace_back(p.x(), p.y(), p.z());
  const auto img = toCv(px);
  const cv::Mat K = toCv(cam.K());
  cv::Mat rvec, tvec;
  std::vector<int> inl;
  bool ok = false;
  r.cv_ms = medianMs(repeats, [&] {
    ok = cv::solvePnPRansac(obj, img, K, cv::noArray(), rvec, tvec, false, 10000, thr_px, 0.999,
                            inl);
  });
  if (ok) {
    cv::Mat Rm;
    cv::Rodrigues(rvec, Rm);
    Pose p;
    cv::cv2eigen(Rm, p.R);
    cv::cv2eigen(tvec, p.t);
    r.cv_rot = t::rotationErrorDeg(p.R, truth.R);
    r.cv_dir = (p.center() - truth.center()).norm();
    r.cv_inl = static_cast<int>(inl.size());
  } else {
    r.cv_rot = r.cv_dir = 1e9;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  cv::setNumThreads(1);
  std::vector<std::string> rel_rows, pnp_rows;
  // Real pairs (the data are read in place; skipped when absent).
  struct P {
    const char* set;
    int i, j;
  };
  for (const P& c : {P{"fountain", 3, 4}, P{"fountain", 5, 6}, P{"fountain", 2, 4},
                     P{"temple", 1, 2}, P{"temple", 7, 8}, P{"temple", 12, 13}, P{"dino", 9, 10}}) {
    const auto p = t::loadPair(c.set, c.i, c.j);
    if (!p || p->pts1.size() < 30) continue;
    rel_rows.push_back(
        json(relativePose(p->name, p->pts1, p->pts2, p->a.cam, p->relative(), repeats, 1.0),
             "t_dir_err_deg"));
    // PnP of view b from points triangulated with the ground-truth cameras.
    Vec2List px;
    Vec3List X;
    for (size_t k = 0; k < p->pts1.size(); ++k) {
      const auto tr = triangulateTrack(
          {{p->a.pose, p->a.cam, p->pts1[k]}, {p->b.pose, p->b.cam, p->pts2[k]}}, {4.0, 1.0});
      if (!tr.ok()) continue;
      X.push_back(tr.X);
      px.push_back(p->pts2[k]);
    }
    if (X.size() >= 20)
      pnp_rows.push_back(
          json(pnp(p->name, px, X, p->b.cam, p->b.pose, repeats, 4.0), "centre_err"));
  }
  // Synthetic scenes: 1 px noise, 0-70% outliers.
  for (double out : {0.0, 0.3, 0.5, 0.7}) {
    t::SceneOptions o;
    o.num_points = 500;
    o.noise_px = 1.0;
    o.outlier_ratio = out;
    const auto s = t::makeTwoViewScene(o, 7);
    const Pose truth{s.rel.R, s.rel.t.normalized()};
    char name[64];
    std::snprintf(name, sizeof(name), "synthetic 500 pts, 1 px, %d%% outliers", int(out * 100));
    rel_rows.push_back(
        json(relativePose(name, s.px1, s.px2, s.cam, truth, repeats, 3.0), "t_dir_err_deg"));
    const auto q = t::makePnPScene(o, 8);
    pnp_rows.push_back(json(pnp(name, q.px, q.X, q.cam, q.pose, repeats, 3.0), "centre_err"));
  }
  std::printf(
      "{\n  \"benchmark\": \"geometry_vs_opencv\",\n  \"repeats\": %d,\n  \"opencv\": \"%s\",\n",
      repeats, CV_VERSION);
  std::printf("  \"relative_pose\": [\n");
  for (size_t i = 0; i < rel_rows.size(); ++i)
    std::printf("    %s%s\n", rel_rows[i].c_str(), i + 1 < rel_rows.size() ? "," : "");
  std::printf("  ],\n  \"pnp\": [\n");
  for (size_t i = 0; i < pnp_rows.size(); ++i)
    std::printf("    %s%s\n", pnp_rows[i].c_str(), i + 1 < pnp_rows.size() ? "," : "");
  std::printf("  ]\n}\n");
  return 0;
}
