// The robust loop itself, on a toy estimator (a 2D line through two points) whose behaviour is
// known in closed form, and the stopping rule.
#include <gtest/gtest.h>

#include <random>

#include "vidmap/geometry/ransac.h"
#include "vidmap/geometry/types.h"

namespace vidmap::geometry {
namespace {

// y = a x + b from two points; residual the vertical distance; refine by least squares.
struct LineEstimator {
  using Model = Eigen::Vector2d;
  static constexpr int kSampleSize = 2;
  const std::vector<Vec2>& p;
  mutable int calls = 0;
  int numData() const { return static_cast<int>(p.size()); }
  void estimate(const int* s, std::vector<Model>* out) const {
    ++calls;
    const Vec2 a = p[s[0]], b = p[s[1]];
    if (a.x() == b.x()) return;
    const double slope = (b.y() - a.y()) / (b.x() - a.x());
    out->push_back({slope, a.y() - slope * a.x()});
  }
  double residualSq(const Model& m, int i) const {
    const double r = p[i].y() - (m(0) * p[i].x() + m(1));
    return r * r;
  }
  void refine(const std::vector<int>& inl, Model* m) const {
    Eigen::Matrix2d A = Eigen::Matrix2d::Zero();
    Eigen::Vector2d b = Eigen::Vector2d::Zero();
    for (int i : inl) {
      const Eigen::Vector2d r(p[i].x(), 1);
      A += r * r.transpose();
      b += r * p[i].y();
    }
    *m = A.ldlt().solve(b);
  }
};

std::vector<Vec2> makeLine(int n, double outliers, double noise, std::vector<char>* truth,
                           std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-10, 10);
  std::normal_distribution<double> g(0, noise);
  std::vector<Vec2> p;
  truth->clear();
  for (int i = 0; i < n; ++i) {
    const double x = u(rng);
    const bool out = i < outliers * n;
    p.push_back({x, out ? u(rng) * 5 : 0.5 * x - 2 + g(rng)});
    truth->push_back(!out);
  }
  return p;
}

TEST(Ransac, IterationsNeededFollowsTheFormula) {
  // log(1 - 0.999) / log(1 - 0.5^5) = 217.6
  EXPECT_EQ(ransacIterationsNeeded(0.5, 5, 0.999, 100000), 218);
  EXPECT_EQ(ransacIterationsNeeded(1.0, 5, 0.999, 100000), 0);
  EXPECT_EQ(ransacIterationsNeeded(0.0, 5, 0.999, 1234), 1234);
  EXPECT_EQ(ransacIterationsNeeded(0.3, 5, 0.999, 500), 500);  // capped
}

TEST(Ransac, FindsTheLineAmongOutliersAndStopsAdaptively) {
  std::vector<char> truth;
  const auto p = makeLine(500, 0.6, 0.05, &truth, 1);
  LineEstimator est{p};
  RansacOptions o;
  o.max_error = 0.2;
  const auto r = ransac(est, o);
  ASSERT_TRUE(r.success);
  EXPECT_NEAR(r.model(0), 0.5, 0.01);
  EXPECT_NEAR(r.model(1), -2, 0.02);
  int missed = 0;
  for (size_t i = 0; i < p.size(); ++i) missed += truth[i] && !r.inlier_mask[i];
  EXPECT_LE(missed, 2);
  // 40% inliers, sample of 2: about 40 iterations at 0.999, far below the cap.
  EXPECT_LT(r.iterations, 100);
  EXPECT_GE(r.iterations, o.min_iterations);
}

TEST(Ransac, MinAndMaxIterationsAreHonoured) {
  std::vector<char> truth;
  const auto clean = makeLine(100, 0.0, 0.01, &truth, 2);
  LineEstimator est{clean};
  RansacOptions o;
  o.max_error = 0.1;
  o.min_iterations = 37;
  EXPECT_EQ(ransac(est, o).iterations, 37);  // all inliers: stops at the minimum
  const auto noisy = makeLine(100, 0.95, 0.01, &truth, 3);
  LineEstimator est2{noisy};
  o.min_iterations = 5;
  o.max_iterations = 60;
  EXPECT_EQ(ransac(est2, o).iterations, 60);
}

// RansacOptions::min_inliers: with no model near the minimum the search ends at the samples
// the stopping rule asks for at that count, not at the cap; a model above it is still found.
TEST(Ransac, StopsAtTheMinimumInliersWhenNoModelReachesThem) {
  std::vector<char> truth;
  const auto none = makeLine(200, 1.0, 0.01, &truth, 4);  // no line: scattered points only
  LineEstimator est{none};
  RansacOptions o;
  o.max_error = 0.2;
  const int capped = ransac(est, o).iterations;
  EXPECT_EQ(capped, o.max_iterations);
  o.min_inliers = 40;
  const auto r = ransac(est, o);
  EXPECT_LT(r.num_inliers, 40);
  EXPECT_EQ(r.iterations, ransacIterationsNeeded(40.0 / 200, 2, o.confidence, o.max_iterations));
  EXPECT_LT(r.iterations, 200);
  // A line with 25 of 200 points (12.5%) and a minimum of 20: found on every seed.
  for (std::uint64_t seed = 10; seed < 40; ++seed) {
    std::vector<char> t;
    auto p = makeLine(200, 0.875, 0.01, &t, seed);
    LineEstimator e{p};
    o.min_inliers = 20;
    o.seed = seed;
    const auto found = ransac(e, o);
    ASSERT_TRUE(found.success) << seed;
    EXPECT_GE(found.num_inliers, 25) << seed;
    EXPECT_NEAR(found.model(0), 0.5, 0.01) << seed;
  }
}

TEST(Ransac, DeterministicForASeedAndSeedsDiffer) {
  std::vector<char> truth;
  const auto p = makeLine(300, 0.5, 0.05, &truth, 4);
  LineEstimator est{p};
  RansacOptions o;
  o.max_error = 0.2;
  o.local_optimization = false;
  o.final_refinements = 0;
  const auto a = ransac(est, o), b = ransac(est, o);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.iterations, b.iterations);
  o.seed = 99;
  const auto c = ransac(est, o);
  EXPECT_NE(a.model, c.model);  // another sample, another (equally good) minimal model
}

