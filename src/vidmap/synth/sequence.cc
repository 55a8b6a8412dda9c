#include "vidmap/synth/sequence.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <system_error>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/video_writer.h"
#include "vidmap/synth/render3d.h"
#include "vidmap/synth/scene3d.h"
#include "vidmap/synth/truth_io.h"

namespace vidmap::synth {

namespace fs = std::filesystem;

namespace {

std::string frameName(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "frame_%06d.png", i);
  return buf;
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// TUM RGB-D depth: 16-bit, metres * 5000, 0 where there is no surface or it is too far.
Image<std::uint16_t> depthToTum(const Image<float>& depth) {
  Image<std::uint16_t> out(depth.width(), depth.height());
  for (long i = 0; i < depth.pixels(); ++i) {
    double v = std::round(static_cast<double>(depth.data()[i]) * 5000.0);
    out.data()[i] = (v > 0 && v <= 65535) ? static_cast<std::uint16_t>(v) : 0;
  }
  return out;
}

std::string describe(const SequenceOptions& o, const PinholeCamera& c) {
  std::string s =
      "# vidmap synthetic sequence: key value\n"
      "# world: right-handed, z up, metres, floor z = 0\n"
      "# camera axes: x right, y down, z forward (OpenCV/COLMAP)\n"
      "# groundtruth.txt: TUM, camera-to-world; images.txt: COLMAP, world-to-camera\n"
      "# fx fy cx cy below: OpenCV convention, pixel centres at integers (cameras.txt has\n"
      "# COLMAP's, cx and cy + 0.5)\n";
  s += "scene " + o.scene + "\npath " + o.path + "\nseed " + std::to_string(o.seed) + "\nframes " +
       std::to_string(o.frames) + "\nfps " + num(o.fps) + "\nwidth " + std::to_string(c.width) +
       "\nheight " + std::to_string(c.height) + "\nhfov_deg " + num(o.hfovDeg) + "\nfx " +
       num(c.fx) + "\nfy " + num(c.fy) + "\ncx " + num(c.cx) + "\ncy " + num(c.cy) +
       "\nantialias " + (o.antialias ? "1" : "0") + "\ndepth " + (o.writeDepth ? "1" : "0") + "\n";
  if (!o.video.empty()) s += "video " + fs::absolute(o.video).string() + "\n";
  return s;
}

fs::path uniqueSibling(const fs::path& dir, const std::string& tag) {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = dir.filename().string();
    name.insert(name.begin(), '.');  // (not "." + name: a GCC 12 -Wrestrict false positive)
    name += "." + tag + std::to_string(rd() % 1000000);
    fs::path p = dir.parent_path() / name;
    if (!fs::exists(p)) return p;
  }
  throw Error("cannot find a free temporary name beside " + dir.string());
}

void removeQuietly(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

}  // namespace

void SequenceOptions::check() const {
  checkRange("frames", frames, 1, 100000);
  checkRange("fps", fps, 0.001, 1000.0);
  checkRange("width", width, 16, 8192);
  checkRange("height", height, 16, 8192);
  checkRange("hfov (degrees)", hfovDeg, 10.0, 150.0);
  bool knownScene = false;
  for (const std::string& s : scenePresets()) knownScene = knownScene || s == scene;
  if (!knownScene) throw Error("unknown scene '" + scene + "' (known: room, facade)");
  parsePathKind(path);
}

bool sequenceVideoAvailable() { return io::videoCodecAvailable(io::VideoCodec::kAuto); }

SequenceResult writeSequence(const fs::path& outDirIn, const SequenceOptions& o) {
  o.check();
  const auto start = std::chrono::steady_clock::now();
  require(!outDirIn.empty(), "no output folder given");
  fs::path outDir = fs::absolute(outDirIn).lexically_normal();
  if (outDir.filename().empty()) outDir = outDir.parent_path();
  if (!fs::is_directory(outDir.parent_path()))
    throw Error("the folder that should hold " + outDir.string() + " does not exist");
  if (fs::exists(outDir)) {
    if (!fs::is_directory(outDir)) throw Error(outDir.string() + " exists and is not a folder");
    if (!fs::is_empty(outDir) && !o.overwrite)
      throw Error(outDir.string() +
                  " exists and is not empty (overwrite, --overwrite, replaces it)");
  }
  if (!o.video.empty()) {
    if (!sequenceVideoAvailable())
      throw Error(
          "video output is not available in this build (it needs FFmpeg); write the PNG "
          "sequence without --video");
    if (o.width % 2 != 0 || o.height % 2 != 0)
      throw Error("video output needs an even width and height, got " + std::to_string(o.width) +
                  "x" + std::to_string(o.height));
    fs::path vdir = fs::absolute(o.video).parent_path();
    if (!fs::is_directory(vdir))
      throw Error("the folder for the video does not exist: " + vdir.string());
  }

  const Scene scene = makeScene(o.scene, o.seed);
  PathOptions po;
  po.kind = parsePathKind(o.path);
  po.frames = o.frames;
  po.fps = o.fps;
  SequenceResult result;
  result.camera = PinholeCamera::fromHfov(o.width, o.height, o.hfovDeg);
  result.frames = makeCameraPath(scene, po);

  const fs::path tmp = uniqueSibling(outDir, "tmp");
  try {
    fs::create_directory(tmp);
    fs::create_directory(tmp / "rgb");
    if (o.writeDepth) fs::create_directory(tmp / "depth");
    std::vector<std::string> names(o.frames), rgbPaths(o.frames), depthPaths(o.frames);
    for (int i = 0; i < o.frames; ++i) {
      names[i] = frameName(i);
      rgbPaths[i] = "rgb/" + names[i];
      depthPaths[i] = "depth/" + names[i];
    }

    // Frames in batches; the frames of a batch render in parallel, each on one thread (so PNG
    // compression runs in parallel too), then go to the video in order. OpenMP must not see
    // an exception: keep the first and rethrow it.
    std::unique_ptr<io::VideoWriter> video;
    if (!o.video.empty()) {
      io::VideoWriterOptions vo;
      vo.fps = o.fps;
      video = std::make_unique<io::VideoWriter>(o.video, o.width, o.height, vo);
    }
    std::exception_ptr failure;
    std::mutex failureMutex;
    RenderOptions ro;
    ro.antialias = o.antialias;
    ro.parallel = false;
    const int batch = std::max(1, 2 * maxThreads());
    std::vector<RgbImage> images(batch);
    for (int first = 0; first < o.frames; first += batch) {
      const int count = std::min(batch, o.frames - first);
      parallelForDynamic(count, [&](std::int64_t k) {
        try {
          {
            std::lock_guard<std::mutex> lock(failureMutex);
            if (failure) return;
          }
          const int i = first + static_cast<int>(k);
          const Pose& pose = result.frames[i].pose;
          images[k] = renderImage(scene, result.camera, pose, ro);
          io::writePng(tmp / rgbPaths[i], images[k]);
          if (o.writeDepth)
            io::writePng(tmp / depthPaths[i],
                         depthToTum(renderDepth(scene, result.camera, pose, false)));
        } catch (...) {
          std::lock_guard<std::mutex> lock(failureMutex);
          if (!failure) failure = std::current_exception();
        }
      });
      if (failure) std::rethrow_exception(failure);
      if (video)
        for (int k = 0; k < count; ++k) video->write(images[k]);
    }

    const std::string title = "synthetic sequence: scene " + o.scene + ", path " + o.path +
                              ", seed " + std::to_string(o.seed);
    io::writeTextAtomically(tmp / "rgb.txt",
                            formatTumImageList(result.frames, rgbPaths, "colour images, " + title));
    if (o.writeDepth)
      io::writeTextAtomically(
          tmp / "depth.txt",
          formatTumImageList(result.frames, depthPaths,
                             "depth images (16-bit PNG, value / 5000 = metres), " + title));
    io::writeTextAtomically(tmp / "groundtruth.txt", formatTumTrajectory(result.frames));
    io::writeTextAtomically(tmp / "cameras.txt", formatColmapCameras(result.camera));
    io::writeTextAtomically(tmp / "images.txt", formatColmapImages(result.frames, names));
    io::writeTextAtomically(tmp / "points3D.txt", formatColmapPoints3D());
    io::writeTextAtomically(tmp / "sequence.txt", describe(o, result.camera));

    if (video) {
      video->finish();  // renames the video into place
      result.video = fs::absolute(o.video);
    }

    // Into place: an empty or replaced OUTDIR goes only once the new one is complete.
    fs::path old;
    if (fs::exists(outDir)) {
      old = uniqueSibling(outDir, "old");
      fs::rename(outDir, old);
    }
    std::error_code ec;
    fs::rename(tmp, outDir, ec);
    if (ec) {
      if (!old.empty()) fs::rename(old, outDir);
      if (!result.video.empty()) removeQuietly(result.video);
      throw Error("cannot rename " + tmp.string() + " to " + outDir.string() + ": " + ec.message());
    }
    if (!old.empty()) removeQuietly(old);
  } catch (const fs::filesystem_error& e) {
    removeQuietly(tmp);
    throw Error(std::string("writing the sequence failed: ") + e.what());
  } catch (...) {
    removeQuietly(tmp);
    throw;
  }

  result.dir = outDir;
  result.files = {"rgb/frame_000000.png .. " + frameName(o.frames - 1),
                  "rgb.txt",
                  "groundtruth.txt",
                  "cameras.txt",
                  "images.txt",
                  "points3D.txt",
                  "sequence.txt"};
  if (o.writeDepth) {
    result.files.push_back("depth/frame_000000.png .. " + frameName(o.frames - 1));
    result.files.push_back("depth.txt");
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace vidmap::synth
