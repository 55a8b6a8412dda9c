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

// Product table: kProduct[i][j] = index of monomial i * monomial j (or -1 past degree 3).
struct ProductTable {
  std::array<std::array<int, 20>, 20> idx{};
  constexpr ProductTable() {
    for (int i = 0; i < 20; ++i)
      for (int j = 0; j < 20; ++j)
        idx[i][j] =
            monomialIndex(kMonomials[i][0] + kMonomials[j][0], kMonomials[i][1] + kMonomials[j][1],
                          kMonomials[i][2] + kMonomials[j][2]);
  }
};
constexpr ProductTable kProduct;

using Poly = std::array<double, 20>;  // coefficients over kMonomials

// Multiply polynomials, skipping zero coefficients (degrees stay <= 3 by construction).
Poly mul(const Poly& a, const Poly& b) {
  Poly r{};
  for (int i = 0; i < 20; ++i) {
    if (a[i] == 0) continue;
    for (int j = 0; j < 20; ++j) {
      if (b[j] == 0) continue;
      r[kProduct.idx[i][j]] += a[i] * b[j];
    }
  }
  return r;
}
Poly add(const Poly& a, const Poly& b) {
  Poly r;
  for (int i = 0; i < 20; ++i) r[i] = a[i] + b[i];
  return r;
}
Poly scale(const Poly& a, double s) {
  Poly r;
  for (int i = 0; i < 20; ++i) r[i] = a[i] * s;
  return r;
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
  const int ix = monomialIndex(1, 0, 0), iy = monomialIndex(0, 1, 0), iz = monomialIndex(0, 0, 1),
            i1 = monomialIndex(0, 0, 0);
  // Entries of E as linear polynomials x X + y Y + z Z + W.
  Poly e[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      Poly p{};
      p[ix] = Q(3 * r + c, 5);
      p[iy] = Q(3 * r + c, 6);
      p[iz] = Q(3 * r + c, 7);
      p[i1] = Q(3 * r + c, 8);
      e[r][c] = p;
    }
  Eigen::Matrix<double, 10, 20> A;
  // det(E) = 0
  {
    Poly d = mul(e[0][0], add(mul(e[1][1], e[2][2]), scale(mul(e[1][2], e[2][1]), -1)));
    d = add(d,
            scale(mul(e[0][1], add(mul(e[1][0], e[2][2]), scale(mul(e[1][2], e[2][0]), -1))), -1));
    d = add(d, mul(e[0][2], add(mul(e[1][0], e[2][1]), scale(mul(e[1][1], e[2][0]), -1))));
    for (int k = 0; k < 20; ++k) A(0, k) = d[k];
  }
  // (E E^T - tr(E E^T)/2 I) E = 0
  Poly EEt[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = r; c < 3; ++c) {
      Poly s = mul(e[r][0], e[c][0]);
      s = add(s, mul(e[r][1], e[c][1]));
      s = add(s, mul(e[r][2], e[c][2]));
      EEt[r][c] = EEt[c][r] = s;
    }
  const Poly halfTrace = scale(add(add(EEt[0][0], EEt[1][1]), EEt[2][2]), -0.5);
  for (int i = 0; i < 3; ++i) EEt[i][i] = add(EEt[i][i], halfTrace);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      Poly s = mul(EEt[r][0], e[0][c]);
      s = add(s, mul(EEt[r][1], e[1][c]));
      s = add(s, mul(EEt[r][2], e[2][c]));
      for (int k = 0; k < 20; ++k) A(1 + 3 * r + c, k) = s[k];
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
    const double x = v(0) / v(2), y = v(1) / v(2);
    Eigen::Matrix<double, 9, 1> ev = x * Q.col(5) + y * Q.col(6) + z * Q.col(7) + Q.col(8);
    if (!ev.allFinite()) continue;
    ev.normalize();
    Mat3 Ek;
    Ek << ev(0), ev(1), ev(2), ev(3), ev(4), ev(5), ev(6), ev(7), ev(8);
    // Keep true essential matrices only: a root that the elimination brought in, or one lost
    // to rounding, violates the trace constraint (|E| = 1, so the residual is relative).
    const Mat3 EEt = Ek * Ek.transpose();
    const double trace_residual = (2 * EEt * Ek - EEt.trace() * Ek).norm();
    if (!(trace_residual < 1e-5) || !(std::abs(Ek.determinant()) < 1e-5)) continue;
    E->push_back(Ek);
    ++n;
  }
  return n;
}

}  // namespace vidmap::geometry
