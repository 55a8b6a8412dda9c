// The batched triangulation (triangulation_batch.h) against the per-track call, and both
// against the Eigen composition triangulateTrack had before it shared triangulation_kernels.h
// (triangulateOptimal, triangulateDlt and the checks written with Eigen: bit for bit, the
// operations being in Eigen's order for x86-64's SSE2 packets), on tracks with known truth.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "vidmap/core/parallel.h"
#if defined(_OPENMP)
#include <omp.h>
#endif
#include "vidmap/geometry/triangulation_batch_cases.h"

namespace vidmap::geometry {
namespace {

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expectIdentical(const TrackTriangulation& a, const TrackTriangulation& b, int track) {
  EXPECT_EQ(a.status, b.status) << "track " << track;
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(sameBits(a.X(k), b.X(k))) << "track " << track;
  EXPECT_TRUE(sameBits(a.max_error_px, b.max_error_px)) << "track " << track;
  EXPECT_TRUE(sameBits(a.angle_deg, b.angle_deg)) << "track " << track;
}

std::vector<TrackObservation> observations(const testing::TriangulationCase& c, int t) {
  std::vector<TrackObservation> obs;
  for (int o = c.batch.track_begin[t]; o < c.batch.track_begin[t + 1]; ++o)
    obs.push_back({c.poses[c.batch.view_of[o]], c.camera,
                   Vec2(c.batch.pixels[2 * o], c.batch.pixels[2 * o + 1])});
  return obs;
}

// triangulateTrack as it was written with Eigen (the reference of the shared kernel).
TrackTriangulation eigenTrack(const std::vector<TrackObservation>& obs,
                              const TriangulationOptions& options) {
  TrackTriangulation out;
  std::vector<Pose> poses;
  Vec2List xn;
  for (const auto& o : obs) {
    if (!o.pixel.allFinite()) return out;
    poses.push_back(o.pose);
    xn.push_back(o.camera.normalize(o.pixel));
  }
  const std::optional<Vec3> X = obs.size() == 2
                                    ? triangulateOptimal(poses[0], poses[1], xn[0], xn[1])
                                    : triangulateDlt(poses, xn);
  if (!X) return out;
  out.X = *X;
  for (const auto& o : obs) {
    const Vec3 p = o.pose.apply(*X);
    if (!(p.z() > 1e-12 * p.norm())) {
      out.status = TriangulationStatus::kBehindCamera;
      return out;
    }
    out.max_error_px =
        std::max(out.max_error_px, (o.camera.project(p.hnormalized()) - o.pixel).norm());
  }
  for (size_t i = 0; i < obs.size(); ++i)
    for (size_t j = i + 1; j < obs.size(); ++j)
      out.angle_deg =
          std::max(out.angle_deg,
                   triangulationAngle(poses[i].center(), poses[j].center(), *X) * 180.0 / M_PI);
  out.status = out.max_error_px > options.max_error_px ? TriangulationStatus::kLargeError
               : out.angle_deg < options.min_angle_deg ? TriangulationStatus::kSmallAngle
                                                       : TriangulationStatus::kOk;
  return out;
}

TEST(TriangulationBatch, EqualsThePerTrackCallBitForBit) {
  const auto c = testing::makeTriangulationCase(3000, 7);
  TriangulationOptions o;
  o.min_angle_deg = 1.0;
  const auto batched = triangulateBatch(c.batch, o);
  ASSERT_EQ(static_cast<int>(batched.size()), c.batch.numTracks());
  int counts[6] = {};
  for (int t = 0; t < c.batch.numTracks(); ++t) {
    expectIdentical(batched[t], triangulateTrack(observations(c, t), o), t);
    ++counts[static_cast<int>(batched[t].status)];
  }
  // Every check was exercised.
  for (auto s : {TriangulationStatus::kOk, TriangulationStatus::kDegenerate,
                 TriangulationStatus::kBehindCamera, TriangulationStatus::kLargeError,
                 TriangulationStatus::kSmallAngle})
    EXPECT_GT(counts[static_cast<int>(s)], 50) << toString(s);
}

TEST(TriangulationBatch, FindsTheTruthAndRefusesWhatItShould) {
  const auto c = testing::makeTriangulationCase(2000, 11);
  TriangulationOptions o;
  o.min_angle_deg = 1.0;
  const auto r = triangulateBatch(c.batch, o);
  // Per kind: tracks, and those with the expected outcome.
  int count[5] = {}, expected[5] = {};
  for (int t = 0; t < c.batch.numTracks(); ++t) {
    const int k = c.kind[t];
    ++count[k];
    switch (k) {
      case 0:
        // 0.5 px of noise at 4-8 units with >= 1 degree of parallax: within 0.3 units.
        expected[k] += r[t].ok() && (r[t].X - c.truth[t]).norm() < 0.3;
        break;
      case 1:  // a view 30 px off (along an epipolar line it can pass: counted, not required)
        expected[k] += !r[t].ok();
        break;
      case 2:
        expected[k] += r[t].status == TriangulationStatus::kBehindCamera;
        break;
      case 3:
        expected[k] += r[t].status == TriangulationStatus::kSmallAngle;
        break;
      case 4:
        EXPECT_EQ(r[t].status, TriangulationStatus::kDegenerate) << t;
        expected[k] += r[t].status == TriangulationStatus::kDegenerate;
        break;
    }
    // A point that passed has its reprojection error within the bound in every view.
    if (r[t].ok()) {
      EXPECT_LE(r[t].max_error_px, o.max_error_px);
    }
  }
  for (int k = 0; k < 5; ++k) {
    EXPECT_GT(count[k], 100) << k;
    EXPECT_GE(expected[k], count[k] * 9 / 10)
        << "kind " << k << ": " << expected[k] << " of " << count[k];
  }
}

TEST(TriangulationBatch, EqualsTheEigenFormBitForBit) {
  const auto c = testing::makeTriangulationCase(3000, 13);
  TriangulationOptions o;
  o.min_angle_deg = 1.0;
  const auto r = triangulateBatch(c.batch, o);
  int two = 0, many = 0;
  for (int t = 0; t < c.batch.numTracks(); ++t) {
    const auto obs = observations(c, t);
    expectIdentical(r[t], eigenTrack(obs, o), t);
    ++(obs.size() == 2 ? two : many);
  }
  EXPECT_GT(two, 400);
  EXPECT_GT(many, 1500);
}

// The device's eigensolver (Jacobi) against the host's (Eigen) on the normal matrices of the
// multi-view tracks: the same null vector up to sign, within rounding.
TEST(TriangulationBatch, JacobiNullVectorEqualsEigensToRounding) {
  const auto c = testing::makeTriangulationCase(2000, 19);
  int tested = 0;
  for (int t = 0; t < c.batch.numTracks(); ++t) {
    const int b = c.batch.track_begin[t], n = c.batch.track_begin[t + 1] - b;
    if (n < 3 || c.kind[t] == 4) continue;
    double A[4][4] = {};
    for (int i = 0; i < n; ++i) {
      const double* v = c.batch.views.data() + tri::kViewStride * c.batch.view_of[b + i];
      const double xn[2] = {(c.batch.pixels[2 * (b + i)] - v[14]) / v[12],
                            (c.batch.pixels[2 * (b + i) + 1] - v[15]) / v[13]};
      for (int row = 0; row < 2; ++row) {
        double r[4];
        for (int k = 0; k < 3; ++k) r[k] = xn[row] * v[6 + k] - v[3 * row + k];
        r[3] = xn[row] * v[11] - v[9 + row];
        for (int p = 0; p < 4; ++p)
          for (int q = 0; q < 4; ++q) A[p][q] += r[p] * r[q];
      }
    }
    double h1[4], h2[4], J[4][4];
    std::memcpy(J, A, sizeof J);
    tri::smallestEigenvectorHost(A, h1);
    tri::smallestEigenvectorJacobi(J, h2);
    const double sign = h1[0] * h2[0] + h1[1] * h2[1] + h1[2] * h2[2] + h1[3] * h2[3] < 0 ? -1 : 1;
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(h2[k] * sign, h1[k], 1e-9) << t;
    ++tested;
  }
  EXPECT_GT(tested, 1000);
}

TEST(TriangulationBatch, ThreadsDoNotChangeTheResult) {
  const auto c = testing::makeTriangulationCase(1500, 17);
#if defined(_OPENMP)
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto a = triangulateBatch(c.batch);
  omp_set_num_threads(std::max(2, threads));
  const auto b = triangulateBatch(c.batch);
  omp_set_num_threads(threads);
#else
  const auto a = triangulateBatch(c.batch);
  const auto b = triangulateBatch(c.batch);
#endif
  for (int t = 0; t < c.batch.numTracks(); ++t) expectIdentical(a[t], b[t], t);
}

TEST(TriangulationBatch, RejectsABatchNamingAMissingView) {
  TriangulationBatch b;
  b.addView(Pose{}, Pinhole{500, 500, 0, 0});
  const int views[2] = {0, 1};
  const Vec2 px[2] = {Vec2(1, 2), Vec2(3, 4)};
  b.addTrack(views, px, 2);
  EXPECT_THROW(triangulateBatch(b), Error);
  EXPECT_TRUE(triangulateBatch(TriangulationBatch{}).empty());
}

}  // namespace
}  // namespace vidmap::geometry
