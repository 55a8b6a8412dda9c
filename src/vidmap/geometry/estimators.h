// The estimators ransac() drives (ransac.h): a minimal solver, the shared residual of score.h,
// and a refinement for local optimisation. Correspondences are packed once as the batch layout
// of score.h, so the CPU loop, the batched CPU scorer and the CUDA scorer read the same arrays.
#pragma once

#include <vector>

#include "vidmap/geometry/score.h"
#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

using Mat3R = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;
using Mat34R = Eigen::Matrix<double, 3, 4, Eigen::RowMajor>;

// Packs correspondences as (x1, y1, x2, y2) rows.
std::vector<double> packPairs(const Vec2List& a, const Vec2List& b);

// Appends a model's row-major entries to a batch (the model layouts of score.h).
inline void appendModel(const Mat3R& M, std::vector<double>* flat) {
  flat->insert(flat->end(), M.data(), M.data() + 9);
}

// Essential matrix by the five-point solver; points normalized, residual the Sampson distance
// in normalized units; refinement: pose by cheirality, then LM on (R, t).
class EssentialEstimator {
 public:
  using Model = Mat3R;
  static constexpr int kSampleSize = 5;
  EssentialEstimator(const Vec2List& x1, const Vec2List& x2);
  int numData() const { return n_; }
  void estimate(const int* sample, std::vector<Model>* models) const;
  double residualSq(const Model& E, int i) const {
    const double* p = &data_[4 * i];
    return sampsonSq(E.data(), p[0], p[1], p[2], p[3]);
  }
  void refine(const std::vector<int>& inliers, Model* E) const;
  const Vec3List& rays1() const { return h1_; }
  const Vec3List& rays2() const { return h2_; }
  const std::vector<double>& packed() const { return data_; }

 private:
  int n_;
  Vec3List h1_, h2_;
  std::vector<double> data_;
};

// Fundamental matrix by the seven-point solver in pixels; refinement: the normalised eight-point
// fit on the inliers, then LM on the Sampson error over the rank-2 manifold.
class FundamentalEstimator {
 public:
  using Model = Mat3R;
  static constexpr int kSampleSize = 7;
  FundamentalEstimator(const Vec2List& p1, const Vec2List& p2);
  int numData() const { return n_; }
  void estimate(const int* sample, std::vector<Model>* models) const;
  double residualSq(const Model& F, int i) const {
    const double* p = &data_[4 * i];
    return sampsonSq(F.data(), p[0], p[1], p[2], p[3]);
  }
  void refine(const std::vector<int>& inliers, Model* F) const;
  const std::vector<double>& packed() const { return data_; }

 private:
  int n_;
  const Vec2List& p1_;
  const Vec2List& p2_;
  std::vector<double> data_;
};

// Homography by the normalised DLT in pixels (four-point samples, all inliers to refine);
// residual the transfer error in image 2.
class HomographyEstimator {
 public:
  using Model = Mat3R;
  static constexpr int kSampleSize = 4;
  HomographyEstimator(const Vec2List& p1, const Vec2List& p2);
  int numData() const { return n_; }
  void estimate(const int* sample, std::vector<Model>* models) const;
  double residualSq(const Model& H, int i) const {
    const double* p = &data_[4 * i];
    return homographySq(H.data(), p[0], p[1], p[2], p[3]);
  }
  void refine(const std::vector<int>& inliers, Model* H) const;
  const std::vector<double>& packed() const { return data_; }

 private:
  int n_;
  const Vec2List& p1_;
  const Vec2List& p2_;
  std::vector<double> data_;
};

// Absolute pose by P3P (Lambda Twist); points normalized, residual the reprojection error in
// normalized units; refinement: LM on the reprojection error.
struct AbsolutePoseModel {
  Pose pose;
  Mat34R P;  // [R | t], row-major for score.h
  static AbsolutePoseModel from(const Pose& p) {
    AbsolutePoseModel m{p, Mat34R()};
    m.P << p.R, p.t;
    return m;
  }
};

inline void appendModel(const AbsolutePoseModel& m, std::vector<double>* flat) {
  flat->insert(flat->end(), m.P.data(), m.P.data() + 12);
}

class AbsolutePoseEstimator {
 public:
  using Model = AbsolutePoseModel;
  static constexpr int kSampleSize = 3;
  AbsolutePoseEstimator(const Vec2List& xn, const Vec3List& X);
  int numData() const { return n_; }
  void estimate(const int* sample, std::vector<Model>* models) const;
  double residualSq(const Model& m, int i) const {
    const double* p = &data_[5 * i];
    return reprojectionSq(m.P.data(), p[0], p[1], p[2], p[3], p[4]);
  }
  void refine(const std::vector<int>& inliers, Model* m) const;
  const std::vector<double>& packed() const { return data_; }

 private:
  int n_;
  const Vec2List& xn_;
  const Vec3List& X_;
  std::vector<double> data_;
};

}  // namespace vidmap::geometry
