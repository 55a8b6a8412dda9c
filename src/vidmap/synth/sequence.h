// Writes a synthetic sequence with known truth: a preset scene (scene3d.h) rendered along a
// camera path (camera_path.h) into a folder
//
//   OUTDIR/rgb/frame_000000.png ...   colour frames (8-bit RGB PNG)
//   OUTDIR/rgb.txt                    TUM image list (timestamp rgb/frame_000000.png)
//   OUTDIR/groundtruth.txt            TUM trajectory, camera-to-world
//   OUTDIR/cameras.txt, images.txt, points3D.txt   the truth as a COLMAP text model
//   OUTDIR/sequence.txt               options, exact intrinsics, conventions
//   OUTDIR/depth/frame_000000.png, depth.txt       with writeDepth: 16-bit depth, TUM style
//                                                  (value / 5000 = metres, 0 = none)
// and, with `video`, a video of the frames through io::VideoWriter (codec by extension: .mp4
// H.264 when FFmpeg has libx264, else MPEG-4; .mkv lossless FFV1), timestamps i / fps.
// Everything is written under a temporary name beside OUTDIR and renamed at the end, so a
// failure leaves no half-written sequence. The bytes depend only on the options (not on the
// number of threads).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vidmap/synth/camera.h"
#include "vidmap/synth/camera_path.h"

namespace vidmap::synth {

struct SequenceOptions {
  std::string scene = "room";  // scenePresets()
  std::string path = "orbit";  // pathKindNames()
  int frames = 60;
  double fps = 30;
  int width = 640;
  int height = 480;
  double hfovDeg = 60;
  std::uint32_t seed = 1;
  bool antialias = true;
  bool writeDepth = false;
  std::filesystem::path video;  // empty: no video; needs an even width and height
  bool overwrite = false;       // replace an existing non-empty OUTDIR

  // Throws vidmap::Error naming the bad option (frames, fps, width, height, hfov, scene,
  // path).
  void check() const;
};

struct SequenceResult {
  std::filesystem::path dir;
  PinholeCamera camera;
  std::vector<CameraFrame> frames;
  std::vector<std::string> files;  // written files, relative to dir (frames summarised)
  std::filesystem::path video;     // empty when none was written
  double seconds = 0;              // wall time of rendering and writing
};

SequenceResult writeSequence(const std::filesystem::path& outDir, const SequenceOptions& options);

// True when this build can write video (FFmpeg).
bool sequenceVideoAvailable();

}  // namespace vidmap::synth
