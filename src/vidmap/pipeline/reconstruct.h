// The video reconstruction: frames -> front end (SIFT, matching, keyframe gate, guided
// matching) -> incremental mapper -> COLMAP models, PLY and the run record, in one folder
// written atomically:
//
//   OUTDIR/sparse/0/{cameras,images,points3D}.{bin,txt}   one folder per model (a video that
//   OUTDIR/sparse/0/points3D.ply                            breaks gives sparse/1, ...)
//   OUTDIR/sparse/0/trajectory.txt                          every posed frame, TUM format
//   OUTDIR/run.json                                         the run record
//   OUTDIR/report.html                                      the run report (report/)
//   OUTDIR/dense/fused.ply, dense/stereo/...                with `dense`: the largest model's
//                                                           dense cloud (pipeline/dense_stage.h)
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
#include "vidmap/pipeline/dense_stage.h"
#include "vidmap/pipeline/focal_check.h"
#include "vidmap/pipeline/focal_sweep.h"
#include "vidmap/pipeline/frontend.h"
#include "vidmap/pipeline/klt_source.h"
#include "vidmap/pipeline/principal_point.h"
#include "vidmap/sfm/camera.h"
#include "vidmap/sfm/mapper.h"

namespace vidmap::pipeline {

enum class Device { kAuto, kCpu, kCuda };
Device parseDevice(const std::string& name);  // "auto", "cpu", "cuda"; else vidmap::Error
const char* toString(Device d);

// The working width: ReconstructOptions::width = kAutoWidth picks kVideoWidth for videos, lists
// and folders of video frames, and kPhotoWidth for photos (measured on Strecha's fountain and
// Middlebury's rings: docs/benchmarks.md, "Photo sets"). A video's neighbouring
// frames are close and many; a photo set has few views with wide baselines, where the
// keypoints' precision decides the accuracy.
inline constexpr int kAutoWidth = -1;
inline constexpr int kVideoWidth = 640;
inline constexpr int kPhotoWidth = 1280;
// With the KLT tracks, the self-calibration's calibrated profile searches this factor either
// side of the homographies' estimate (sfm::MapperOptions::selfCalibrationProfileRange).
inline constexpr double kKltSelfCalibrationProfileRange = 1.25;
inline constexpr int kAutoPipelineDepth = -1;
// A video or list sampled at this many frames a second or more is dense in time: SIFT reads a
// 640 px frame at its own size, and --klt auto takes the KLT gate.
inline constexpr double kDenseFps = 10;
// The rate a list's timestamps give is its nominal rate up to their jitter: TUM fr1-xyz's list
// of every third frame of a 30 Hz camera measures 9.96 per second, and a video's nominal 10 may
// be 9.99. A rate within this fraction below kDenseFps counts as kDenseFps.
inline constexpr double kRateJitter = 0.02;
// Whether frames of `info` are dense in time (a sequence sampled at kDenseFps or more).
inline bool sampledDensely(const io::FrameSourceInfo& info) {
  return info.sequential && info.fps >= kDenseFps * (1 - kRateJitter);
}
// The name of a KLT mode as --klt takes it: "off", "gate" (the tracks drive the keyframe gate
// only) or "on" (their matches too).
inline const char* kltModeName(bool klt, bool matches) {
  return !klt ? "off" : matches ? "on" : "gate";
}
inline constexpr int kAutoDecodeAhead = -1;
// The width frames are resized to (0: native, never enlarged) for the option's value.
int workingWidth(int width, bool photos, int nativeWidth);

struct ReconstructOptions {
  double fps = 4;          // sampling rate of videos, TUM lists and folders of video frames
  bool allFrames = false;  // every frame of a video, list or folder of video frames
  // A folder: video frames or photos, by its names and sizes unless forced (io::FolderKind);
  // video frames are timed at folderFrameRate.
  io::FolderKind folder = io::FolderKind::kAuto;
  double folderFrameRate = 30;
  // Working width: kAutoWidth (-1): kVideoWidth for videos, kPhotoWidth for photos; 0 or above
  // native: native.
  int width = kAutoWidth;
  sfm::CameraSpec camera;  // default: SIMPLE_RADIAL, unknown
  Device device = Device::kAuto;
  FrontendOptions frontend;
  // KLT tracks as a second source of pair matches and the motion of the keyframe gate
  // (pipeline/klt_source.h); the tracker runs on the device of SIFT.
  bool klt = false;
  // With klt false, decided by the input once it is open (--klt auto): the gate (tracks drive
  // the keyframe gate, no track matches) on a video or list sampled at kDenseFps or more,
  // descriptors only otherwise (photos, sparser samples). false: klt as set (--klt off).
  bool kltAuto = true;
  KltSourceOptions kltSource;
  // SIFT's first octave: -1 (the image doubled, as COLMAP's default) up to 1000 px of working
  // width (photos: up to kPhotoWidth), 0 above; videos and lists sampled at 10 fps or more
  // (--all-frames): 0 from 640 px.
  bool autoFirstOctave = true;
  sfm::MapperOptions mapper;
  // Keyframes the front end (decode, SIFT, matching, the gate, KLT) may run ahead of the
  // mapper, on a thread of its own (pipeline/frontend_worker.h; the model is the same as 0's);
  // 0: one thread, frame after frame; kAutoPipelineDepth: 2 when SIFT runs on CUDA or OpenMP
  // has two threads or more, else 0. Faster on the H200 (docs/benchmarks.md, "Pipelined front
  // end") and, since the mapper's bundle adjustments run on one thread (ba::Options::
  // minObservationsPerThread), on a quiet 2-core CPU too: the front end fills the core they
  // leave (docs/benchmarks.md, "CPU path: the serial wall of fr1-rpy at all frames").
  int pipelineDepth = kAutoPipelineDepth;
  // Threads of the pipeline's side that is not the bottleneck (FrontendLoopOptions::sideThreads;
  // 0: a quarter of OpenMP's, at least one).
  int pipelineSideThreads = 0;
  // Pipelined: pairs verified by the front end while it waits (FrontendLoopOptions::verifyAhead).
  bool verifyAhead = true;
  // Frames decoded ahead on a thread of their own (io/prefetch_source.h; the same frames, so
  // the same model); 0: decoded on the front end's thread; kAutoDecodeAhead: 4.
  int decodeAhead = kAutoDecodeAhead;
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
  // Dense stereo after the sparse model: PatchMatch and fusion of the largest model's
  // keyframes, their images decoded again from the input at the working size (then scaled to
  // mvs.workspace.maxImageSize when set), on the run's device. A dense stage that fails (every
  // view skipped, a GPU budget too small for one view) fails the run: nothing is written.
  bool dense = false;
  DenseOptions mvs;
  // An unknown camera: measure whether each model determines its focal length (the profile of
  // the adjustment's cost, pipeline/focal_check.h); the summary and the report warn when not.
  bool checkFocal = true;
  FocalCheckOptions focalCheck;
  // A photo set (unknown camera, focal check on) whose models are suspect or none: the mapper
  // again from longer starting focal lengths, the best run kept; a video under the KLT gate
  // whose focal length was self-calibrated and whose gate kept at most half the frames: again
  // from near that focal length (pipeline/focal_sweep.h).
  FocalSweepOptions focalSweep;
  // A video with an unknown camera whose focal length was self-calibrated from the first
  // pairs, and whose largest model ends with a focal length more than this fraction away from
  // that: reconstructed again from the start with that model's camera as the start, refined
  // as usual (COLMAP's advice to run again with refined intrinsics). The pairs verified and the
  // first keyframes registered with the wrong focal length stay bent after bundle adjustment
  // has corrected it (tum-fr1-desk at 4 fps: self-calibrated 737 px, ends at 560, 102 mm;
  // again from 560 px, 24.9 mm, COLMAP 3.8's 24.9 mm); the mapper's own rebuild from the
  // initial pair with the refined camera does not undo it (docs/benchmarks.md, "The unknown
  // camera of fr1-desk"). A start from the 1.2 x width guess (self-calibration refused) is not
  // run again by default: tum-fr1-xyz starts at 768 px, ends at 549, and a second pass gives
  // the same model at twice the time; rerunGuessFocalChange is the bound for such a start.
  // 0.2 keeps tum-fr1-rpy's 150 frames (self-calibrated 658 px, ends at 533: 19.0%) to one
  // pass: a second gives the same accuracy there (34.6 against 34.8 mm) at twice the CPU time;
  // fr1-desk moves by 24.0%. 0: never. The second pass replaces the first only when its
  // models explain at least as many observations (the rule of pipeline/focal_sweep.h): from
  // its second frame, fr1-desk's first pass is right (25 mm) and its second wrong (0.69 m,
  // 11% fewer observations; docs/benchmarks.md, "The second pass kept only when it explains
  // more").
  double rerunFocalChange = 0.2;
  double rerunGuessFocalChange = 0;
  // The second pass reuses what the first made that reads no camera: the keyframe gate's
  // decisions, the SIFT features and the plain matches of every frame (not decoded nor
  // extracted again; pipeline/frontend_worker.h, FrontendRecording); the guided matching and
  // the mapper are made again. The same model as a second pass from the frames, bit for bit.
  // The first pass keeps them in up to this many MiB (about 1.6 MiB a keyframe of 3000
  // features); beyond, and with --klt (its tracks read the mapper), the second pass decodes
  // and extracts again. 0: never kept.
  int rerunReuseMiB = 2048;
  // A photo set (unknown camera, focal check on): the principal point refined in each model
  // whose focal length is determined and which determines the point (pipeline/principal_point.h).
  PrincipalPointOptions principalPoint;
  void check() const;
};

struct ModelSummary {
  int images = 0, points = 0;
  int localized = 0;  // frames dropped by the gate, posed by PnP (not adjusted)
  std::int64_t observations = 0;
  double meanTrackLength = 0, meanReprojErrorPx = 0;  // error in native pixels
  int firstKeyframe = 0, lastKeyframe = 0;
  std::vector<double> cameraParams;           // COLMAP convention, native size
  FocalCheck focal;                           // ran: the camera was unknown and checked
  PrincipalPointFit principalPoint;           // ran: a photo set's model, its focal checked
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
  // An unknown camera whose focal length a model does not determine (a translation with little
  // rotation: the cost's profile over the focal length is flat, pipeline/focal_check.h). The
  // run record's count `focal_undetermined`; the summary, report.html and batch status read it.
  bool focalUndetermined = false;
  double focalRelUncertainty = 0;  // sigma_f / f of the least determined model (0: not checked)
  // Models whose focal length is undetermined although their views turn (FocalCheck::suspect:
  // possibly wrong), and the largest turn among them (0: none).
  std::vector<int> focalSuspectModels;
  double focalSuspectTurnDeg = 0;
  std::vector<FocalSweepTrial> focalSweep;  // empty: no sweep ran; else the runs compared
  // An unknown camera of a video: the focal length the mapper started with (self-calibrated,
  // or the guess) and the one the largest model ended with (working pixels; 0: not measured).
  // rerunFocal: the first pass's end focal when the run was made again from it
  // (ReconstructOptions::rerunFocalChange).
  double startFocalPx = 0, endFocalPx = 0, rerunFocalPx = 0;
  bool startSelfCalibrated = false;
  // With rerunFocalPx: the observations each pass's models explain, and whether the second
  // pass was discarded for explaining fewer (the output is the first's).
  std::int64_t firstPassObservations = 0, secondPassObservations = 0;
  bool rerunDiscarded = false;
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
  bool dense = false;  // the dense stage ran (on sparse/<denseModel>)
  int denseModel = -1;
  DenseSummary denseSummary;
  bool klt = false;
  bool kltGateOnly = false;  // --klt gate: the tracks made no matches
  bool kltAuto = false;      // --klt auto decided (klt says what)
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
