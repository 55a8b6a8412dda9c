// io_bench: how fast frames come in. Image reads (Middlebury PNG 640x480, Strecha JPEG
// 3072x2048) and PNG writes against OpenCV imread/imwrite; video decode of a generated
// 1280x720 H.264 (or MPEG-4) clip, every frame and sampled at 4 fps to 640 px, against
// OpenCV VideoCapture. Prints one JSON object: medians of wall and process CPU time in ms (the
// CPU time is the fairer figure on a shared machine; it sums the decoder threads).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "vidmap/core/data_dir.h"
#include "vidmap/io/frame_source.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/video_writer.h"

#if defined(VIDMAP_HAVE_OPENCV)
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

namespace fs = std::filesystem;
using namespace vidmap;

namespace {

double cpuNowMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

struct Timing {
  double wallMs, cpuMs;  // medians; CPU time sums all threads of the process
};

Timing median(int reps, const std::function<void()>& f) {
  std::vector<double> wall, cpu;
  f();  // warm the caches and the thread pools
  for (int i = 0; i < reps; ++i) {
    double c = cpuNowMs();
    auto a = std::chrono::steady_clock::now();
    f();
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
    cpu.push_back(cpuNowMs() - c);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

std::vector<std::string> out;

void put(const std::string& key, double v) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "\"%s\": %.2f", key.c_str(), v);
  out.push_back(buf);
}

void put(const std::string& key, Timing t) {
  put(key + "_wall_ms", t.wallMs);
  put(key + "_cpu_ms", t.cpuMs);
}

void benchImage(const std::string& tag, const fs::path& file, int reps) {
  if (!fs::exists(file)) return;
  put(tag + "_vidmap_read_gray_rgb", median(reps, [&] { io::readImage(file); }));
#if defined(VIDMAP_HAVE_OPENCV)
  put(tag + "_opencv_imread", median(reps, [&] { cv::imread(file.string(), cv::IMREAD_COLOR); }));
  put(tag + "_opencv_imread_gray", median(reps, [&] {
        cv::Mat c = cv::imread(file.string(), cv::IMREAD_COLOR), g;
        cv::cvtColor(c, g, cv::COLOR_BGR2GRAY);
      }));
#endif
}

}  // namespace

int main() {
  auto data = dataDir();
  if (data) {
    benchImage("png_640x480", *data / "middlebury-flow/frames/Grove2/frame10.png", 21);
    benchImage("jpeg_3072x2048", *data / "strecha/fountain-P11/images/0000.jpg", 7);
  }
  fs::path tmp = fs::temp_directory_path() / ("vidmap_io_bench_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  RgbImage frame(640, 480);
  for (int y = 0; y < 480; ++y)
    for (int x = 0; x < 640; ++x) {
      auto v = static_cast<std::uint8_t>(127.5 + 127 * std::sin(0.05 * x) * std::cos(0.07 * y));
      frame(x, y) = {v, static_cast<std::uint8_t>(255 - v),
                     static_cast<std::uint8_t>((x + y) & 255)};
    }
  put("png_write_640x480_vidmap", median(21, [&] { io::writePng(tmp / "w.png", frame); }));
#if defined(VIDMAP_HAVE_OPENCV)
  cv::Mat bgr(480, 640, CV_8UC3);
  for (int y = 0; y < 480; ++y)
    for (int x = 0; x < 640; ++x)
      bgr.at<cv::Vec3b>(y, x) = {frame(x, y).b, frame(x, y).g, frame(x, y).r};
  put("png_write_640x480_opencv_level3", median(21, [&] {
        cv::imwrite((tmp / "c.png").string(), bgr, {cv::IMWRITE_PNG_COMPRESSION, 3});
      }));
#endif

  if (io::videoSupported()) {
    const int w = 1280, h = 720, n = 150;
    const double fps = 30;
    io::VideoWriterOptions vo;
    vo.fps = fps;
    fs::path video = tmp / "clip.mp4";
    {
      io::VideoWriter writer(video, w, h, vo);
      RgbImage f(w, h);
      for (int k = 0; k < n; ++k) {
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            double s = std::sin(0.031 * (x + 4 * k)) * std::cos(0.023 * (y - 2 * k)) +
                       0.3 * std::sin(0.2 * (x - y + 7 * k));
            auto v = static_cast<std::uint8_t>(std::clamp(127.5 + 90 * s, 0.0, 255.0));
            f(x, y) = {v, static_cast<std::uint8_t>((v + x / 5) & 255),
                       static_cast<std::uint8_t>(255 - v)};
          }
        writer.write(f);
      }
      writer.finish();
      std::printf("{\"note\": \"clip: %d frames %dx%d at %.0f fps, codec %s\"}\n", n, w, h, fps,
                  writer.codec() == io::VideoCodec::kH264 ? "H.264" : "MPEG-4");
    }
    auto decode = [&](const io::FrameSourceOptions& o) {
      auto s = io::openFrameSource(video, o);
      io::Frame f;
      int count = 0;
      while (s->next(f)) ++count;
      return count;
    };
    io::FrameSourceOptions all;
    all.allFrames = true;
    Timing tAll = median(3, [&] { decode(all); });
    put("video_720p_all_frames_vidmap", tAll);
    io::FrameSourceOptions s4;
    s4.width = 640;
    int picked = decode(s4);
    put("video_720p_sample4fps_to640_vidmap", median(3, [&] { decode(s4); }));
    put("video_720p_sample4fps_frames", picked);
#if defined(VIDMAP_HAVE_OPENCV)
    Timing tCv = median(3, [&] {
      cv::VideoCapture cap(video.string());
      cv::Mat m, g;
      while (cap.read(m)) cv::cvtColor(m, g, cv::COLOR_BGR2GRAY);
    });
    put("video_720p_all_frames_opencv", tCv);
    Timing tCv4 = median(3, [&] {
      cv::VideoCapture cap(video.string());
      cv::Mat m, small, g;
      double next = 0;
      while (cap.grab()) {
        double t = cap.get(cv::CAP_PROP_POS_MSEC) / 1000;
        if (t + 1e-6 < next) continue;
        next = std::floor((t + 1e-6) * 4) / 4 + 0.25;
        cap.retrieve(m);
        cv::resize(m, small, cv::Size(640, 360), 0, 0, cv::INTER_AREA);
        cv::cvtColor(small, g, cv::COLOR_BGR2GRAY);
      }
    });
    put("video_720p_sample4fps_to640_opencv", tCv4);
#endif
  }
  fs::remove_all(tmp);
  std::printf("{\n");
  for (size_t i = 0; i < out.size(); ++i)
    std::printf("  %s%s\n", out[i].c_str(), i + 1 < out.size() ? "," : "");
  std::printf("}\n");
}
