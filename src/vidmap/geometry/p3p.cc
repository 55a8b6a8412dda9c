#include "vidmap/geometry/p3p.h"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>

#include "vidmap/geometry/poly.h"

namespace vidmap::geometry {
namespace {

Mat3 adjugate(const Mat3& m) {
  Mat3 r;
  r << m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1), m(0, 2) * m(2, 1) - m(0, 1) * m(2, 2),
      m(0, 1) * m(1, 2) - m(0, 2) * m(1, 1), m(1, 2) * m(2, 0) - m(1, 0) * m(2, 2),
      m(0, 0) * m(2, 2) - m(0, 2) * m(2, 0), m(0, 2) * m(1, 0) - m(0, 0) * m(1, 2),
      m(1, 0) * m(2, 1) - m(1, 1) * m(2, 0), m(0, 1) * m(2, 0) - m(0, 0) * m(2, 1),
      m(0, 0) * m(1, 1) - m(0, 1) * m(1, 0);
  return r;
}

struct Quadrics {
  double a12, a13, a23, b12, b13, b23;
  Vec3 residual(const Vec3& L) const {
    return {L(0) * L(0) + L(1) * L(1) + b12 * L(0) * L(1) - a12,
            L(0) * L(0) + L(2) * L(2) + b13 * L(0) * L(2) - a13,
            L(1) * L(1) + L(2) * L(2) + b23 * L(1) * L(2) - a23};
  }
  // Gauss-Newton on the three quadrics (the paper's refinement step).
  void refine(Vec3* L) const {
    Vec3 r = residual(*L);
    for (int it = 0; it < 5; ++it) {
      const Vec3& l = *L;
      Mat3 J;
      J << 2 * l(0) + b12 * l(1), 2 * l(1) + b12 * l(0), 0, 2 * l(0) + b13 * l(2), 0,
          2 * l(2) + b13 * l(0), 0, 2 * l(1) + b23 * l(2), 2 * l(2) + b23 * l(1);
      const double det = J.determinant();
      if (std::abs(det) < 1e-300) return;
      const Vec3 cand = l - J.inverse() * r;
      const Vec3 rc = residual(cand);
      if (!(rc.squaredNorm() < r.squaredNorm())) return;
      *L = cand;
      r = rc;
    }
  }
};

}  // namespace

