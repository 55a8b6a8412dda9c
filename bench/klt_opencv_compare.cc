// Design 7.3: the same points of a frame pair tracked by vidmap's KLT (CPU backend, defaults
// for the frame width) and by OpenCV calcOpticalFlowPyrLK (21 x 21, maxLevel 3, 30
// iterations, epsilon 0.01), on the design's synthetic scene (known warp) and on the five
// Middlebury flow pairs (ground truth flow). Prints, per pair: the fraction each keeps, the
// median and 95th percentile distance between the two flows on the points both keep
// (acceptance: median < 0.1 px), and the endpoint error against the truth for each, side by
// side. The points are vidmap's selection on the first frame (up to 1024).
//
//   klt_opencv_compare [--data DIR] [--json FILE]
//
// DIR defaults to $VIDMAP_DATA or ../shared/data beside the checkout; Middlebury is skipped
// when absent. OpenCV keeps a point when its status is 1 ("kept"); "kept+fb" adds the same
// forward-backward bound as vidmap (fbThresholdPx) on an OpenCV backward pass.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/video/tracking.hpp>

#include "vidmap/core/data_dir.h"
#include "vidmap/klt/cpu_backend.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace {

using namespace vidmap;

struct Stats {
  int count = 0;
  double median = 0, p95 = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  s.count = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = v[v.size() / 2];
  s.p95 = v[std::min(v.size() - 1, static_cast<std::size_t>(std::ceil(0.95 * v.size())) - 1)];
  return s;
}

// The truth at a point: a flow vector, or none (unknown).
using Truth = std::function<bool(float x, float y, double* u, double* v)>;

struct PairResult {
  std::string name;
  int points = 0;
  int vidmapKept = 0, opencvKept = 0, opencvKeptFb = 0;
  Stats between;                       // |vidmap - OpenCV| on points both keep
  Stats epeVidmap, epeOpencv;          // against the truth, on the points each keeps
  Stats epeVidmapBoth, epeOpencvBoth;  // on the points both keep
};

cv::Mat to8(const GrayImage& g) {
  cv::Mat m(g.height(), g.width(), CV_8U);
  for (int y = 0; y < g.height(); ++y)
    for (int x = 0; x < g.width(); ++x)
      m.at<std::uint8_t>(y, x) = cv::saturate_cast<std::uint8_t>(std::lround(g(x, y) * 255.0f));
  return m;
}

PairResult comparePair(const std::string& name, const GrayImage& I, const GrayImage& J,
                       const Truth& truth) {
  PairResult r;
  r.name = name;
  const int w = I.width(), h = I.height();
  const klt::Options o = klt::optionsFor(w);
  klt::CpuBackend b(w, h, o);
  b.uploadGray(0, I.view());
  b.uploadGray(1, J.view());
  b.buildPyramid(0);
  b.buildPyramid(1);
  b.eigenMap(0);
  const int n = b.select(0).appended;
  std::vector<klt::TrackRecord> seeds(n), checked(n);
  b.readRecords(klt::RecordBuffer::kSeeds, 0, n, seeds.data());
  b.track(klt::Direction::kForward, 0, 1, 0, n);
  b.track(klt::Direction::kBackward, 0, 1, 0, n);
  b.check(0, n);
  b.readRecords(klt::RecordBuffer::kChecked, 0, n, checked.data());

  const cv::Mat I8 = to8(I), J8 = to8(J);
  std::vector<cv::Point2f> pts(n), fwd, bwd;
  for (int i = 0; i < n; ++i) pts[i] = {seeds[i].x, seeds[i].y};
  std::vector<std::uint8_t> st, stb;
  std::vector<float> err;
  const cv::TermCriteria crit(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 30, 0.01);
  cv::calcOpticalFlowPyrLK(I8, J8, pts, fwd, st, err, cv::Size(21, 21), 3, crit);
  cv::calcOpticalFlowPyrLK(J8, I8, fwd, bwd, stb, err, cv::Size(21, 21), 3, crit);

  std::vector<double> between, ev, eo, evb, eob;
  for (int i = 0; i < n; ++i) {
    double u = 0, v = 0;
    if (!truth(seeds[i].x, seeds[i].y, &u, &v)) continue;  // unknown truth: not counted
    ++r.points;
    const bool vk = klt::statusAlive(checked[i].status);
    const bool ok = st[i] != 0;
    const bool okFb =
        ok && stb[i] && std::hypot(bwd[i].x - pts[i].x, bwd[i].y - pts[i].y) <= o.fbThresholdPx;
    r.vidmapKept += vk;
    r.opencvKept += ok;
    r.opencvKeptFb += okFb;
    const double vx = checked[i].x - seeds[i].x, vy = checked[i].y - seeds[i].y;
    const double ox = fwd[i].x - pts[i].x, oy = fwd[i].y - pts[i].y;
    if (vk) ev.push_back(std::hypot(vx - u, vy - v));
    if (ok) eo.push_back(std::hypot(ox - u, oy - v));
    if (vk && ok) {
      between.push_back(std::hypot(vx - ox, vy - oy));
      evb.push_back(std::hypot(vx - u, vy - v));
      eob.push_back(std::hypot(ox - u, oy - v));
    }
  }
  r.between = stats(between);
  r.epeVidmap = stats(ev);
  r.epeOpencv = stats(eo);
  r.epeVidmapBoth = stats(evb);
  r.epeOpencvBoth = stats(eob);
  return r;
}

