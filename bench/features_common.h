// Shared by the features benchmarks: OpenCV's SIFT as the peer, converted to vidmap's
// Features (descriptors L2-normalised, OpenCV's native form), and small JSON helpers.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/features/features.h"

#if VIDMAP_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/features2d.hpp>
#endif

namespace vidmap::bench {

inline double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#if VIDMAP_HAVE_OPENCV
// The 8-bit image OpenCV's SIFT reads (it works on 8-bit input internally as float).
inline cv::Mat toCv8(const GrayImage& g) {
  cv::Mat m(g.height(), g.width(), CV_8U);
  for (int y = 0; y < g.height(); ++y)
    for (int x = 0; x < g.width(); ++x)
      m.at<unsigned char>(y, x) =
          static_cast<unsigned char>(std::clamp(g(x, y) * 255.0f + 0.5f, 0.0f, 255.0f));
  return m;
}

// OpenCV keypoint size is the diameter 2 * sigma * (something): SIFT sets size = 2 sigma.
inline features::Features fromCv(const std::vector<cv::KeyPoint>& kps, const cv::Mat& desc, int w,
                                 int h) {
  features::Features f;
  f.width = w;
  f.height = h;
  f.keypoints.resize(kps.size());
  f.descriptors.resize(kps.size() * 128);
  for (size_t i = 0; i < kps.size(); ++i) {
    auto& k = f.keypoints[i];
    k.x = kps[i].pt.x;
    k.y = kps[i].pt.y;
    k.scale = kps[i].size / 2;
    k.orientation = static_cast<float>((360.0 - kps[i].angle) * M_PI / 180.0);
    k.response = kps[i].response;
    double n = 0;
    for (int j = 0; j < 128; ++j) n += double(desc.at<float>(i, j)) * desc.at<float>(i, j);
    n = n > 0 ? 1 / std::sqrt(n) : 0;
    for (int j = 0; j < 128; ++j)
      f.descriptors[i * 128 + j] = static_cast<float>(desc.at<float>(i, j) * n);
  }
  return f;
}
#endif

}  // namespace vidmap::bench
