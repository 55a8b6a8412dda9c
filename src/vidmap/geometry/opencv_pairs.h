// Real image pairs with ground-truth cameras, matched by OpenCV SIFT, for the geometry tests and
// benchmarks only (OpenCV is a peer, never a dependency of the library). Data are read in place
// from ../shared/data: strecha/fountain-P11 (3072x2048, decoded at 1/4 by the JPEG decoder) and
// middlebury-mview (640x480). Poses are world to camera.
#pragma once

#include <filesystem>
#include <fstream>
#include <opencv2/features2d.hpp>
#include <opencv2/imgcodecs.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "vidmap/core/data_dir.h"
#include "vidmap/geometry/types.h"

namespace vidmap::geometry::testing {

struct RealView {
  cv::Mat gray;
  Pinhole cam;
  Pose pose;
};

struct RealPair {
  std::string name;
  RealView a, b;
  Vec2List pts1, pts2;  // SIFT matches, pixels
  Pose relative() const {
    const Mat3 R = b.pose.R * a.pose.R.transpose();
    return {R, b.pose.t - R * a.pose.t};
  }
};

// fountain-P11 view i: K, R (camera to world) and centre C; decoded at 1/4 resolution.
inline std::optional<RealView> loadFountainView(int i) {
  const auto dir = dataPath("strecha/fountain-P11");
  if (!dir) return std::nullopt;
  char name[16];
  std::snprintf(name, sizeof(name), "%04d.jpg", i);
  std::ifstream f(*dir / "gt_dense_cameras" / (std::string(name) + ".camera"));
  if (!f) return std::nullopt;
  Mat3 K, Rcw;
  Vec3 C, zeros;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) f >> K(r, c);
  f >> zeros(0) >> zeros(1) >> zeros(2);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) f >> Rcw(r, c);
  f >> C(0) >> C(1) >> C(2);
  RealView v;
  v.gray = cv::imread((*dir / "images" / name).string(), cv::IMREAD_REDUCED_GRAYSCALE_4);
  if (v.gray.empty()) return std::nullopt;
  // Pixel x of the full image is x' = (x + 0.5) / 4 - 0.5 in the reduced one.
  const double s = 0.25;
  v.cam = {K(0, 0) * s, K(1, 1) * s, (K(0, 2) + 0.5) * s - 0.5, (K(1, 2) + 0.5) * s - 0.5};
  v.pose.R = Rcw.transpose();
  v.pose.t = -Rcw.transpose() * C;
  return v;
}

// middlebury-mview view (1-based) of "templeSparseRing" or "dinoSparseRing": P = K [R | t].
inline std::optional<RealView> loadMiddleburyView(const std::string& set, int i) {
  const auto dir = dataPath("middlebury-mview/" + set);
  if (!dir) return std::nullopt;
  const std::string prefix = set.substr(0, set.find("SparseRing"));
  const std::string tag = prefix == "temple" ? "templeSR" : "dinoSR";
  std::ifstream f(*dir / (tag + "_par.txt"));
  if (!f) return std::nullopt;
  char want[32];
  std::snprintf(want, sizeof(want), "%s%04d.png", tag.c_str(), i);
  std::string line;
  std::getline(f, line);  // the count
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string img;
    in >> img;
    if (img != want) continue;
    Mat3 K, R;
    Vec3 t;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) in >> K(r, c);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) in >> R(r, c);
    in >> t(0) >> t(1) >> t(2);
    RealView v;
    v.gray = cv::imread((*dir / img).string(), cv::IMREAD_GRAYSCALE);
    if (v.gray.empty()) return std::nullopt;
    v.cam = {K(0, 0), K(1, 1), K(0, 2), K(1, 2)};
    v.pose = {R, t};
    return v;
  }
  return std::nullopt;
}

// SIFT, Lowe's ratio 0.8 and a mutual nearest-neighbour check.
inline void siftMatches(const cv::Mat& g1, const cv::Mat& g2, Vec2List* p1, Vec2List* p2,
                        int max_features = 4000) {
  auto sift = cv::SIFT::create(max_features);
  std::vector<cv::KeyPoint> k1, k2;
  cv::Mat d1, d2;
  sift->detectAndCompute(g1, cv::noArray(), k1, d1);
  sift->detectAndCompute(g2, cv::noArray(), k2, d2);
  p1->clear();
  p2->clear();
  if (d1.empty() || d2.empty()) return;
  cv::BFMatcher bf(cv::NORM_L2);
  std::vector<std::vector<cv::DMatch>> m12, m21;
  bf.knnMatch(d1, d2, m12, 2);
  bf.knnMatch(d2, d1, m21, 1);
  for (const auto& m : m12) {
    if (m.size() < 2 || m[0].distance > 0.8f * m[1].distance) continue;
    if (m21[m[0].trainIdx].empty() || m21[m[0].trainIdx][0].trainIdx != m[0].queryIdx) continue;
    p1->push_back({k1[m[0].queryIdx].pt.x, k1[m[0].queryIdx].pt.y});
    p2->push_back({k2[m[0].trainIdx].pt.x, k2[m[0].trainIdx].pt.y});
  }
}

// "fountain i j" or "temple i j" / "dino i j"; nullopt when the data are absent.
inline std::optional<RealPair> loadPair(const std::string& set, int i, int j) {
  std::optional<RealView> a, b;
  if (set == "fountain") {
    a = loadFountainView(i);
    b = loadFountainView(j);
  } else {
    a = loadMiddleburyView(set + "SparseRing", i);
    b = loadMiddleburyView(set + "SparseRing", j);
  }
  if (!a || !b) return std::nullopt;
  RealPair p;
  p.name = set + " " + std::to_string(i) + "-" + std::to_string(j);
  p.a = *a;
  p.b = *b;
  siftMatches(p.a.gray, p.b.gray, &p.pts1, &p.pts2);
  return p;
}

}  // namespace vidmap::geometry::testing
