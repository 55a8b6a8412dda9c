// The video reconstruction: frames -> front end (SIFT, matching, keyframe gate, guided
// matching) -> incremental mapper -> COLMAP models, PLY and the run record, in one folder
// written atomically:
//
//   OUTDIR/sparse/0/{cameras,images,points3D}.{bin,txt}   one folder per model (a video that
//   OUTDIR/sparse/0/points3D.ply                            breaks gives sparse/1, ...)
//   OUTDIR/sparse/0/trajectory.txt                          every posed frame, TUM format
//   OUTDIR/run.json                                         the run record
//   OUTDIR/report.html                                      the run report (report/)
//
// The written models are in COLMAP's pixel convention at the native size of the input, so
// they match the input images; the image names are the frames' names. Frames the keyframe
// gate dropped are localised after mapping (PnP against their keyframe's points) and written
// as images too, with their inlier keypoints; they are not bundle adjusted.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "vidmap/io/frame_source.h"
#include "vidmap/io/run_record.h"
#include "vidmap/pipeline/frontend.h"
#include "vidmap/pipeline/klt_source.h"
#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/mapper.h"

namespace vidmap::pipeline {

enum class Device { kAuto, kCpu, kCuda };
Device parseDevice(const std::string& name);  // "auto", "cpu", "cuda"; else vidmap::Error
const char* toString(Device d);

struct ReconstructOptions {
  double fps = 4;          // sampling rate of videos, TUM lists and folders of video frames
  bool allFrames = false;  // every frame of a video, list or folder of video frames
  // A folder: video frames or photos, by its names and sizes unless forced (io::FolderKind);
  // video frames are timed at folderFrameRate.
  io::FolderKind folder = io::FolderKind::kAuto;
  double folderFrameRate = 30;
  int width = 640;         // working width (the 640 px class); 0 or above native: native
  sfm::CameraSpec camera;  // default: SIMPLE_RADIAL, unknown
  Device device = Device::kAuto;
  FrontendOptions frontend;
  // KLT tracks as a second source of pair matches and the motion of the keyframe gate
  // (pipeline/klt_source.h); the tracker runs on the device of SIFT.
  bool klt = false;
  KltSourceOptions kltSource;
  // SIFT's first octave: -1 (the image doubled, as COLMAP's default) up to 1000 px of working
  // width, 0 above; videos and lists sampled at 10 fps or more (--all-frames): 0 from 640 px.
  bool autoFirstOctave = true;
  sfm::MapperOptions mapper;
  // Time every CUDA kernel launch into the run record (a pair of events per launch; its cost
  // is measured in docs/benchmarks.md). Off: stages keep host times only.
  bool profileKernels = true;
  bool progress = true;    // a progress bar when stderr is a terminal
  bool overwrite = false;  // replace an earlier vidmap output in OUTDIR (nothing else)
  // Called after each sampled frame with (frames so far, frames expected or -1 when unknown,
  // a status line); an exception it throws ends the run (nothing is written).
  std::function<void(long, long, const std::string&)> onProgress;
  // A TUM trajectory (camera to world) drawn over the model in report.html; empty: none.
  std::filesystem::path groundTruth;
  // Damaged input (io::SourceReport: a video that ends early or has damaged frames, frames
  // of a folder skipped): reported in the summary and run.json; with strict, an error and
  // nothing is written.
  bool strict = false;
  bool skipBadFrames = false;  // folders and lists: skip unreadable frames (and report them)
  void check() const;
};

struct ModelSummary {
  int images = 0, points = 0;
  int localized = 0;  // frames dropped by the gate, posed by PnP (not adjusted)
  std::int64_t observations = 0;
  double meanTrackLength = 0, meanReprojErrorPx = 0;  // error in native pixels
  int firstKeyframe = 0, lastKeyframe = 0;
  std::vector<double> cameraParams;           // COLMAP convention, native size
  std::vector<std::string> cameraParamNames;  // "f", "cx", "cy", "k", ...
};

struct ReconstructSummary {
  std::filesystem::path outDir;
  std::filesystem::path report;  // outDir/report.html; empty when it was not written
  long frames = 0;
  int keyframes = 0, featureless = 0, dropped = 0;
  int pairs = 0;
  std::int64_t matches = 0, verifiedMatches = 0;
  int registered = 0;                       // keyframes in any model
  int localized = 0;                        // dropped frames localised in a model
  int modelsStarted = 0, modelsMerged = 0;  // merged: into another model (mapper.h)
  int imagesAbsorbed = 0;                   // keyframes registered by PnP while merging
  // An unknown camera whose focal length the first pairs did not determine (pure forward
  // motion, a flat cost): BA refined it from COLMAP's starting guess.
  bool focalNotSelfCalibrated = false;
  std::string inputDamage;  // io::SourceReport::describe(): "" when the input read cleanly
  // Keyframes no model holds: "name (reason)", reason as run.json's "unjoined_keyframes".
  std::vector<std::string> unjoined;
  std::vector<ModelSummary> models;
  std::string siftBackend, baBackend, camera;
  // "video", "list", "video frames" or "photos" (a folder), and why a folder was read so.
  std::string inputKind, inputKindReason;
  double seconds = 0;
  // Stale temporary folders of OUTDIR left by killed runs, removed or restored
  // (pipeline/output_folder.h).
  std::vector<std::string> notes;
  bool klt = false;
  int siftCalls = 0;
  std::int64_t kltMatches = 0, kltOnlyMatches = 0;  // only: not found by descriptors
  double kltMeanTrackKeyframes = 0;                 // keyframes joined by an ended track
};

// Runs the pipeline on a video file, an image folder or a TUM list and writes OUTDIR. Bad
// input (unreadable file, too few keyframes, no motion, no features) is a vidmap::Error naming
// the problem, and OUTDIR is left as it was. A SIGINT or SIGTERM caught by
// installInterruptHandlers() (pipeline/interrupt.h) ends the run at the next frame with
// Interrupted, OUTDIR likewise untouched. `overwrite` replaces only an earlier vidmap output
// (pipeline/output_folder.h).
ReconstructSummary reconstruct(const std::filesystem::path& input,
                               const std::filesystem::path& outDir,
                               const ReconstructOptions& options, io::RunRecord& record);

// A few lines for the terminal.
std::string formatSummary(const ReconstructSummary& s);

}  // namespace vidmap::pipeline
