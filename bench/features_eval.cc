// Quality of vidmap's SIFT and matcher on real data with ground truth, side by side with
// OpenCV's SIFT (same matcher, same rules): features per image, repeatability and match
// precision on graf1/graf3 (homography), and on Strecha fountain-P11 and Middlebury temple and
// dino pairs the fraction of plain and guided matches within 1 and 2 px (Sampson) of the
// ground-truth epipolar geometry; extraction time per image. JSON on stdout.
//
//   build/bench/features_eval
#include <cstdio>
#include <functional>
#include <string>

#include "features_common.h"
#include "vidmap/core/data_dir.h"
#include "vidmap/core/parallel.h"
#include "vidmap/features/matcher.h"
#include "vidmap/features/sift.h"
#include "vidmap/features/testing/datasets.h"
#include "vidmap/features/testing/load_image.h"
#include "vidmap/features/testing/metrics.h"

using namespace vidmap;
using namespace vidmap::features;
using namespace vidmap::features::testing;
namespace fs = std::filesystem;

namespace {

struct Detector {
  std::string name;
  std::function<Features(const GrayImage&)> run;
};

std::vector<Detector> detectors() {
  std::vector<Detector> d;
  d.push_back({"vidmap", [](const GrayImage& g) {
                 SiftOptions o;
                 o.backend = Backend::kCpu;
                 return Sift(o).extract(g).features;
               }});
  d.push_back({"vidmap_octave-1", [](const GrayImage& g) {
                 SiftOptions o;
                 o.backend = Backend::kCpu;
                 o.firstOctave = -1;
                 return Sift(o).extract(g).features;
               }});
#if VIDMAP_HAVE_OPENCV
  // OpenCV's defaults (contrastThreshold 0.04 = twice COLMAP's peak threshold, first octave
  // -1), 4096 features kept as ours.
  d.push_back({"opencv", [](const GrayImage& g) {
                 auto s = cv::SIFT::create(4096);
                 std::vector<cv::KeyPoint> k;
                 cv::Mat desc;
                 s->detectAndCompute(bench::toCv8(g), cv::noArray(), k, desc);
                 return bench::fromCv(k, desc, g.width(), g.height());
               }});
  // OpenCV with COLMAP's threshold: 0.02 / 3 on |D| is contrastThreshold 0.02.
  d.push_back({"opencv_ct0.02", [](const GrayImage& g) {
                 auto s = cv::SIFT::create(4096, 3, 0.02);
                 std::vector<cv::KeyPoint> k;
                 cv::Mat desc;
                 s->detectAndCompute(bench::toCv8(g), cv::noArray(), k, desc);
                 return bench::fromCv(k, desc, g.width(), g.height());
               }});
#endif
  return d;
}

Features timed(const Detector& d, const GrayImage& g, double* ms) {
  d.run(g);  // warm-up
  const double t0 = bench::nowMs();
  Features f = d.run(g);
  *ms = bench::nowMs() - t0;
  return f;
}

void grafPair(const std::vector<Detector>& dets, bool& first) {
  const fs::path dir = "/usr/share/doc/opencv-doc/examples/data";
  if (!fs::exists(dir / "graf3.png")) return;
  GrayImage a = loadGray(dir / "graf1.png"), b = loadGray(dir / "graf3.png");
  const auto H = readOpenCvMatrix(dir / "H1to3p.xml");
  for (const auto& d : dets) {
    double ta, tb;
    Features fa = timed(d, a, &ta), fb = timed(d, b, &tb);
    MatchOptions mo;
    mo.backend = Backend::kCpu;
    auto m = Matcher(mo).match(fa, fb);
    const auto rep = repeatability(fa, fb, H, 2.0, 1.5);
    std::printf(
        "%s    {\"pair\": \"graf1-graf3\", \"detector\": \"%s\", \"features\": [%zu, %zu], "
        "\"ms\": [%.1f, %.1f], \"repeatability\": %.3f, \"matches\": %zu, "
        "\"precision_3px\": %.3f, \"correct_3px\": %.0f}",
        first ? "" : ",\n", d.name.c_str(), fa.size(), fb.size(), ta, tb, rep.rate, m.size(),
        matchPrecision(m, fa, fb, H, 3.0), matchPrecision(m, fa, fb, H, 3.0) * m.size());
    first = false;
  }
}

void calibratedPair(const std::vector<Detector>& dets, const std::string& name, const GrayImage& a,
                    const GrayImage& b, const Camera& ca, const Camera& cb, bool& first) {
  const auto F = fundamentalFromCameras(ca, cb);
  const auto guide = EpipolarGuide::fromEssential(essentialFromCameras(ca, cb), ca.K, cb.K, 4.0);
  for (const auto& d : dets) {
    double ta, tb;
    Features fa = timed(d, a, &ta), fb = timed(d, b, &tb);
    MatchOptions mo;
    mo.backend = Backend::kCpu;
    Matcher matcher(mo);
    auto plain = matcher.match(fa, fb);
    auto guided = matcher.matchGuided(fa, fb, guide);
    const auto dp = sampsonDistances(plain, fa, fb, F), dg = sampsonDistances(guided, fa, fb, F);
    std::printf(
        "%s    {\"pair\": \"%s\", \"detector\": \"%s\", \"features\": [%zu, %zu], "
        "\"ms\": [%.1f, %.1f], \"plain\": %zu, \"plain_sampson_1px\": %.3f, "
        "\"plain_sampson_2px\": %.3f, \"plain_median_px\": %.3f, \"guided_4px\": %zu, "
        "\"guided_sampson_1px\": %.3f, \"guided_sampson_2px\": %.3f}",
        first ? "" : ",\n", name.c_str(), d.name.c_str(), fa.size(), fb.size(), ta, tb,
        plain.size(), fractionBelow(dp, 1), fractionBelow(dp, 2), median(dp), guided.size(),
        fractionBelow(dg, 1), fractionBelow(dg, 2));
    first = false;
  }
}

}  // namespace

