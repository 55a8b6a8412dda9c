// The push rate of the KLT CPU backend (pyramid + forward + backward + check + read of the
// records) at 640 x 360 and 1280 x 720 with 1024 tracks, and OpenCV calcOpticalFlowPyrLK
// forward and backward on the same frames, points and threads in the same run. Prints JSON.
//
//   klt_cpu_bench [--reps N] [--tracks N]
//
// OpenCV runs with the same window, levels and iteration bound. Its criteria epsilon bounds
// the squared step, so it gets epsilonPx^2 for the same stop rule. It is timed two ways: with
// images (it builds both pyramids in each call, the plain use) and with a pyramid built once
// per frame (buildOpticalFlowPyramid, the fair twin of a push).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "vidmap/core/parallel.h"
#include "vidmap/klt/cpu_backend.h"
#include "vidmap/klt/tracker.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

#if defined(VIDMAP_HAVE_OPENCV)
#include <opencv2/core.hpp>
#include <opencv2/video/tracking.hpp>
#endif

namespace {

using namespace vidmap;
using Clock = std::chrono::steady_clock;

// CPU time of the process (all threads), in ms: on a shared machine the wall time of a run
// depends on the other processes, its CPU time much less.
double cpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Accuracy {
  int kept = 0;
  double medianError = 0;
};

template <class Get>
Accuracy accuracy(int n, const synth::Warp2d& w, Get get) {
  Accuracy a;
  std::vector<double> e;
  for (int i = 0; i < n; ++i) {
    float sx, sy, x, y;
    if (!get(i, &sx, &sy, &x, &y)) continue;
    double tx, ty;
    w.apply(sx, sy, &tx, &ty);
    e.push_back(std::hypot(x - tx, y - ty));
  }
  a.kept = static_cast<int>(e.size());
  a.medianError = median(e);
  return a;
}

void runCase(int width, int height, int tracks, int reps, bool last) {
  synth::TexturedSceneOptions so;
  so.width = width;
  so.height = height;
  const GrayImage I = synth::makeTexturedScene(so);
  const double s = width / 640.0;
  const synth::Warp2d warp = synth::translation(3.7 * s, -2.1 * s);
  const GrayImage J = synth::warpImage(I, warp);
  klt::Options o = klt::optionsFor(width);
  o.capacity = tracks;

  // The points: the tracker's own selection on I (up to `tracks`), timed with the defaults;
  // at 1280 px the default spacing (16 px) leaves fewer than 1024 points in this scene, so
  // the points come from a selection at 8 px spacing.
  klt::CpuBackend b(width, height, o);
  b.uploadGray(0, I.view());
  b.buildPyramid(0);
  const auto t0 = Clock::now();
  b.eigenMap(0);
  b.select(0);
  const double selectMs = ms(t0, Clock::now());
  klt::Options dense = o;
  dense.minDistancePx = 8;
  klt::CpuBackend sel(width, height, dense);
  sel.uploadGray(0, I.view());
  sel.buildPyramid(0);
  sel.eigenMap(0);
  const int n = sel.select(0).appended;
  std::vector<klt::TrackRecord> seeds(n), checked(n);
  sel.readRecords(klt::RecordBuffer::kSeeds, 0, n, seeds.data());
  b.uploadSeeds(seeds.data(), n);

  // vidmap: a push of the current frame against the resident previous one.
  std::vector<double> push, pyr, trk, cpu;
  for (int r = 0; r < reps; ++r) {
    const double c0 = cpuMs();
    const auto a = Clock::now();
    b.uploadGray(1, J.view());
    b.buildPyramid(1);
    const auto p = Clock::now();
    b.track(klt::Direction::kForward, 0, 1, 0, n);
    b.track(klt::Direction::kBackward, 0, 1, 0, n);
    const auto t = Clock::now();
    b.check(0, n);
    b.readRecords(klt::RecordBuffer::kChecked, 0, n, checked.data());
    const auto e = Clock::now();
    push.push_back(ms(a, e));
    cpu.push_back(cpuMs() - c0);
    pyr.push_back(ms(a, p));
    trk.push_back(ms(p, t));
  }
  const Accuracy va = accuracy(n, warp, [&](int i, float* sx, float* sy, float* x, float* y) {
    *sx = seeds[i].x, *sy = seeds[i].y, *x = checked[i].x, *y = checked[i].y;
    return klt::statusAlive(checked[i].status);
  });
  const double vPush = median(push);
  int ends[klt::kEndReasonCount] = {};
  for (const auto& c : checked) ++ends[klt::statusReason(c.status)];
  std::string endText;
  for (int r = 1; r < klt::kEndReasonCount; ++r)
    if (ends[r])
      endText += (endText.empty() ? "" : ", ") + std::string("\"") + klt::endReasonName(r) +
                 "\": " + std::to_string(ends[r]);

  std::printf(
      "    {\"width\": %d, \"height\": %d, \"tracks\": %d, \"levels\": %d, \"window\": %d,\n",
      width, height, n, o.levels, 2 * o.halfWindow + 1);
  std::printf(
      "     \"vidmap\": {\"push_ms\": %.3f, \"pyramid_ms\": %.3f, \"track_fwd_bwd_ms\": %.3f, "
      "\"pushes_per_s\": %.1f, \"track_steps_per_s\": %.0f, \"push_cpu_ms\": %.3f, "
      "\"select_ms\": %.3f, \"kept\": %d, \"ends\": {%s}, \"median_error_px\": %.4f}",
      vPush, median(pyr), median(trk), 1000.0 / vPush, n * 1000.0 / vPush, median(cpu), selectMs,
      va.kept, endText.c_str(), va.medianError);
#if defined(VIDMAP_HAVE_OPENCV)
  cv::Mat I8(height, width, CV_8U), J8(height, width, CV_8U);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      I8.at<std::uint8_t>(y, x) = cv::saturate_cast<std::uint8_t>(std::lround(I(x, y) * 255));
      J8.at<std::uint8_t>(y, x) = cv::saturate_cast<std::uint8_t>(std::lround(J(x, y) * 255));
    }
  std::vector<cv::Point2f> pts(n), fwd, bwd;
  for (int i = 0; i < n; ++i) pts[i] = {seeds[i].x, seeds[i].y};
  const cv::Size win(2 * o.halfWindow + 1, 2 * o.halfWindow + 1);
  const int maxLevel = o.levels - 1;
  const cv::TermCriteria crit(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, o.maxIterations,
                              double(o.epsilonPx) * o.epsilonPx);
  std::vector<std::uint8_t> st1, st2;
  std::vector<float> err;
  std::vector<cv::Mat> prevPyr, curPyr;
  cv::buildOpticalFlowPyramid(I8, prevPyr, win, maxLevel);
  std::vector<double> cvPyr, cvImg, cvCpu;
  for (int r = 0; r < reps; ++r) {
    const double c0 = cpuMs();
    const auto a = Clock::now();
    cv::buildOpticalFlowPyramid(J8, curPyr, win, maxLevel);
    cv::calcOpticalFlowPyrLK(prevPyr, curPyr, pts, fwd, st1, err, win, maxLevel, crit);
    cv::calcOpticalFlowPyrLK(curPyr, prevPyr, fwd, bwd, st2, err, win, maxLevel, crit);
    cvPyr.push_back(ms(a, Clock::now()));
    cvCpu.push_back(cpuMs() - c0);
    const auto c = Clock::now();
    cv::calcOpticalFlowPyrLK(I8, J8, pts, fwd, st1, err, win, maxLevel, crit);
    cv::calcOpticalFlowPyrLK(J8, I8, fwd, bwd, st2, err, win, maxLevel, crit);
    cvImg.push_back(ms(c, Clock::now()));
  }
  const Accuracy ca = accuracy(n, warp, [&](int i, float* sx, float* sy, float* x, float* y) {
    *sx = pts[i].x, *sy = pts[i].y, *x = fwd[i].x, *y = fwd[i].y;
    return st1[i] && st2[i] &&
           std::hypot(bwd[i].x - pts[i].x, bwd[i].y - pts[i].y) <= o.fbThresholdPx;
  });
  const double cPush = median(cvPyr);
  std::printf(
      ",\n     \"opencv\": {\"push_ms\": %.3f, \"push_images_ms\": %.3f, \"pushes_per_s\": %.1f, "
      "\"push_cpu_ms\": %.3f, \"kept_with_fb\": %d, \"median_error_px\": %.4f},\n",
      cPush, median(cvImg), 1000.0 / cPush, median(cvCpu), ca.kept, ca.medianError);
  std::printf("     \"vidmap_over_opencv\": {\"wall\": %.2f, \"cpu\": %.2f}}%s\n", cPush / vPush,
              median(cvCpu) / median(cpu), last ? "" : ",");
#else
  std::printf(",\n     \"opencv\": \"not built (no OpenCV)\"}%s\n", last ? "" : ",");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15, tracks = 1024;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--tracks")) tracks = std::clamp(std::atoi(argv[i + 1]), 1, 8192);
  }
#if defined(VIDMAP_HAVE_OPENCV)
  cv::setNumThreads(vidmap::maxThreads());
#endif
  std::printf("{\"bench\": \"klt_cpu\", \"threads\": %d, \"reps\": %d,\n", vidmap::maxThreads(),
              reps);
#if defined(VIDMAP_HAVE_OPENCV)
  std::printf(" \"opencv_version\": \"%s\", \"opencv_threads\": %d,\n", CV_VERSION,
              cv::getNumThreads());
#endif
  std::printf(" \"cases\": [\n");
  runCase(640, 360, tracks, reps, false);
  runCase(1280, 720, tracks, reps, true);
  std::printf(" ]}\n");
  return 0;
}
