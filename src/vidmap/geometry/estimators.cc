#include "vidmap/geometry/estimators.h"

#include "vidmap/geometry/essential_5pt.h"
#include "vidmap/geometry/essential_pose.h"
#include "vidmap/geometry/fundamental_7pt.h"
#include "vidmap/geometry/fundamental_8pt.h"
#include "vidmap/geometry/homography_4pt.h"
#include "vidmap/geometry/p3p.h"
#include "vidmap/geometry/refine.h"

namespace vidmap::geometry {

std::vector<double> packPairs(const Vec2List& a, const Vec2List& b) {
  std::vector<double> d(4 * a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    d[4 * i + 0] = a[i].x();
    d[4 * i + 1] = a[i].y();
    d[4 * i + 2] = b[i].x();
    d[4 * i + 3] = b[i].y();
  }
  return d;
}

EssentialEstimator::EssentialEstimator(const Vec2List& x1, const Vec2List& x2)
    : n_(static_cast<int>(x1.size())), h1_(x1.size()), h2_(x2.size()), data_(packPairs(x1, x2)) {
  for (size_t i = 0; i < x1.size(); ++i) {
    h1_[i] = x1[i].homogeneous();
    h2_[i] = x2[i].homogeneous();
  }
}

void EssentialEstimator::estimate(const int* sample, std::vector<Model>* models) const {
  Vec3 a[5], b[5];
  for (int k = 0; k < 5; ++k) {
    a[k] = h1_[sample[k]];
    b[k] = h2_[sample[k]];
  }
  std::vector<Mat3> Es;
  essential5pt(a, b, &Es);
  for (const Mat3& E : Es) models->push_back(E);
}

void EssentialEstimator::refine(const std::vector<int>& inliers, Model* E) const {
  Pose rel;
  if (poseFromEssential(*E, h1_, h2_, inliers, &rel) < 5) return;
  LmOptions o;
  o.max_iterations = 5;  // local optimisation needs an improvement, not convergence
  refineRelativePose(h1_, h2_, inliers, &rel, o);
  *E = essentialFromPose(rel);
}

FundamentalEstimator::FundamentalEstimator(const Vec2List& p1, const Vec2List& p2)
    : n_(static_cast<int>(p1.size())), p1_(p1), p2_(p2), data_(packPairs(p1, p2)) {}

void FundamentalEstimator::estimate(const int* sample, std::vector<Model>* models) const {
  Vec2 a[7], b[7];
  for (int k = 0; k < 7; ++k) {
    a[k] = p1_[sample[k]];
    b[k] = p2_[sample[k]];
  }
  std::vector<Mat3> Fs;
  fundamental7pt(a, b, &Fs);
  for (const Mat3& F : Fs) models->push_back(F);
}

void FundamentalEstimator::refine(const std::vector<int>& inliers, Model* F) const {
  if (inliers.size() < 8) return;
  Vec2List a, b;
  for (int i : inliers) {
    a.push_back(p1_[i]);
    b.push_back(p2_[i]);
  }
  Mat3 Fl;
  if (!fundamental8pt(a.data(), b.data(), static_cast<int>(a.size()), &Fl)) return;
  // Start LM from the better of the current model and the linear fit.
  auto cost = [&](const Mat3R& M) {
    double c = 0;
    for (int i : inliers) c += residualSq(M, i);
    return c;
  };
  Mat3 start = cost(Mat3R(Fl)) < cost(*F) ? Fl : Mat3(*F);
  LmOptions o;
  o.max_iterations = 5;  // local optimisation needs an improvement, not convergence
  refineFundamental(p1_, p2_, inliers, &start, o);
  *F = start;
}

HomographyEstimator::HomographyEstimator(const Vec2List& p1, const Vec2List& p2)
    : n_(static_cast<int>(p1.size())), p1_(p1), p2_(p2), data_(packPairs(p1, p2)) {}

void HomographyEstimator::estimate(const int* sample, std::vector<Model>* models) const {
  Vec2 a[4], b[4];
  for (int k = 0; k < 4; ++k) {
    a[k] = p1_[sample[k]];
    b[k] = p2_[sample[k]];
  }
  Mat3 H;
  if (homography4pt(a, b, &H)) models->push_back(H);
}

void HomographyEstimator::refine(const std::vector<int>& inliers, Model* H) const {
  Vec2List a, b;
  for (int i : inliers) {
    a.push_back(p1_[i]);
    b.push_back(p2_[i]);
  }
  Mat3 Hn;
  if (homographyDlt(a.data(), b.data(), static_cast<int>(a.size()), &Hn)) *H = Hn;
}

AbsolutePoseEstimator::AbsolutePoseEstimator(const Vec2List& xn, const Vec3List& X)
    : n_(static_cast<int>(xn.size())), xn_(xn), X_(X), data_(5 * xn.size()) {
  for (size_t i = 0; i < xn.size(); ++i) {
    data_[5 * i + 0] = X[i].x();
    data_[5 * i + 1] = X[i].y();
    data_[5 * i + 2] = X[i].z();
    data_[5 * i + 3] = xn[i].x();
    data_[5 * i + 4] = xn[i].y();
  }
}

void AbsolutePoseEstimator::estimate(const int* sample, std::vector<Model>* models) const {
  Vec3 y[3], X[3];
  for (int k = 0; k < 3; ++k) {
    y[k] = xn_[sample[k]].homogeneous();
    X[k] = X_[sample[k]];
  }
  std::vector<Pose> poses;
  p3pLambdaTwist(y, X, &poses);
  for (const Pose& p : poses) models->push_back(AbsolutePoseModel::from(p));
}

void AbsolutePoseEstimator::refine(const std::vector<int>& inliers, Model* m) const {
  if (inliers.size() < 3) return;
  Pose p = m->pose;
  LmOptions o;
  o.max_iterations = 5;  // local optimisation needs an improvement, not convergence
  refineAbsolutePose(xn_, X_, inliers, &p, o);
  *m = AbsolutePoseModel::from(p);
}

}  // namespace vidmap::geometry
