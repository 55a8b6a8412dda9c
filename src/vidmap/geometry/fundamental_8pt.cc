#include "vidmap/geometry/fundamental_8pt.h"

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

#include "vidmap/geometry/normalize.h"

namespace vidmap::geometry {

bool fundamental8pt(const Vec2* p1, const Vec2* p2, int n, Mat3* F) {
  if (n < 8) return false;
  Mat3 T1, T2;
  if (!hartleyTransform(p1, n, &T1) || !hartleyTransform(p2, n, &T2)) return false;
  // Normal equations A^T A of the n x 9 system (well conditioned after normalisation).
  Eigen::Matrix<double, 9, 9> AtA = Eigen::Matrix<double, 9, 9>::Zero();
  for (int i = 0; i < n; ++i) {
    const Vec3 a = applyTransform(T1, p1[i]).homogeneous();
    const Vec3 b = applyTransform(T2, p2[i]).homogeneous();
    Eigen::Matrix<double, 9, 1> row;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) row(3 * r + c) = b[r] * a[c];
    AtA.selfadjointView<Eigen::Lower>().rankUpdate(row);
  }
  AtA = AtA.selfadjointView<Eigen::Lower>();
  if (!AtA.allFinite()) return false;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>> eig(AtA);
  const Eigen::Matrix<double, 9, 1> f = eig.eigenvectors().col(0);
  Mat3 Fn;
  Fn << f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8);
  Eigen::JacobiSVD<Mat3> svd(Fn, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Vec3 s = svd.singularValues();
  s(2) = 0;
  Fn = svd.matrixU() * s.asDiagonal() * svd.matrixV().transpose();
  Mat3 Fk = T2.transpose() * Fn * T1;
  const double norm = Fk.norm();
  if (!(norm > 0) || !Fk.allFinite()) return false;
  *F = Fk / norm;
  return true;
}

}  // namespace vidmap::geometry
