#include "vidmap/geometry/fundamental_7pt.h"

#include <Eigen/LU>
#include <Eigen/QR>

#include "vidmap/geometry/normalize.h"
#include "vidmap/geometry/poly.h"

namespace vidmap::geometry {

int fundamental7pt(const Vec2 p1[7], const Vec2 p2[7], std::vector<Mat3>* F) {
  Mat3 T1, T2;
  if (!hartleyTransform(p1, 7, &T1) || !hartleyTransform(p2, 7, &T2)) return 0;
  Eigen::Matrix<double, 9, 7> At;
  for (int i = 0; i < 7; ++i) {
    const Vec2 a = applyTransform(T1, p1[i]), b = applyTransform(T2, p2[i]);
    const Vec3 ah = a.homogeneous(), bh = b.homogeneous();
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) At(3 * r + c, i) = bh[r] * ah[c];
  }
  if (!At.allFinite()) return 0;
  Eigen::HouseholderQR<Eigen::Matrix<double, 9, 7>> qr(At);
  const auto Rd = qr.matrixQR().diagonal().cwiseAbs();
  if (!(Rd.minCoeff() > 1e-9 * Rd.maxCoeff())) return 0;  // dependent constraints
  const Eigen::Matrix<double, 9, 9> Q = qr.householderQ();
  Mat3 F1, F2;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      F1(r, c) = Q(3 * r + c, 7);
      F2(r, c) = Q(3 * r + c, 8);
    }
  // det(F2 + a (F1 - F2)) = det(A + a B) = det A + a tr(adj(A) B) + a^2 tr(adj(B) A) + a^3 det B
  const Mat3 A = F2, B = F1 - F2;
  auto adj = [](const Mat3& m) {
    Mat3 r;
    r << m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1), m(0, 2) * m(2, 1) - m(0, 1) * m(2, 2),
        m(0, 1) * m(1, 2) - m(0, 2) * m(1, 1), m(1, 2) * m(2, 0) - m(1, 0) * m(2, 2),
        m(0, 0) * m(2, 2) - m(0, 2) * m(2, 0), m(0, 2) * m(1, 0) - m(0, 0) * m(1, 2),
        m(1, 0) * m(2, 1) - m(1, 1) * m(2, 0), m(0, 1) * m(2, 0) - m(0, 0) * m(2, 1),
        m(0, 0) * m(1, 1) - m(0, 1) * m(1, 0);
    return r;
  };
  const double c0 = A.determinant(), c1 = (adj(A) * B).trace(), c2 = (adj(B) * A).trace(),
               c3 = B.determinant();
  double roots[3];
  const int nr = solveCubic(c3, c2, c1, c0, roots);
  int n = 0;
  for (int k = 0; k < nr; ++k) {
    Mat3 Fn = A + roots[k] * B;
    Mat3 Fk = T2.transpose() * Fn * T1;
    const double norm = Fk.norm();
    if (!(norm > 0) || !Fk.allFinite()) continue;
    F->push_back(Fk / norm);
    ++n;
  }
  return n;
}

}  // namespace vidmap::geometry
