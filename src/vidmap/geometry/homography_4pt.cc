#include "vidmap/geometry/homography_4pt.h"

#include <Eigen/Eigenvalues>

#include "vidmap/geometry/normalize.h"

namespace vidmap::geometry {
namespace {

// Unit-Frobenius H in pixels from the normalised Hn, or false when it is singular.
bool denormalize(const Mat3& Hn, const Mat3& T1, const Mat3& T2, Mat3* H) {
  const Mat3 Hk = T2.inverse() * Hn * T1;
  const double norm = Hk.norm();
  if (!(norm > 0) || !Hk.allFinite() || std::abs(Hk.determinant()) < 1e-12 * norm * norm * norm)
    return false;
  *H = Hk / norm;
  return true;
}

// The adjugate of [x1 x2 x3] (columns (p, 1)) and the projective coordinates v = adj * x4 of
// the fourth point; false when a triple is collinear (a zero of det or of a v_i, relative to
// the normalised points' unit scale).
bool projectiveBasis(const Vec3 (&x)[4], Mat3* adj, Vec3* v) {
  // The rows of adj [c0 c1 c2] are c1 x c2, c2 x c0 and c0 x c1; det = c0 . (c1 x c2).
  adj->row(0) = x[1].cross(x[2]).transpose();
  adj->row(1) = x[2].cross(x[0]).transpose();
  adj->row(2) = x[0].cross(x[1]).transpose();
  const double det = x[0].dot(adj->row(0).transpose());
  *v = *adj * x[3];
  constexpr double kEps = 1e-9;
  return std::abs(det) > kEps && std::abs(v->x()) > kEps && std::abs(v->y()) > kEps &&
         std::abs(v->z()) > kEps;
}

}  // namespace

bool homography4pt(const Vec2* p1, const Vec2* p2, Mat3* H) {
  Mat3 T1, T2;
  if (!hartleyTransform(p1, 4, &T1) || !hartleyTransform(p2, 4, &T2)) return false;
  Vec3 a[4], b[4];
  for (int i = 0; i < 4; ++i) {
    a[i] = applyTransform(T1, p1[i]).homogeneous();
    b[i] = applyTransform(T2, p2[i]).homogeneous();
  }
  Mat3 adj1, adj2;
  Vec3 v1, v2;
  if (!projectiveBasis(a, &adj1, &v1) || !projectiveBasis(b, &adj2, &v2)) return false;
  Mat3 M2;
  M2 << b[0], b[1], b[2];
  const Vec3 d = v2.cwiseQuotient(v1);
  const Mat3 Hn = M2 * d.asDiagonal() * adj1;
  return denormalize(Hn, T1, T2, H);
}

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
  return denormalize(Hn, T1, T2, H);
}

}  // namespace vidmap::geometry
