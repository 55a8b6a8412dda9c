#include "vidmap/geometry/refine.h"

#include <Eigen/LU>
#include <Eigen/SVD>

namespace vidmap::geometry {

double sampsonResidual(const Mat3& M, const Vec3& x1, const Vec3& x2,
                       Eigen::Matrix<double, 1, 9>* grad) {
  const Vec3 a = M * x1, b = M.transpose() * x2;
  const double c = x2.dot(a);
  const double den = a(0) * a(0) + a(1) * a(1) + b(0) * b(0) + b(1) * b(1);
  if (!(den > 0)) {
    if (grad) grad->setZero();
    return 0;
  }
  const double s = std::sqrt(den);
  const double r = c / s;
  if (grad) {
    const double k = c / (den * s);  // c / den^{3/2}; d den / dM halves the factor 2
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double dden = 0;  // half of d den / d M_ij
        if (i < 2) dden += a(i) * x1(j);
        if (j < 2) dden += b(j) * x2(i);
        (*grad)(3 * i + j) = x2(i) * x1(j) / s - k * dden;
      }
  }
  return r;
}

namespace {

Eigen::Matrix<double, 9, 1> vec(const Mat3& m) {
  Eigen::Matrix<double, 9, 1> v;
  v << m(0, 0), m(0, 1), m(0, 2), m(1, 0), m(1, 1), m(1, 2), m(2, 0), m(2, 1), m(2, 2);
  return v;
}

// An orthonormal basis of the plane orthogonal to the unit vector t.
Eigen::Matrix<double, 3, 2> tangentBasis(const Vec3& t) {
  Vec3 a = std::abs(t.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  Vec3 b1 = t.cross(a).normalized();
  Vec3 b2 = t.cross(b1);
  Eigen::Matrix<double, 3, 2> B;
  B << b1, b2;
  return B;
}

template <class Fn>
void forEach(const std::vector<int>& indices, size_t n, Fn&& fn) {
  if (indices.empty()) {
    for (size_t i = 0; i < n; ++i) fn(static_cast<int>(i));
  } else {
    for (int i : indices) fn(i);
  }
}

struct RelativePoseProblem {
  static constexpr int kDof = 5;
  using State = Pose;
  const Vec3List& x1;
  const Vec3List& x2;
  const std::vector<int>& idx;
  CauchyLoss loss;

  double cost(const State& s) const {
    const Mat3 E = skew(s.t) * s.R;
    double c = 0;
    forEach(idx, x1.size(), [&](int i) {
      const double r = sampsonResidual(E, x1[i], x2[i], nullptr);
      c += loss.rho(r * r);
    });
    return 0.5 * c;
  }
  double normalEquations(const State& s, Eigen::Matrix<double, 5, 5>* JtJ,
                         Eigen::Matrix<double, 5, 1>* Jtr) const {
    const Mat3 E = skew(s.t) * s.R;
    const Eigen::Matrix<double, 3, 2> B = tangentBasis(s.t);
    Eigen::Matrix<double, 9, 5> dE;
    for (int k = 0; k < 3; ++k) dE.col(k) = vec(skew(s.t) * skew(Vec3::Unit(k)) * s.R);
    for (int k = 0; k < 2; ++k) dE.col(3 + k) = vec(skew(B.col(k)) * s.R);
    JtJ->setZero();
    Jtr->setZero();
    double c = 0;
    Eigen::Matrix<double, 1, 9> g;
    forEach(idx, x1.size(), [&](int i) {
      const double r = sampsonResidual(E, x1[i], x2[i], &g);
      const Eigen::Matrix<double, 1, 5> J = g * dE;
      const double w = loss.weight(r * r);
      JtJ->noalias() += w * J.transpose() * J;
      Jtr->noalias() += w * J.transpose() * r;
      c += loss.rho(r * r);
    });
    return 0.5 * c;
  }
  State retract(const State& s, const Eigen::Matrix<double, 5, 1>& d) const {
    const Eigen::Matrix<double, 3, 2> B = tangentBasis(s.t);
    return {expSO3(d.head<3>()) * s.R, (s.t + B * d.tail<2>()).normalized()};
  }
};

struct FundamentalState {
  Mat3 U, V;
  double sigma;
  Mat3 F() const { return U * Vec3(1, sigma, 0).asDiagonal() * V.transpose(); }
};

struct FundamentalProblem {
  static constexpr int kDof = 7;
  using State = FundamentalState;
  const Vec3List& p1;
  const Vec3List& p2;
  const std::vector<int>& idx;
  CauchyLoss loss;

  double cost(const State& s) const {
    const Mat3 F = s.F();
    double c = 0;
    forEach(idx, p1.size(), [&](int i) {
      const double r = sampsonResidual(F, p1[i], p2[i], nullptr);
      c += loss.rho(r * r);
    });
    return 0.5 * c;
  }
  double normalEquations(const State& s, Eigen::Matrix<double, 7, 7>* JtJ,
                         Eigen::Matrix<double, 7, 1>* Jtr) const {
    const Mat3 F = s.F();
    const Mat3 S = Vec3(1, s.sigma, 0).asDiagonal();
    Eigen::Matrix<double, 9, 7> dF;
    for (int k = 0; k < 3; ++k) {
      dF.col(k) = vec(s.U * skew(Vec3::Unit(k)) * S * s.V.transpose());
      dF.col(3 + k) = vec(-s.U * S * skew(Vec3::Unit(k)) * s.V.transpose());
    }
    dF.col(6) = vec(s.U * Vec3(0, 1, 0).asDiagonal() * s.V.transpose());
    JtJ->setZero();
    Jtr->setZero();
    double c = 0;
    Eigen::Matrix<double, 1, 9> g;
    forEach(idx, p1.size(), [&](int i) {
      const double r = sampsonResidual(F, p1[i], p2[i], &g);
      const Eigen::Matrix<double, 1, 7> J = g * dF;
      const double w = loss.weight(r * r);
      JtJ->noalias() += w * J.transpose() * J;
      Jtr->noalias() += w * J.transpose() * r;
      c += loss.rho(r * r);
    });
    return 0.5 * c;
  }
  State retract(const State& s, const Eigen::Matrix<double, 7, 1>& d) const {
    return {s.U * expSO3(d.head<3>()), s.V * expSO3(d.segment<3>(3)), s.sigma + d(6)};
  }
};

struct AbsolutePoseProblem {
  static constexpr int kDof = 6;
  using State = Pose;
  const Vec2List& xn;
  const Vec3List& X;
  const std::vector<int>& idx;
  CauchyLoss loss;

  double cost(const State& s) const {
    double c = 0;
    forEach(idx, xn.size(), [&](int i) {
      const Vec3 p = s.R * X[i] + s.t;
      c += loss.rho((p.hnormalized() - xn[i]).squaredNorm());
    });
    return 0.5 * c;
  }
  double normalEquations(const State& s, Eigen::Matrix<double, 6, 6>* JtJ,
                         Eigen::Matrix<double, 6, 1>* Jtr) const {
    // Written out per point (two Jacobian rows, the upper triangle of J^T J): the refiner's
    // inner loop.
    double H[6][6] = {};
    double g[6] = {};
    double c = 0;
    forEach(idx, xn.size(), [&](int i) {
      const Vec3 RX = s.R * X[i];
      const double a = RX.x(), b = RX.y(), cz = RX.z();
      const double z = cz + s.t.z();
      const double iz = 1.0 / z;
      const double u = (a + s.t.x()) * iz, v = (b + s.t.y()) * iz;
      const double r0 = u - xn[i].x(), r1 = v - xn[i].y();
      // R' = exp(w) R: d p / d w = -[R X]x; d p / d t = I.
      const double j0[6] = {-iz * u * b, iz * (cz + u * a), -iz * b, iz, 0, -iz * u};
      const double j1[6] = {-iz * (cz + v * b), iz * v * a, iz * a, 0, iz, -iz * v};
      const double s2 = r0 * r0 + r1 * r1;
      const double w = loss.weight(s2);
      for (int k = 0; k < 6; ++k) {
        const double wk0 = w * j0[k], wk1 = w * j1[k];
        for (int l = k; l < 6; ++l) H[k][l] += wk0 * j0[l] + wk1 * j1[l];
        g[k] += wk0 * r0 + wk1 * r1;
      }
      c += loss.rho(s2);
    });
    for (int k = 0; k < 6; ++k) {
      (*Jtr)(k) = g[k];
      for (int l = k; l < 6; ++l) (*JtJ)(k, l) = (*JtJ)(l, k) = H[k][l];
    }
    return 0.5 * c;
  }
  State retract(const State& s, const Eigen::Matrix<double, 6, 1>& d) const {
    return {expSO3(d.head<3>()) * s.R, s.t + d.tail<3>()};
  }
};

// A camera turned about a fixed centre c: p = R (X - c), three degrees of freedom.
struct RotationAboutCentreProblem {
  static constexpr int kDof = 3;
  using State = Pose;
  const Vec2List& xn;
  const Vec3List& X;
  const std::vector<int>& idx;
  const Vec3& centre;

  double cost(const State& s) const {
    double c = 0;
    forEach(idx, xn.size(),
            [&](int i) { c += (s.apply(X[i]).hnormalized() - xn[i]).squaredNorm(); });
    return 0.5 * c;
  }
  double normalEquations(const State& s, Eigen::Matrix<double, 3, 3>* JtJ,
                         Eigen::Matrix<double, 3, 1>* Jtr) const {
    JtJ->setZero();
    Jtr->setZero();
    double c = 0;
    forEach(idx, xn.size(), [&](int i) {
      const Vec3 p = s.R * (X[i] - centre);
      const double iz = 1.0 / p.z(), u = p.x() * iz, v = p.y() * iz;
      const Vec2 r(u - xn[i].x(), v - xn[i].y());
      // R' = exp(w) R: d p / d w = -[p]x (AbsolutePoseProblem's first three columns).
      Eigen::Matrix<double, 2, 3> J;
      J << -iz * u * p.y(), iz * (p.z() + u * p.x()), -iz * p.y(), -iz * (p.z() + v * p.y()),
          iz * v * p.x(), iz * p.x();
      JtJ->noalias() += J.transpose() * J;
      Jtr->noalias() += J.transpose() * r;
      c += r.squaredNorm();
    });
    return 0.5 * c;
  }
  State retract(const State& s, const Eigen::Matrix<double, 3, 1>& d) const {
    State out;
    out.R = expSO3(d) * s.R;
    out.t = -out.R * centre;
    return out;
  }
};

}  // namespace

LmSummary refineRelativePose(const Vec3List& x1, const Vec3List& x2,
                             const std::vector<int>& indices, Pose* rel, const LmOptions& options) {
  LmSummary s;
  const double n = rel->t.norm();
  if (!(n > 0) || !rel->R.allFinite()) return s;
  rel->t /= n;
  RelativePoseProblem p{x1, x2, indices, CauchyLoss(options.loss_scale)};
  return levenbergMarquardt(p, rel, options);
}

LmSummary refineFundamental(const Vec2List& p1, const Vec2List& p2, const std::vector<int>& indices,
                            Mat3* F, const LmOptions& options) {
  LmSummary s;
  if (!F->allFinite()) return s;
  Eigen::JacobiSVD<Mat3> svd(*F, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Vec3 sv = svd.singularValues();
  if (!(sv(0) > 0)) return s;
  FundamentalState st{svd.matrixU(), svd.matrixV(), sv(1) / sv(0)};
  if (st.U.determinant() < 0) st.U = -st.U;
  if (st.V.determinant() < 0) st.V = -st.V;
  // Work in normalised coordinates x' = k (x - c_i) with one scale k for both images: the
  // Sampson distance then scales by k exactly and the problem is well conditioned.
  Vec2 c1 = Vec2::Zero(), c2 = Vec2::Zero();
  double spread = 0;
  int n = 0;
  forEach(indices, p1.size(), [&](int i) {
    c1 += p1[i];
    c2 += p2[i];
    ++n;
  });
  if (n == 0) return s;
  c1 /= n;
  c2 /= n;
  forEach(indices, p1.size(), [&](int i) { spread += (p1[i] - c1).norm() + (p2[i] - c2).norm(); });
  const double k = spread > 0 ? 2.0 * n * std::sqrt(2.0) / spread : 1.0;
  Mat3 T1, T2;
  T1 << k, 0, -k * c1.x(), 0, k, -k * c1.y(), 0, 0, 1;
  T2 << k, 0, -k * c2.x(), 0, k, -k * c2.y(), 0, 0, 1;
  Vec3List h1(p1.size()), h2(p2.size());
  forEach(indices, p1.size(), [&](int i) {
    h1[i] = T1 * p1[i].homogeneous();
    h2[i] = T2 * p2[i].homogeneous();
  });
  const Mat3 Fn = T2.inverse().transpose() * (*F) * T1.inverse();
  Eigen::JacobiSVD<Mat3> svdn(Fn, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const Vec3 svn = svdn.singularValues();
  if (!(svn(0) > 0)) return s;
  st = {svdn.matrixU(), svdn.matrixV(), svn(1) / svn(0)};
  if (st.U.determinant() < 0) st.U = -st.U;
  if (st.V.determinant() < 0) st.V = -st.V;
  LmOptions o = options;
  o.loss_scale = options.loss_scale * k;
  FundamentalProblem p{h1, h2, indices, CauchyLoss(o.loss_scale)};
  s = levenbergMarquardt(p, &st, o);
  // Report costs in pixels.
  s.initial_cost /= k * k;
  s.final_cost /= k * k;
  const Mat3 Fr = T2.transpose() * st.F() * T1;
  *F = Fr / Fr.norm();
  return s;
}

LmSummary refineAbsolutePose(const Vec2List& xn, const Vec3List& X, const std::vector<int>& indices,
                             Pose* pose, const LmOptions& options) {
  AbsolutePoseProblem p{xn, X, indices, CauchyLoss(options.loss_scale)};
  return levenbergMarquardt(p, pose, options);
}

LmSummary refineRotationAboutCentre(const Vec2List& xn, const Vec3List& X,
                                    const std::vector<int>& indices, const Vec3& centre, Pose* pose,
                                    const LmOptions& options) {
  pose->t = -pose->R * centre;
  RotationAboutCentreProblem p{xn, X, indices, centre};
  return levenbergMarquardt(p, pose, options);
}

}  // namespace vidmap::geometry
