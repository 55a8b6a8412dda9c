#include "vidmap/geometry/essential_5pt.h"

#include <Eigen/LU>
#include <Eigen/QR>
#include <array>
#include <cmath>

#include "vidmap/geometry/sturm.h"

namespace vidmap::geometry {
namespace {

// Monomials of degree <= 3 in (x, y, z), in Nister's order: the ten eliminated by Gauss-Jordan
// (x^3 y^3 x^2y xy^2 x^2z x^2 y^2z y^2 xyz xy), then the ten of degree <= 1 in x and y:
// x{z^2 z 1}, y{z^2 z 1}, z^3 z^2 z 1.
constexpr int kMonomials[20][3] = {{3, 0, 0}, {0, 3, 0}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1},
                                   {2, 0, 0}, {0, 2, 1}, {0, 2, 0}, {1, 1, 1}, {1, 1, 0},
                                   {1, 0, 2}, {1, 0, 1}, {1, 0, 0}, {0, 1, 2}, {0, 1, 1},
                                   {0, 1, 0}, {0, 0, 3}, {0, 0, 2}, {0, 0, 1}, {0, 0, 0}};

constexpr int monomialIndex(int a, int b, int c) {
  for (int i = 0; i < 20; ++i)
    if (kMonomials[i][0] == a && kMonomials[i][1] == b && kMonomials[i][2] == c) return i;
  return -1;
}

// Linear polynomials over (x, y, z, 1), quadratics over (x^2 xy xz y^2 yz z^2 x y z 1), cubics
// over kMonomials; the products are table-driven over the supports only (16 and 40 terms).
constexpr int kLin[4][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}};
constexpr int kQuad[10][3] = {{2, 0, 0}, {1, 1, 0}, {1, 0, 1}, {0, 2, 0}, {0, 1, 1},
                              {0, 0, 2}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}};

constexpr int quadIndex(int a, int b, int c) {
  for (int i = 0; i < 10; ++i)
    if (kQuad[i][0] == a && kQuad[i][1] == b && kQuad[i][2] == c) return i;
  return -1;
}

struct Tables {
  int lin_lin[4][4]{};    // -> quadratic index
  int quad_lin[10][4]{};  // -> cubic (kMonomials) index
  constexpr Tables() {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        lin_lin[i][j] =
            quadIndex(kLin[i][0] + kLin[j][0], kLin[i][1] + kLin[j][1], kLin[i][2] + kLin[j][2]);
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 4; ++j)
        quad_lin[i][j] = monomialIndex(kQuad[i][0] + kLin[j][0], kQuad[i][1] + kLin[j][1],
                                       kQuad[i][2] + kLin[j][2]);
  }
};
constexpr Tables kTables;

using Lin = std::array<double, 4>;
using Quad = std::array<double, 10>;
using Poly = std::array<double, 20>;  // coefficients over kMonomials

Quad mul(const Lin& a, const Lin& b) {
  Quad r{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) r[kTables.lin_lin[i][j]] += a[i] * b[j];
  return r;
}
// r += s * q * l
void addMul(const Quad& q, const Lin& l, double s, Poly* r) {
  for (int i = 0; i < 10; ++i) {
    const double qi = s * q[i];
    for (int j = 0; j < 4; ++j) (*r)[kTables.quad_lin[i][j]] += qi * l[j];
  }
}
Quad sub(const Quad& a, const Quad& b) {
  Quad r;
  for (int i = 0; i < 10; ++i) r[i] = a[i] - b[i];
  return r;
}

// Gauss-Newton on the ten cubic constraints A m(x, y, z) = 0: recovers the digits that the
// elimination and the hidden-variable determinant lose on ill-conditioned samples.
void polish(const Eigen::Matrix<double, 10, 20>& A, Vec3* xyz) {
  auto eval = [&](const Vec3& p, Eigen::Matrix<double, 10, 1>* f, Eigen::Matrix<double, 10, 3>* J) {
    Eigen::Matrix<double, 20, 1> m;
    Eigen::Matrix<double, 20, 3> dm;
    for (int i = 0; i < 20; ++i) {
      const int* e = kMonomials[i];
      auto pw = [](double b, int k) {
        return k == 0 ? 1.0 : k == 1 ? b : k == 2 ? b * b : b * b * b;
      };
      const double px = pw(p(0), e[0]), py = pw(p(1), e[1]), pz = pw(p(2), e[2]);
      m(i) = px * py * pz;
      dm(i, 0) = e[0] ? e[0] * pw(p(0), e[0] - 1) * py * pz : 0;
      dm(i, 1) = e[1] ? e[1] * px * pw(p(1), e[1] - 1) * pz : 0;
      dm(i, 2) = e[2] ? e[2] * px * py * pw(p(2), e[2] - 1) : 0;
    }
    *f = A * m;
    if (J) *J = A * dm;
  };
  Eigen::Matrix<double, 10, 1> f;
  Eigen::Matrix<double, 10, 3> J;
  eval(*xyz, &f, &J);
  for (int it = 0; it < 3; ++it) {
    const Vec3 step = (J.transpose() * J).ldlt().solve(-J.transpose() * f);
    if (!step.allFinite()) return;
    const Vec3 cand = *xyz + step;
    Eigen::Matrix<double, 10, 1> fc;
    eval(cand, &fc, nullptr);
    if (!(fc.squaredNorm() < f.squaredNorm())) return;
    *xyz = cand;
    eval(*xyz, &f, &J);
  }
}

}  // namespace