// Middlebury .flo (Baker et al. 2011): "PIEH" float tag, int32 width, height, then (u, v)
// float32 pairs; |u| or |v| > 1e9 is unknown. Read through OpenCV (the peer's own reader).
bool loadMiddlebury(const std::filesystem::path& root, const std::string& name, GrayImage* I,
                    GrayImage* J, cv::Mat* flow) {
  const auto f0 = root / "frames" / name / "frame10.png",
             f1 = root / "frames" / name / "frame11.png";
  const auto fl = root / "gt" / name / "flow10.flo";
  if (!std::filesystem::exists(f0) || !std::filesystem::exists(f1) || !std::filesystem::exists(fl))
    return false;
  auto gray = [](const std::filesystem::path& p) {
    const cv::Mat bgr = cv::imread(p.string(), cv::IMREAD_COLOR);
    GrayImage g(bgr.cols, bgr.rows);
    for (int y = 0; y < bgr.rows; ++y)
      for (int x = 0; x < bgr.cols; ++x) {
        const cv::Vec3b c = bgr.at<cv::Vec3b>(y, x);
        g(x, y) = klt::grayFromRgb(c[2], c[1], c[0]);
      }
    return g;
  };
  *I = gray(f0);
  *J = gray(f1);
  *flow = cv::readOpticalFlow(fl.string());
  return !I->empty() && !flow->empty() && flow->cols == I->width() && flow->rows == I->height();
}

void printRow(const PairResult& r) {
  std::printf(
      "%-14s %5d | kept vidmap %5.1f%%  opencv %5.1f%% (+fb %5.1f%%) | vidmap-opencv "
      "median %.3f p95 %.3f (n %d) | EPE vidmap %.3f/%.3f  opencv %.3f/%.3f  both: %.3f/%.3f vs "
      "%.3f/%.3f\n",
      r.name.c_str(), r.points, 100.0 * r.vidmapKept / std::max(1, r.points),
      100.0 * r.opencvKept / std::max(1, r.points), 100.0 * r.opencvKeptFb / std::max(1, r.points),
      r.between.median, r.between.p95, r.between.count, r.epeVidmap.median, r.epeVidmap.p95,
      r.epeOpencv.median, r.epeOpencv.p95, r.epeVidmapBoth.median, r.epeVidmapBoth.p95,
      r.epeOpencvBoth.median, r.epeOpencvBoth.p95);
}

std::string json(const PairResult& r) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"pair\": \"%s\", \"points\": %d, \"vidmap_kept\": %d, \"opencv_kept\": %d, "
                "\"opencv_kept_fb\": %d, \"between_median_px\": %.4f, \"between_p95_px\": %.4f, "
                "\"between_n\": %d, \"epe_vidmap_median\": %.4f, \"epe_vidmap_p95\": %.4f, "
                "\"epe_opencv_median\": %.4f, \"epe_opencv_p95\": %.4f, "
                "\"epe_both_vidmap_median\": %.4f, \"epe_both_opencv_median\": %.4f}",
                r.name.c_str(), r.points, r.vidmapKept, r.opencvKept, r.opencvKeptFb,
                r.between.median, r.between.p95, r.between.count, r.epeVidmap.median,
                r.epeVidmap.p95, r.epeOpencv.median, r.epeOpencv.p95, r.epeVidmapBoth.median,
                r.epeOpencvBoth.median);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path dataRoot;
  std::string jsonPath;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--data")) dataRoot = argv[i + 1];
    if (!std::strcmp(argv[i], "--json")) jsonPath = argv[i + 1];
  }
  if (dataRoot.empty()) {
    if (auto d = vidmap::dataDir()) dataRoot = *d;
  }
  std::vector<PairResult> results;

  // The design's scene with a known warp: a rotation of 2 degrees about the centre and a
  // shift of (2.3, -1.4) px.
  {
    const GrayImage I = synth::makeTexturedScene({});
    synth::Warp2d w = synth::rotationAboutCentre(2, 640, 360);
    w.tx += 2.3;
    w.ty -= 1.4;
    const GrayImage J = synth::warpImage(I, w);
    results.push_back(
        comparePair("synthetic-640", I, J, [&](float x, float y, double* u, double* v) {
          double tx, ty;
          w.apply(x, y, &tx, &ty);
          *u = tx - x;
          *v = ty - y;
          return true;
        }));
  }
  const auto mb = dataRoot / "middlebury-flow";
  if (std::filesystem::is_directory(mb)) {
    for (const char* name : {"Dimetrodon", "Grove2", "Hydrangea", "RubberWhale", "Venus"}) {
      GrayImage I, J;
      cv::Mat flow;
      if (!loadMiddlebury(mb, name, &I, &J, &flow)) {
        std::printf("%s: not found or unreadable, skipped\n", name);
        continue;
      }
      results.push_back(comparePair(name, I, J, [&](float x, float y, double* u, double* v) {
        const cv::Vec2f f = flow.at<cv::Vec2f>(static_cast<int>(y), static_cast<int>(x));
        if (!(std::fabs(f[0]) <= 1e9f && std::fabs(f[1]) <= 1e9f)) return false;
        *u = f[0];
        *v = f[1];
        return true;
      }));
    }
  } else {
    std::printf("middlebury-flow: not found under %s, skipped\n", dataRoot.string().c_str());
  }
  std::printf(
      "pair           points | kept | distance between the flows (both keep) | EPE median/p95 "
      "px\n");
  for (const auto& r : results) printRow(r);
  if (!jsonPath.empty()) {
    std::ofstream f(jsonPath);
    f << "{\"tool\": \"klt_opencv_compare\", \"opencv\": \"" << CV_VERSION << "\", \"pairs\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i)
      f << "  " << json(results[i]) << (i + 1 < results.size() ? ",\n" : "\n");
    f << "]}\n";
  }
  bool ok = true;
  for (const auto& r : results) ok = ok && r.between.count > 0 && r.between.median < 0.1;
  std::printf("acceptance (median distance < 0.1 px on points both keep, every pair): %s\n",
              ok ? "met" : "NOT met");
  return 0;
}
