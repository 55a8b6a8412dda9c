// The small dense pieces of schur.h against Eigen.
#include "vidmap/ba/schur.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

namespace vidmap::ba {
namespace {

TEST(Schur, InvertSpdMatchesEigen) {
  std::mt19937 rng(2);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int n : {1, 3, 6, 9, 11}) {
    Eigen::MatrixXd A(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) A(i, j) = g(rng);
    Eigen::MatrixXd S = A * A.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> M = S;
    double work[11 * 11 + 11];
    ASSERT_TRUE(invertSpd(M.data(), n, work));
    const Eigen::MatrixXd ref = S.inverse();
    EXPECT_LT((Eigen::MatrixXd(M) - ref).norm(), 1e-9 * ref.norm()) << n;
  }
  double notPd[4] = {1, 2, 2, 1}, work[6];
  EXPECT_FALSE(invertSpd(notPd, 2, work));
}

TEST(Schur, InvertPointMatchesEigen) {
  const double V[6] = {4, 1, 0.5, 3, 0.2, 2}, d2[3] = {0.1, 0.2, 0.3};
  double Vi[9];
  ASSERT_TRUE(invertPoint(V, d2, Vi));
  Eigen::Matrix3d M;
  M << 4.1, 1, 0.5, 1, 3.2, 0.2, 0.5, 0.2, 2.3;
  const Eigen::Matrix3d ref = M.inverse();
  for (int k = 0; k < 9; ++k) EXPECT_NEAR(Vi[k], ref(k / 3, k % 3), 1e-14);
  const double bad[6] = {1, 2, 0, 1, 0, 1}, zero[3] = {0, 0, 0};
  EXPECT_FALSE(invertPoint(bad, zero, Vi));
}

}  // namespace
}  // namespace vidmap::ba