int main() {
#if VIDMAP_HAVE_OPENCV
  cv::setNumThreads(maxThreads());
#endif
  const auto dets = detectors();
  std::printf("{\n  \"benchmark\": \"features_eval\",\n  \"threads\": %d,\n  \"results\": [\n",
              maxThreads());
  bool first = true;
  grafPair(dets, first);
  if (auto dir = dataPath("strecha/fountain-P11")) {
    auto img = [&](const std::string& n) { return loadGray(*dir / "images" / (n + ".jpg"), 2); };
    auto cam = [&](const std::string& n) {
      return scaleCamera(readStrechaCamera(*dir / "gt_dense_cameras" / (n + ".jpg.camera")), 0.5);
    };
    for (auto [x, y] :
         {std::pair{"0004", "0005"}, std::pair{"0002", "0005"}, std::pair{"0000", "0010"}})
      calibratedPair(dets, std::string("fountain ") + x + "-" + y + " (1536x1024)", img(x), img(y),
                     cam(x), cam(y), first);
  }
  for (const char* set : {"templeSparseRing/templeSR", "dinoSparseRing/dinoSR"}) {
    auto base = dataPath(std::string("middlebury-mview/") + fs::path(set).parent_path().string());
    if (!base) continue;
    const std::string stem = fs::path(set).filename().string();
    auto cams = readMiddleburyCameras(*base / (stem + "_par.txt"));
    for (auto [x, y] : {std::pair{"0001", "0002"}, std::pair{"0005", "0006"}}) {
      const std::string na = stem + x + ".png", nb = stem + y + ".png";
      calibratedPair(dets, stem + " " + x + "-" + y, loadGray(*base / na), loadGray(*base / nb),
                     cams.at(na), cams.at(nb), first);
    }
  }
  std::printf("\n  ]\n}\n");
  return 0;
}