int essential5pt(const Vec3 x1[5], const Vec3 x2[5], std::vector<Mat3>* E) {
  // Epipolar constraints x2^T E x1 = 0 on e = E row-major.
  Eigen::Matrix<double, 9, 5> At;
  for (int i = 0; i < 5; ++i) {
    const Vec3 a = x1[i].normalized(), b = x2[i].normalized();
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) At(3 * r + c, i) = b[r] * a[c];
  }
  if (!At.allFinite()) return 0;
  // The null space of the 5x9 system: the last four columns of Q in At = QR.
  Eigen::HouseholderQR<Eigen::Matrix<double, 9, 5>> qr(At);
  // Repeated or otherwise dependent constraints (duplicate points) leave E undetermined.
  const auto Rd = qr.matrixQR().diagonal().cwiseAbs();
  if (!(Rd.minCoeff() > 1e-9 * Rd.maxCoeff())) return 0;
  const Eigen::Matrix<double, 9, 9> Q = qr.householderQ();
  // Entries of E as linear polynomials x X + y Y + z Z + W.
  Lin e[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      e[r][c] = {Q(3 * r + c, 5), Q(3 * r + c, 6), Q(3 * r + c, 7), Q(3 * r + c, 8)};
  Eigen::Matrix<double, 10, 20> A;
  // det(E) = 0
  {
    Poly d{};
    addMul(sub(mul(e[1][1], e[2][2]), mul(e[1][2], e[2][1])), e[0][0], 1.0, &d);
    addMul(sub(mul(e[1][0], e[2][2]), mul(e[1][2], e[2][0])), e[0][1], -1.0, &d);
    addMul(sub(mul(e[1][0], e[2][1]), mul(e[1][1], e[2][0])), e[0][2], 1.0, &d);
    for (int k = 0; k < 20; ++k) A(0, k) = d[k];
  }
  // (E E^T - tr(E E^T)/2 I) E = 0
  Quad EEt[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = r; c < 3; ++c) {
      Quad q = mul(e[r][0], e[c][0]);
      const Quad q1 = mul(e[r][1], e[c][1]), q2 = mul(e[r][2], e[c][2]);
      for (int k = 0; k < 10; ++k) q[k] += q1[k] + q2[k];
      EEt[r][c] = EEt[c][r] = q;
    }
  Quad half_trace;
  for (int k = 0; k < 10; ++k) half_trace[k] = -0.5 * (EEt[0][0][k] + EEt[1][1][k] + EEt[2][2][k]);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 10; ++k) EEt[i][i][k] += half_trace[k];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      Poly p{};
      for (int k = 0; k < 3; ++k) addMul(EEt[r][k], e[k][c], 1.0, &p);
      for (int k = 0; k < 20; ++k) A(1 + 3 * r + c, k) = p[k];
    }
  // Gauss-Jordan: each eliminated monomial as a combination of the remaining ten.
  Eigen::PartialPivLU<Eigen::Matrix<double, 10, 10>> lu(A.leftCols<10>());
  const Eigen::Matrix<double, 10, 10> G = lu.solve(A.rightCols<10>());
  if (!G.allFinite()) return 0;
  // Hiding z: (x^2 z) - z (x^2), (y^2 z) - z (y^2) and (xyz) - z (xy) vanish, and each is
  // linear in (x, y, 1) with coefficients polynomial in z: B(z) [x y 1]^T = 0.
  // Row i of G gives monomial_i = -G_i . r, with r = [xz^2 xz x yz^2 yz y z^3 z^2 z 1].
  using P = std::array<double, 5>;  // ascending in z, degree <= 4
  P B[3][3];
  const int pairs[3][2] = {{4, 5}, {6, 7}, {8, 9}};  // (m z, m) rows of G
  for (int k = 0; k < 3; ++k) {
    const auto a = -G.row(pairs[k][0]);  // monomial m z
    const auto b = G.row(pairs[k][1]);   // + z * monomial m
    for (int v = 0; v < 2; ++v) {        // x, y: r entries 3v .. 3v+2 = {z^2, z, 1}
      const int o = 3 * v;
      B[k][v] = {a(o + 2), a(o + 1) + b(o + 2), a(o) + b(o + 1), b(o), 0};
    }
    B[k][2] = {a(9), a(8) + b(9), a(7) + b(8), a(6) + b(7), b(6)};
  }
  auto mul = [](const double* p, int dp, const double* q, int dq, double* r) {
    for (int i = 0; i <= dp + dq; ++i) r[i] = 0;
    for (int i = 0; i <= dp; ++i)
      for (int j = 0; j <= dq; ++j) r[i + j] += p[i] * q[j];
  };
  // det B = B00 (B11 B22 - B12 B21) - B01 (B10 B22 - B12 B20) + B02 (B10 B21 - B11 B20)
  double m1[8], m2[8], c1[8], c2[8], c3[8], t[11], det[11] = {0};
  const int dg[3] = {3, 3, 4};
  auto minor = [&](int r1, int ca, int cb, double* out) {  // B[1][ca] B[2][cb] - B[1][cb] B[2][ca]
    mul(B[r1][ca].data(), dg[ca], B[r1 + 1][cb].data(), dg[cb], m1);
    mul(B[r1][cb].data(), dg[cb], B[r1 + 1][ca].data(), dg[ca], m2);
    for (int i = 0; i <= dg[ca] + dg[cb]; ++i) out[i] = m1[i] - m2[i];
  };
  minor(1, 1, 2, c1);
  minor(1, 0, 2, c2);
  minor(1, 0, 1, c3);
  mul(B[0][0].data(), 3, c1, 7, t);
  for (int i = 0; i <= 10; ++i) det[i] += t[i];
  mul(B[0][1].data(), 3, c2, 7, t);
  for (int i = 0; i <= 10; ++i) det[i] -= t[i];
  mul(B[0][2].data(), 4, c3, 6, t);
  for (int i = 0; i <= 10; ++i) det[i] += t[i];
  double zs[10];
  const int nz = sturmRealRoots(det, 10, zs);
  int n = 0;
  for (int k = 0; k < nz; ++k) {
    const double z = zs[k];
    Mat3 Bz;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        double v = 0;
        for (int i = dg[c]; i >= 0; --i) v = v * z + B[r][c][i];
        Bz(r, c) = v;
      }
    // The null vector of B(z): the largest cross product of two rows.
    Vec3 v = Bz.row(0).cross(Bz.row(1));
    const Vec3 v2 = Bz.row(0).cross(Bz.row(2)), v3 = Bz.row(1).cross(Bz.row(2));
    if (v2.squaredNorm() > v.squaredNorm()) v = v2;
    if (v3.squaredNorm() > v.squaredNorm()) v = v3;
    if (!(std::abs(v(2)) > 1e-14 * v.norm())) continue;
    Vec3 xyz(v(0) / v(2), v(1) / v(2), z);
    // E from (x, y, z) and its violation of the trace constraint (|E| = 1: relative).
    auto essential = [&](const Vec3& p, Mat3* Ek) {
      Eigen::Matrix<double, 9, 1> ev =
          p(0) * Q.col(5) + p(1) * Q.col(6) + p(2) * Q.col(7) + Q.col(8);
      if (!ev.allFinite()) return 1e300;
      ev.normalize();
      *Ek << ev(0), ev(1), ev(2), ev(3), ev(4), ev(5), ev(6), ev(7), ev(8);
      const Mat3 EEt = *Ek * Ek->transpose();
      return (2 * EEt * *Ek - EEt.trace() * *Ek).norm() + std::abs(Ek->determinant());
    };
    Mat3 Ek;
    double residual = essential(xyz, &Ek);
    if (!(residual < 1e-10)) {  // an ill-conditioned sample: polish the root
      polish(A, &xyz);
      residual = essential(xyz, &Ek);
    }
    // Keep true essential matrices only: a root that the elimination brought in, or one lost
    // to rounding, violates the constraints.
    if (!(residual < 1e-5)) continue;
    E->push_back(Ek);
    ++n;
  }
  return n;
}

}  // namespace vidmap::geometry
