// The truth files of a synthetic sequence, written and read back exactly:
//   groundtruth.txt  TUM trajectory "timestamp tx ty tz qx qy qz qw", camera-to-world
//                    (t = camera centre, q = Hamilton quaternion of the camera-to-world
//                    rotation), camera axes x right, y down, z forward;
//   rgb.txt          TUM image list "timestamp rgb/frame_000000.png" (io's FrameSource reads
//                    it; paths relative to the list's folder);
//   cameras.txt      COLMAP PINHOLE camera, cx/cy in COLMAP's convention (+0.5, see
//                    camera.h);
//   images.txt       COLMAP poses "IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME",
//                    world-to-camera, each followed by an empty 2D-point line;
//   points3D.txt     empty (the three COLMAP files form a valid text model of the truth);
//   sequence.txt     "key value" lines: scene, path, seed, size, intrinsics in the OpenCV
//                    convention (exact), the conventions in words.
// Numbers are printed with 17 significant digits so that they parse back to the same
// doubles; timestamps with 9 decimals.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "vidmap/synth/camera.h"
#include "vidmap/synth/camera_path.h"

namespace vidmap::synth {

std::string formatTimestamp(double seconds);

std::string formatTumTrajectory(const std::vector<CameraFrame>& frames);
// Parses a TUM trajectory (comments '#' and blank lines skipped); `what` names the source
// in errors. Frame indices are the line order.
std::vector<CameraFrame> parseTumTrajectory(const std::string& text, const std::string& what);

std::string formatTumImageList(const std::vector<CameraFrame>& frames,
                               const std::vector<std::string>& relativePaths,
                               const std::string& title);

std::string formatColmapCameras(const PinholeCamera& camera);
std::string formatColmapImages(const std::vector<CameraFrame>& frames,
                               const std::vector<std::string>& names);
std::string formatColmapPoints3D();

// What a sequence folder holds, read back from its files.
struct SequenceTruth {
  PinholeCamera camera;                       // OpenCV convention (from sequence.txt)
  std::vector<CameraFrame> frames;            // from groundtruth.txt
  std::vector<std::filesystem::path> images;  // absolute paths, from rgb.txt
  std::map<std::string, std::string> info;    // all key-value lines of sequence.txt
};

// Reads a folder written by writeSequence; throws vidmap::Error naming the bad file/line.
SequenceTruth readSequenceTruth(const std::filesystem::path& dir);

}  // namespace vidmap::synth
