#include "vidmap/geometry/similarity.h"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>

#include "vidmap/core/error.h"

namespace vidmap::geometry {

Sim3 alignUmeyama(const Vec3List& src, const Vec3List& dst, bool withScale) {
  require(src.size() == dst.size(), "alignment needs the same number of points on both sides");
  require(src.size() >= 3, "alignment needs at least 3 points");
  const int n = static_cast<int>(src.size());
  Eigen::Matrix3Xd X(3, n), Y(3, n);
  for (int i = 0; i < n; ++i) {
    X.col(i) = src[i];
    Y.col(i) = dst[i];
  }
  const Vec3 mx = X.rowwise().mean(), my = Y.rowwise().mean();
  const Eigen::Matrix3Xd Xc = X.colwise() - mx, Yc = Y.colwise() - my;
  const double varX = Xc.squaredNorm() / n;
  const Mat3 Sigma = Yc * Xc.transpose() / n;
  Eigen::JacobiSVD<Mat3> svd(Sigma, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Vec3 sv = svd.singularValues();
  // Collinear or coincident points leave the rotation about the line undetermined.
  require(varX > 1e-18 && sv(1) > 1e-9 * std::max(sv(0), 1e-300),
          "alignment is degenerate: the points are collinear or coincident");
  Mat3 S = Mat3::Identity();
  if ((svd.matrixU() * svd.matrixV().transpose()).determinant() < 0) S(2, 2) = -1;
  Sim3 sim;
  sim.R = svd.matrixU() * S * svd.matrixV().transpose();
  sim.s = withScale ? (sv.asDiagonal() * S).trace() / varX : 1.0;
  sim.t = my - sim.s * sim.R * mx;
  return sim;
}

bool fitSimilarity(const Vec3List& src, const Vec3List& dst, const std::vector<int>& idx,
                   Sim3* out) {
  Vec3List a, b;
  a.reserve(idx.size());
  b.reserve(idx.size());
  for (int i : idx) {
    a.push_back(src[i]);
    b.push_back(dst[i]);
  }
  try {
    *out = alignUmeyama(a, b, true);
  } catch (const Error&) {
    return false;
  }
  return std::isfinite(out->s) && out->s > 0 && out->R.allFinite() && out->t.allFinite();
}

SimilarityEstimator::SimilarityEstimator(const Vec3List& src, const Vec3List& dst,
                                         Residual residualSq)
    : src_(src), dst_(dst), residual_(std::move(residualSq)) {
  require(src.size() == dst.size(), "similarity: the two point sets differ in size");
}

void SimilarityEstimator::estimate(const int* sample, std::vector<Sim3>* models) const {
  Sim3 m;
  if (fitSimilarity(src_, dst_, {sample[0], sample[1], sample[2]}, &m)) models->push_back(m);
}

double SimilarityEstimator::residualSq(const Sim3& m, int i) const {
  if (residual_) return residual_(i, m);
  return (dst_[i] - m.apply(src_[i])).squaredNorm();
}

void SimilarityEstimator::refine(const std::vector<int>& inliers, Sim3* m) const {
  Sim3 r;
  if (fitSimilarity(src_, dst_, inliers, &r)) *m = r;  // degenerate inliers: keep the sample's
}

RansacResult<Sim3> estimateSimilarity(const Vec3List& src, const Vec3List& dst,
                                      const RansacOptions& options,
                                      SimilarityEstimator::Residual residualSq) {
  const SimilarityEstimator est(src, dst, std::move(residualSq));
  return ransac(est, options);
}

Pose transformPose(const Pose& pose, const Sim3& sim) {
  // x_cam = R_c X + t_c with X = R^T (X' - t) / s; scaling camera coordinates by s keeps the
  // projection: R' = R_c R^T, t' = s t_c - R' t (centre c' = s R c + t).
  Pose out;
  out.R = pose.R * sim.R.transpose();
  out.t = sim.s * pose.t - out.R * sim.t;
  return out;
}

Pose rotationAboutCentre(const Vec3List& X, const Vec2List& x, const Vec3& centre,
                         const std::vector<char>& mask) {
  require(X.size() == x.size() && (mask.empty() || mask.size() == X.size()),
          "rotation about a centre: points, image points and mask differ in number");
  Mat3 H = Mat3::Zero();
  for (size_t i = 0; i < X.size(); ++i)
    if (mask.empty() || mask[i])
      H += (X[i] - centre).normalized() * Vec3(x[i].x(), x[i].y(), 1).normalized().transpose();
  Eigen::JacobiSVD<Mat3> svd(H, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Mat3 D = Mat3::Identity();
  D(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1 : 1;
  Pose rot;
  rot.R = svd.matrixV() * D * svd.matrixU().transpose();
  rot.t = -rot.R * centre;
  return rot;
}

}  // namespace vidmap::geometry
