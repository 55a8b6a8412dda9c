#include "vidmap/geometry/triangulation.h"

#include <Eigen/Eigenvalues>

#include "vidmap/core/check.h"
#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/triangulation_batch.h"
#include "vidmap/geometry/triangulation_kernels.h"

namespace vidmap::geometry {

void TriangulationOptions::check() const {
  checkRange("triangulation.max_error_px", max_error_px, 0.0, 1e6);
  checkRange("triangulation.min_angle_deg", min_angle_deg, 0.0, 90.0);
}

const char* toString(TriangulationStatus s) {
  switch (s) {
    case TriangulationStatus::kOk:
      return "ok";
    case TriangulationStatus::kTooFewViews:
      return "fewer than two views";
    case TriangulationStatus::kDegenerate:
      return "degenerate rays";
    case TriangulationStatus::kBehindCamera:
      return "behind a camera";
    case TriangulationStatus::kLargeError:
      return "reprojection error too large";
    case TriangulationStatus::kSmallAngle:
      return "triangulation angle too small";
  }
  return "?";
}

std::optional<Vec3> triangulateMidpoint(const Pose& p1, const Pose& p2, const Vec2& x1,
                                        const Vec2& x2) {
  const Vec3 c1 = p1.center(), c2 = p2.center();
  const Vec3 r1 = p1.R.transpose() * x1.homogeneous(), r2 = p2.R.transpose() * x2.homogeneous();
  // c1 + s r1 ~ c2 + u r2 in least squares.
  const double a = r1.dot(r1), b = r1.dot(r2), c = r2.dot(r2);
  const Vec3 w = c1 - c2;
  const double d = r1.dot(w), e = r2.dot(w);
  const double den = a * c - b * b;
  if (!(den > 1e-14 * a * c)) return std::nullopt;
  const double s = (b * e - c * d) / den, u = (a * e - b * d) / den;
  const Vec3 X = 0.5 * ((c1 + s * r1) + (c2 + u * r2));
  if (!X.allFinite()) return std::nullopt;
  return X;
}

void correctToEpipolar(const Mat3& E, const Vec2& x1, const Vec2& x2, Vec2* x1c, Vec2* x2c) {
  // f(x1, x2) = x2^T E x1; n1, n2 its gradients in x1 and x2; Et the 2x2 block, so that
  // f(x1 - d1, x2 - d2) = f - n1.d1 - n2.d2 + d2^T Et d1.
  const Vec3 h1 = x1.homogeneous(), h2 = x2.homogeneous();
  const Eigen::Matrix2d Et = E.topLeftCorner<2, 2>();
  Vec2 n1 = (E.transpose() * h2).head<2>();
  Vec2 n2 = (E * h1).head<2>();
  const double c = h2.dot(E * h1);
  const double a = n2.dot(Et * n1);
  const double b = 0.5 * (n1.squaredNorm() + n2.squaredNorm());
  const double d = std::sqrt(std::max(0.0, b * b - a * c));
  double lambda = c / (b + d);
  if (!std::isfinite(lambda)) lambda = 0;
  Vec2 d1 = lambda * n1, d2 = lambda * n2;
  n1 -= Et.transpose() * d2;
  n2 -= Et * d1;
  const double nn = n1.squaredNorm() + n2.squaredNorm();
  if (nn > 0) lambda *= 2 * d / nn;
  d1 = lambda * n1;
  d2 = lambda * n2;
  *x1c = x1 - d1;
  *x2c = x2 - d2;
}

std::optional<Vec3> triangulateOptimal(const Pose& p1, const Pose& p2, const Vec2& x1,
                                       const Vec2& x2) {
  // The relative pose camera 1 -> camera 2 and its E.
  const Pose rel{p2.R * p1.R.transpose(), p2.t - p2.R * p1.R.transpose() * p1.t};
  Vec2 y1, y2;
  correctToEpipolar(essentialFromPose(rel), x1, x2, &y1, &y2);
  if (!y1.allFinite() || !y2.allFinite()) return triangulateMidpoint(p1, p2, x1, x2);
  return triangulateMidpoint(p1, p2, y1, y2);
}

std::optional<Vec3> triangulateDlt(const std::vector<Pose>& poses, const Vec2List& xn) {
  if (poses.size() < 2 || poses.size() != xn.size()) return std::nullopt;
  // Sum of A_i^T A_i over the views; rows x P3 - P1 and y P3 - P2, each normalised.
  Eigen::Matrix4d AtA = Eigen::Matrix4d::Zero();
  for (size_t i = 0; i < poses.size(); ++i) {
    const Mat34 P = poses[i].matrix();
    Eigen::RowVector4d r1 = xn[i].x() * P.row(2) - P.row(0);
    Eigen::RowVector4d r2 = xn[i].y() * P.row(2) - P.row(1);
    AtA += r1.transpose() * r1 / r1.squaredNorm() + r2.transpose() * r2 / r2.squaredNorm();
  }
  if (!AtA.allFinite()) return std::nullopt;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> eig(AtA);
  const Vec4 h = eig.eigenvectors().col(0);
  if (std::abs(h(3)) < 1e-12 * h.head<3>().norm() || h(3) == 0) return std::nullopt;
  const Vec3 X = h.head<3>() / h(3);
  if (!X.allFinite()) return std::nullopt;
  return X;
}

double triangulationAngle(const Vec3& c1, const Vec3& c2, const Vec3& X) {
  return angleBetween(X - c1, X - c2);
}

namespace tri {

void smallestEigenvectorHost(const double A[4][4], double* h) {
  Eigen::Matrix4d M;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) M(i, j) = A[i][j];
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix4d> eig(M);
  const Vec4 v = eig.eigenvectors().col(0);
  for (int k = 0; k < 4; ++k) h[k] = v(k);
}

}  // namespace tri

TrackTriangulation triangulateTrack(const std::vector<TrackObservation>& obs,
                                    const TriangulationOptions& options) {
  options.check();
  // The per-track arithmetic is triangulation_kernels.h's, which the batched forms share.
  const int n = static_cast<int>(obs.size());
  std::vector<double> views(static_cast<size_t>(n) * tri::kViewStride), px(2 * obs.size()),
      xn(2 * obs.size());
  std::vector<int> view_of(obs.size());
  for (int i = 0; i < n; ++i) {
    double* v = &views[static_cast<size_t>(i) * tri::kViewStride];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) v[3 * r + c] = obs[i].pose.R(r, c);
    for (int r = 0; r < 3; ++r) v[9 + r] = obs[i].pose.t(r);
    v[12] = obs[i].camera.fx;
    v[13] = obs[i].camera.fy;
    v[14] = obs[i].camera.cx;
    v[15] = obs[i].camera.cy;
    px[2 * i] = obs[i].pixel.x();
    px[2 * i + 1] = obs[i].pixel.y();
    view_of[i] = i;
  }
  tri::TrackResult r;
  tri::triangulateTrack(views.data(), view_of.data(), px.data(), n, options.max_error_px,
                        options.min_angle_deg, xn.data(), &r);
  return toTrackTriangulation(r);
}

}  // namespace vidmap::geometry
