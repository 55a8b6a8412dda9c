#include "vidmap/geometry/essential_5pt.h"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <array>
#include <cmath>

namespace vidmap::geometry {
namespace {

// Monomials of degree <= 3 in (x, y, z): the 10 cubics first (eliminated), then the quotient
// basis x^2, xy, xz, y^2, yz, z^2, x, y, z, 1.
constexpr int kMonomials[20][3] = {{3, 0, 0}, {2, 1, 0}, {2, 0, 1}, {1, 2, 0}, {1, 1, 1},
                                   {1, 0, 2}, {0, 3, 0}, {0, 2, 1}, {0, 1, 2}, {0, 0, 3},
                                   {2, 0, 0}, {1, 1, 0}, {1, 0, 1}, {0, 2, 0}, {0, 1, 1},
                                   {0, 0, 2}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}};

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
        idx[i][j] = monomialIndex(kMonomials[i][0] + kMonomials[j][0],
                                  kMonomials[i][1] + kMonomials[j][1],
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
  const int ix = monomialIndex(1, 0, 0), iy = monomialIndex(0, 1, 0),
            iz = monomialIndex(0, 0, 1), i1 = monomialIndex(0, 0, 0);
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
    d = add(d, scale(mul(e[0][1], add(mul(e[1][0], e[2][2]), scale(mul(e[1][2], e[2][0]), -1))),
                     -1));
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
  // Gauss-Jordan on the cubic block: cubic monomials = G * basis monomials.
  Eigen::FullPivLU<Eigen::Matrix<double, 10, 10>> lu(A.leftCols<10>());
  if (lu.rank() < 10) return 0;
  const Eigen::Matrix<double, 10, 10> G = -lu.solve(A.rightCols<10>());
  // Action matrix of multiplication by x on basis b = [x^2 xy xz y^2 yz z^2 x y z 1]:
  // row j expresses x * b_j in b.
  Eigen::Matrix<double, 10, 10> M = Eigen::Matrix<double, 10, 10>::Zero();
  for (int j = 0; j < 10; ++j) {
    const int prod = kProduct.idx[ix][10 + j];
    if (prod < 10) {
      M.row(j) = G.row(prod);
    } else {
      M(j, prod - 10) = 1.0;
    }
  }
  if (!M.allFinite()) return 0;
  Eigen::EigenSolver<Eigen::Matrix<double, 10, 10>> eig(M, true);
  if (eig.info() != Eigen::Success) return 0;
  const auto& vals = eig.eigenvalues();
  const auto& vecs = eig.eigenvectors();
  int n = 0;
  for (int k = 0; k < 10; ++k) {
    if (std::abs(vals[k].imag()) > 1e-8 * (1 + std::abs(vals[k].real()))) continue;
    const std::complex<double> w = vecs(9, k);
    if (std::abs(w) < 1e-14) continue;
    const double x = (vecs(6, k) / w).real(), y = (vecs(7, k) / w).real(),
                 z = (vecs(8, k) / w).real();
    Eigen::Matrix<double, 9, 1> ev = x * Q.col(5) + y * Q.col(6) + z * Q.col(7) + Q.col(8);
    if (!ev.allFinite()) continue;
    ev.normalize();
    Mat3 Ek;
    Ek << ev(0), ev(1), ev(2), ev(3), ev(4), ev(5), ev(6), ev(7), ev(8);
    E->push_back(Ek);
    ++n;
  }
  return n;
}

}  // namespace vidmap::geometry