TEST(Ransac, LocalOptimisationLowersTheCost) {
  std::vector<char> truth;
  const auto p = makeLine(400, 0.3, 0.1, &truth, 5);
  LineEstimator est{p};
  RansacOptions o;
  o.max_error = 0.3;
  o.local_optimization = false;
  o.final_refinements = 0;
  const auto plain = ransac(est, o);
  o.local_optimization = true;
  o.final_refinements = 2;
  const auto lo = ransac(est, o);
  EXPECT_LT(lo.cost, plain.cost);
}

TEST(Ransac, TooFewPointsFailsCleanly) {
  std::vector<Vec2> p = {{0, 0}};
  LineEstimator est{p};
  const auto r = ransac(est, RansacOptions{});
  EXPECT_FALSE(r.success);
  EXPECT_EQ(est.calls, 0);
}

TEST(Ransac, BadOptionsNameTheField) {
  std::vector<Vec2> p = {{0, 0}, {1, 1}, {2, 2}};
  LineEstimator est{p};
  RansacOptions o;
  o.confidence = 1.5;
  try {
    ransac(est, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ransac.confidence"), std::string::npos);
  }
  o = {};
  o.max_iterations = 3;  // below min_iterations
  EXPECT_THROW(ransac(est, o), Error);
  o = {};
  o.min_inliers = -1;
  try {
    ransac(est, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ransac.min_inliers"), std::string::npos);
  }
}

TEST(SplitMix64, BelowIsUniformAndInRange) {
  SplitMix64 rng(7);
  std::vector<int> hist(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const auto v = rng.below(10);
    ASSERT_LT(v, 10u);
    ++hist[v];
  }
  for (int h : hist) EXPECT_NEAR(h, 10000, 500);
}

}  // namespace
}  // namespace vidmap::geometry
