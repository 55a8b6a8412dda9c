#include "vidmap/geometry/homography_4pt.h"

#include <Eigen/Eigenvalues>

#include "vidmap/geometry/normalize.h"

namespace vidmap::geometry {

bool homographyDlt(const Vec2* p1, const Vec2* p2, int n, Mat3* H) {
  if (n < 4) return false;
  Mat3 T1, T2;
  if (!hartleyTransform(p1, n, &T1) || !hartleyTransform(p2, n, &T2)) return false;
  Eigen::Matrix<double, 9, 9> AtA = Eigen::Matrix<double, 9, 9>::Zero();
  for (int i = 0; i < n; ++i) {
    const Vec3 a = applyTransform(T1, p1[i]).homogeneous();
    const Vec2 b = applyTransform(T2, p2[i]);
    Eigen::Matrix<double, 9, 1> r1 = Eigen::Matrix<double, 9, 1>::Zero(), r2 = r1;
    for (int k = 0; k < 3; ++k) {
      r1(3 + k) = -a(k);
      r1(6 + k) = b.y() * a(k);
      r2(k) = a(k);
      r2(6 + k) = -b.x() * a(k);
    }
    AtA.selfadjointView<Eigen::Lower>().rankUpdate(r1);
    AtA.selfadjointView<Eigen::Lower>().rankUpdate(r2);
  }
  AtA = AtA.selfadjointView<Eigen::Lower>();
  if (!AtA.allFinite()) return false;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>> eig(AtA);
  // A second (near) zero eigenvalue means the points do not fix H (collinear, repeated).
  const double scale = eig.eigenvalues()(8);
  if (!(scale > 0) || eig.eigenvalues()(1) < 1e-12 * scale) return false;
  const Eigen::Matrix<double, 9, 1> h = eig.eigenvectors().col(0);
  Mat3 Hn;
  Hn << h(0), h(1), h(2), h(3), h(4), h(5), h(6), h(7), h(8);
  Mat3 Hk = T2.inverse() * Hn * T1;
  const double norm = Hk.norm();
  if (!(norm > 0) || !Hk.allFinite() || std::abs(Hk.determinant()) < 1e-12 * norm * norm * norm)
    return false;
  *H = Hk / norm;
  return true;
}

}  // namespace vidmap::geometry