int p3pLambdaTwist(const Vec3 yin[3], const Vec3 X[3], std::vector<Pose>* poses) {
  Vec3 y[3];
  for (int i = 0; i < 3; ++i) {
    const double n = yin[i].norm();
    if (!(n > 0) || !std::isfinite(n)) return 0;
    y[i] = yin[i] / n;
  }
  const Vec3 d12 = X[0] - X[1], d13 = X[0] - X[2], d23 = X[1] - X[2];
  Quadrics q;
  q.a12 = d12.squaredNorm();
  q.a13 = d13.squaredNorm();
  q.a23 = d23.squaredNorm();
  q.b12 = -2 * y[0].dot(y[1]);
  q.b13 = -2 * y[0].dot(y[2]);
  q.b23 = -2 * y[1].dot(y[2]);
  const Vec3 n123 = d12.cross(d13);
  if (!(n123.squaredNorm() > 1e-24 * q.a12 * q.a13)) return 0;  // collinear world points

  Mat3 M12, M13, M23;
  M12 << 1, q.b12 / 2, 0, q.b12 / 2, 1, 0, 0, 0, 0;
  M13 << 1, 0, q.b13 / 2, 0, 0, 0, q.b13 / 2, 0, 1;
  M23 << 0, 0, 0, 0, 1, q.b23 / 2, 0, q.b23 / 2, 1;
  const Mat3 D1 = M12 * q.a23 - M23 * q.a12;
  const Mat3 D2 = M13 * q.a23 - M23 * q.a13;
  // det(D1 + g D2) = c0 + c1 g + c2 g^2 + c3 g^3
  const double c3 = D2.determinant(), c2 = (adjugate(D2) * D1).trace(),
               c1 = (adjugate(D1) * D2).trace(), c0 = D1.determinant();
  double gammas[3];
  const int ng = solveCubic(c3, c2, c1, c0, gammas);

  // Rigid pose from the depths: the triangles (X1, X2, X3) and (l_i y_i) are congruent.
  Mat3 Xm;
  Xm << d12, d13, n123;
  const Mat3 Xinv = Xm.inverse();
  const int first = static_cast<int>(poses->size());
  for (int gi = 0; gi < ng; ++gi) {
    const Mat3 D0 = D1 + gammas[gi] * D2;
    Eigen::SelfAdjointEigenSolver<Mat3> eig;
    eig.computeDirect(D0);
    const Vec3 ev = eig.eigenvalues();
    int iz = 0;
    for (int k = 1; k < 3; ++k)
      if (std::abs(ev(k)) < std::abs(ev(iz))) iz = k;
    const int ip = (iz + 1) % 3, iq = (iz + 2) % 3;
    if (ev(ip) * ev(iq) >= 0) continue;  // semi-definite: try another root
    const double s = std::sqrt(-ev(iq) / ev(ip));
    const Vec3 up = eig.eigenvectors().col(ip), uq = eig.eigenvectors().col(iq);
    int found = 0;
    for (double sign : {1.0, -1.0}) {
      const Vec3 n = up - sign * s * uq;  // the plane n . L = 0
      if (std::abs(n(0)) < 1e-12 * n.norm()) continue;
      const double w0 = -n(1) / n(0), w1 = -n(2) / n(0);  // l1 = w0 l2 + w1 l3
      // With t = l2 / l3: a23 * Q12(t) - a12 * Q23(t) = 0, a quadratic in t.
      const double A = q.a23 * (w0 * w0 + 1 + q.b12 * w0) - q.a12;
      const double B = q.a23 * (2 * w0 * w1 + q.b12 * w1) - q.a12 * q.b23;
      const double C = q.a23 * w1 * w1 - q.a12;
      double taus[2];
      const int nt = solveQuadratic(A, B, C, taus);
      for (int ti = 0; ti < nt; ++ti) {
        const double tau = taus[ti];
        if (!(tau > 0)) continue;
        const double den = tau * tau + q.b23 * tau + 1;
        if (!(den > 0)) continue;
        const double l3 = std::sqrt(q.a23 / den), l2 = tau * l3, l1 = w0 * l2 + w1 * l3;
        if (!(l1 > 0)) continue;
        Vec3 L(l1, l2, l3);
        q.refine(&L);
        if (!(L.minCoeff() > 0) || !L.allFinite()) continue;
        const Vec3 r = q.residual(L);
        if (r.cwiseAbs().maxCoeff() > 1e-6 * (q.a12 + q.a13 + q.a23)) continue;
        const Vec3 p1 = L(0) * y[0], p2 = L(1) * y[1], p3 = L(2) * y[2];
        Mat3 Ym;
        Ym << p1 - p2, p1 - p3, (p1 - p2).cross(p1 - p3);
        Pose pose;
        pose.R = Eigen::Quaterniond(Ym * Xinv).normalized().toRotationMatrix();
        pose.t = p1 - pose.R * X[0];
        if (!pose.R.allFinite() || !pose.t.allFinite()) continue;
        // Skip a repeat of a pose found from the other plane.
        bool dup = false;
        for (size_t k = first; k < poses->size(); ++k)
          if (((*poses)[k].R - pose.R).norm() < 1e-9 && ((*poses)[k].t - pose.t).norm() < 1e-9)
            dup = true;
        if (dup) continue;
        poses->push_back(pose);
        ++found;
      }
    }
    if (found > 0) break;
  }
  return static_cast<int>(poses->size()) - first;
}

}  // namespace vidmap::geometry
