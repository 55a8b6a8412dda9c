// synth_bench: how fast the synthetic 3D scenes render and write, and how usable their
// frames are for trackers. Prints one JSON object.
//   render: wall and CPU ms per 640x480 frame (anti-aliased and one ray per pixel), median
//           over the frames of each scene's orbit path, all threads;
//   sequence: wall seconds of writeSequence for 60 frames 640x480 (render + PNG + truth);
//   peer (OpenCV): on frames 0 and 1 of 60 of each scene and path, GFTT corners and SIFT
//           keypoints in frame 0, pyramidal LK (21x21, 3 levels) from frame 0 to 1, and its
//           end-point error against the true flow (depth of frame 0 and the two poses).
// Usage: synth_bench [--quick]   (--quick: 160x120 and 6 frames, a smoke run)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "vidmap/core/parallel.h"
#include "vidmap/core/temp_dir.h"
#include "vidmap/synth/camera_path.h"
#include "vidmap/synth/render3d.h"
#include "vidmap/synth/sequence.h"

#if defined(VIDMAP_HAVE_OPENCV)
#include <opencv2/features2d.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>
#endif

using namespace vidmap;
using namespace vidmap::synth;

namespace {

double cpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#if defined(VIDMAP_HAVE_OPENCV)
cv::Mat toGray(const RgbImage& img) {
  cv::Mat rgb(img.height(), img.width(), CV_8UC3, const_cast<Rgb8*>(img.data()));
  cv::Mat gray;
  cv::cvtColor(rgb, gray, cv::COLOR_RGB2GRAY);
  return gray;
}

// Peer detectors and tracker on frames 0 -> 1, scored against the true flow.
std::string peerJson(const std::string& sceneName, const std::string& pathName, int w, int h,
                     int frames) {
  Scene scene = makeScene(sceneName, 1);
  PathOptions po;
  po.kind = parsePathKind(pathName);
  po.frames = frames;
  auto path = makeCameraPath(scene, po);
  PinholeCamera cam = PinholeCamera::fromHfov(w, h, 60);
  RgbImage a = renderImage(scene, cam, path[0].pose), b = renderImage(scene, cam, path[1].pose);
  Image<float> depth = renderDepth(scene, cam, path[0].pose);
  cv::Mat ga = toGray(a), gb = toGray(b);
  std::vector<cv::Point2f> corners;
  cv::goodFeaturesToTrack(ga, corners, 2000, 0.01, 7);
  std::vector<cv::KeyPoint> kps;
  cv::SIFT::create()->detect(ga, kps);
  std::vector<cv::Point2f> tracked;
  std::vector<unsigned char> status;
  std::vector<float> err;
  cv::calcOpticalFlowPyrLK(ga, gb, corners, tracked, status, err, cv::Size(21, 21), 3);
  std::vector<double> epe, flow;
  int ok = 0;
  for (size_t i = 0; i < corners.size(); ++i) {
    if (!status[i]) continue;
    ++ok;
    int x = static_cast<int>(std::lround(corners[i].x)),
        y = static_cast<int>(std::lround(corners[i].y));
    double z = depth(x, y);
    if (z <= 0) continue;
    // The true position in frame 1 of the surface point seen at (x, y) in frame 0.
    Eigen::Vector3d X = path[0].pose.toWorld(z * cam.unproject(x, y));
    Eigen::Vector2d uv = cam.project(path[1].pose.toCamera(X));
    Eigen::Vector2d shift(corners[i].x - x, corners[i].y - y);  // sub-pixel corner offset
    uv += shift;
    epe.push_back(std::hypot(tracked[i].x - uv.x(), tracked[i].y - uv.y()));
    flow.push_back(std::hypot(uv.x() - corners[i].x, uv.y() - corners[i].y));
  }
  int within05 = 0, within1 = 0;
  for (double e : epe) within05 += e < 0.5, within1 += e < 1.0;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"scene\": \"%s\", \"path\": \"%s\", \"gftt_corners\": %zu, \"sift_keypoints\": "
                "%zu, \"lk_tracked\": %d, \"median_true_flow_px\": %.2f, \"lk_median_epe_px\": "
                "%.3f, \"lk_within_0_5px\": %.3f, \"lk_within_1px\": %.3f}",
                sceneName.c_str(), pathName.c_str(), corners.size(), kps.size(), ok, median(flow),
                median(epe), epe.empty() ? 0.0 : double(within05) / epe.size(),
                epe.empty() ? 0.0 : double(within1) / epe.size());
  return buf;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int w = quick ? 160 : 640, h = quick ? 120 : 480, frames = quick ? 6 : 60;
  std::printf("{\n  \"machine_threads\": %d, \"width\": %d, \"height\": %d,\n", maxThreads(), w, h);
  std::printf("  \"render\": [\n");
  bool first = true;
  for (const std::string& name : scenePresets()) {
    Scene scene = makeScene(name, 1);
    PathOptions po;
    po.frames = quick ? 4 : 12;
    auto path = makeCameraPath(scene, po);
    PinholeCamera cam = PinholeCamera::fromHfov(w, h, 60);
    for (bool aa : {true, false}) {
      RenderOptions ro;
      ro.antialias = aa;
      renderImage(scene, cam, path[0].pose, ro);  // warm-up
      std::vector<double> wall, cpu;
      for (const CameraFrame& f : path) {
        double w0 = wallSeconds(), c0 = cpuSeconds();
        RgbImage img = renderImage(scene, cam, f.pose, ro);
        wall.push_back(1e3 * (wallSeconds() - w0));
        cpu.push_back(1e3 * (cpuSeconds() - c0));
      }
      std::printf(
          "%s    {\"scene\": \"%s\", \"antialias\": %s, \"wall_ms_per_frame\": %.1f, "
          "\"cpu_ms_per_frame\": %.1f}",
          first ? "" : ",\n", name.c_str(), aa ? "true" : "false", median(wall), median(cpu));
      first = false;
    }
  }
  std::printf("\n  ],\n");

  namespace fs = std::filesystem;
  const TempDir tmp("synth_bench");  // unique, removed at the end
  const fs::path dir = tmp / "seq";
  SequenceOptions so;
  so.frames = frames;
  so.width = w;
  so.height = h;
  double w0 = wallSeconds(), c0 = cpuSeconds();
  writeSequence(dir, so);
  std::printf(
      "  \"sequence\": {\"scene\": \"room\", \"path\": \"orbit\", \"frames\": %d, "
      "\"wall_s\": %.2f, \"cpu_s\": %.2f},\n",
      frames, wallSeconds() - w0, cpuSeconds() - c0);

#if defined(VIDMAP_HAVE_OPENCV)
  std::printf("  \"peer_opencv\": [\n");
  first = true;
  for (const std::string& name : scenePresets())
    for (const std::string& p : pathKindNames()) {
      std::printf("%s    %s", first ? "" : ",\n", peerJson(name, p, w, h, frames).c_str());
      first = false;
    }
  std::printf("\n  ]\n}\n");
#else
  std::printf("  \"peer_opencv\": \"not built (no OpenCV)\"\n}\n");
#endif
  return 0;
}
