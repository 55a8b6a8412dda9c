// The minimal homography of a RANSAC sample: the closed form (homography4pt) against the
// normalised DLT on the same four points (homographyDlt, a 9 x 9 eigendecomposition) and, when
// OpenCV is present, cv::getPerspectiveTransform (an 8 x 8 linear solve), on the same random
// samples. Time: the median over repeats of the calling thread's CPU time per call, so other
// processes on a shared machine do not distort the ratio. Also the largest transfer error of
// each over the samples (pixels), a check that the three agree.
// Usage: homography_bench [samples] [repeats]; prints JSON.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

#include "vidmap/geometry/homography_4pt.h"
#ifdef VIDMAP_BENCH_OPENCV
#include <opencv2/imgproc.hpp>
#endif

using namespace vidmap::geometry;

namespace {

double threadNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct Sample {
  Vec2 a[4], b[4];
};

double transferError(const Mat3& H, const Sample& s) {
  double e = 0;
  for (int i = 0; i < 4; ++i)
    e = std::max(e, ((H * s.a[i].homogeneous()).hnormalized() - s.b[i]).norm());
  return e;
}

// Median over repeats of the ns per call of f over all samples; the worst transfer error.
template <class F>
void run(const char* name, const std::vector<Sample>& samples, int repeats, F&& f, bool last) {
  std::vector<double> ns;
  double worst = 0;
  int solved = 0;
  for (int r = 0; r < repeats; ++r) {
    solved = 0;
    const double t0 = threadNs();
    for (const Sample& s : samples) {
      Mat3 H;
      if (f(s, &H)) {
        ++solved;
        if (r == 0) worst = std::max(worst, transferError(H, s));
      }
    }
    ns.push_back((threadNs() - t0) / samples.size());
  }
  std::nth_element(ns.begin(), ns.begin() + ns.size() / 2, ns.end());
  std::printf(
      "    {\"solver\": \"%s\", \"ns_per_call\": %.1f, \"solved\": %d, \"max_transfer_px\": "
      "%.3g}%s\n",
      name, ns[ns.size() / 2], solved, worst, last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 9;
  if (n < 1 || repeats < 1) {
    std::fprintf(stderr, "homography_bench: samples and repeats must be positive\n");
    return 2;
  }
  // Four random 640 x 480 points and their images under a random H near the identity, plus
  // 0.5 px of noise: any four points fix an H exactly, so every solver reproduces them.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> x(0, 640), y(0, 480), d(-0.05, 0.05);
  std::normal_distribution<double> noise(0, 0.5);
  std::vector<Sample> samples(n);
  for (Sample& s : samples) {
    Mat3 H;
    H << 1 + d(rng), d(rng), 300 * d(rng), d(rng), 1 + d(rng), 300 * d(rng), 1e-3 * d(rng),
        1e-3 * d(rng), 1;
    for (int i = 0; i < 4; ++i) {
      s.a[i] = Vec2(x(rng), y(rng));
      s.b[i] = (H * s.a[i].homogeneous()).hnormalized() + Vec2(noise(rng), noise(rng));
    }
  }
  std::printf("{\"samples\": %d, \"repeats\": %d, \"solvers\": [\n", n, repeats);
  run(
      "homography4pt", samples, repeats,
      [](const Sample& s, Mat3* H) { return homography4pt(s.a, s.b, H); }, false);
#ifdef VIDMAP_BENCH_OPENCV
  run(
      "homographyDlt", samples, repeats,
      [](const Sample& s, Mat3* H) { return homographyDlt(s.a, s.b, 4, H); }, false);
  run(
      "cv::getPerspectiveTransform", samples, repeats,
      [](const Sample& s, Mat3* H) {
        cv::Point2f a[4], b[4];
        for (int i = 0; i < 4; ++i) {
          a[i] = cv::Point2f(static_cast<float>(s.a[i].x()), static_cast<float>(s.a[i].y()));
          b[i] = cv::Point2f(static_cast<float>(s.b[i].x()), static_cast<float>(s.b[i].y()));
        }
        const cv::Mat M = cv::getPerspectiveTransform(a, b, cv::DECOMP_LU);
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) (*H)(r, c) = M.at<double>(r, c);
        return true;
      },
      true);
#else
  run(
      "homographyDlt", samples, repeats,
      [](const Sample& s, Mat3* H) { return homographyDlt(s.a, s.b, 4, H); }, true);
#endif
  std::printf("]}\n");
  return 0;
}
