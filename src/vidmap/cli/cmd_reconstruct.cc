// `vidmap reconstruct INPUT -o OUTDIR`: cameras and a sparse 3D map from a video file, an image
// folder or a TUM list (vidmap/pipeline/reconstruct.h), written as COLMAP models, a PLY and a
// run record.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "vidmap/cli/commands.h"
#include "vidmap/pipeline/reconstruct.h"

namespace vidmap::cli {

void addReconstructCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "reconstruct",
      "Cameras and a sparse 3D map from a video, an image folder or a TUM list (COLMAP model)");
  struct Args {
    std::string input, outDir, camera = "SIMPLE_RADIAL", device = "auto";
    pipeline::ReconstructOptions o;
    bool quiet = false, noGuided = false;
    std::optional<int> firstOctave;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("INPUT", args->input, "Video file, image folder, or TUM list (rgb.txt)")
      ->required();
  cmd->add_option("-o,--output", args->outDir,
                  "Output folder (created; must not exist or be empty)")
      ->required();
  cmd->add_option("--fps", args->o.fps,
                  "Frames per second sampled from a video, list or folder of video frames")
      ->capture_default_str();
  cmd->add_flag("--all-frames", args->o.allFrames,
                "Use every frame of a video, list or folder of video frames");
  cmd->add_option("--width", args->o.width, "Working width in pixels (0: native)")
      ->capture_default_str();
  cmd->add_option("--camera", args->camera,
                  "Camera model, with parameters when known, in COLMAP's order and pixel "
                  "convention at the native size: SIMPLE_RADIAL (unknown, refined), "
                  "'PINHOLE fx,fy,cx,cy', 'OPENCV fx,fy,cx,cy,k1,k2,p1,p2', 'FULL_OPENCV ...'")
      ->capture_default_str();
  cmd->add_option("--device", args->device, "auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--max-features", args->o.frontend.sift.maxFeatures, "SIFT features per frame")
      ->capture_default_str();
  cmd->add_option("--sift-first-octave", args->firstOctave,
                  "-1 doubles the image before the first octave (more features on small frames); "
                  "default: -1 up to 1000 px of working width, else 0; videos and lists sampled "
                  "at 10 fps or more: 0 from 640 px");
  cmd->add_option("--active-keyframes", args->o.frontend.activeKeyframes,
                  "Earlier keyframes each frame is matched against")
      ->capture_default_str();
  cmd->add_option("--min-tri-angle", args->o.mapper.minTriAngleDeg,
                  "Smallest triangulation angle of a kept point (degrees)")
      ->capture_default_str();
  cmd->add_option("--init-relaxed-angle", args->o.mapper.initRelaxedMinAngleDeg,
                  "Median triangulation angle an initial pair needs after waiting (degrees)")
      ->capture_default_str();
  cmd->add_option("--pnp-max-error", args->o.mapper.pnpMaxErrorPx,
                  "PnP inlier threshold (working pixels)")
      ->capture_default_str();
  cmd->add_option("--pnp-min-inliers", args->o.mapper.pnpMinInliers, "PnP inliers to register")
      ->capture_default_str();
  cmd->add_option("--max-reproj-error", args->o.mapper.maxReprojErrorPx,
                  "Observations with a larger error are filtered (working pixels)")
      ->capture_default_str();
  auto* seq = cmd->add_flag_callback(
      "--sequential", [args] { args->o.folder = io::FolderKind::kVideo; },
      "Read an image folder as the frames of one video (default: when its names are numbered "
      "and its images one size)");
  cmd->add_flag_callback(
         "--photos", [args] { args->o.folder = io::FolderKind::kPhotos; },
         "Read an image folder as photos: every image, no video sampling")
      ->excludes(seq);
  cmd->add_option("--frame-rate", args->o.folderFrameRate,
                  "Frames per second of a folder of video frames")
      ->capture_default_str();
  cmd->add_flag_callback(
      "--verify-from-scratch", [args] { args->o.mapper.videoVerification = false; },
      "Verify every pair with E, F and H searched from scratch (not from the guide's E, and F "
      "also once the focal length is known)");
  cmd->add_flag_callback(
      "--no-kernel-profile", [args] { args->o.profileKernels = false; },
      "Do not time each CUDA kernel (the run record then has host times only)");
  cmd->add_flag("--no-guided", args->noGuided,
                "Plain descriptor matching only (no epipolar guide)");
  cmd->add_flag("--verbose", args->o.mapper.verbose, "Log the mapper's events on stderr");
  cmd->add_flag("--overwrite", args->o.overwrite, "Replace OUTDIR when it is not empty");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress bar or summary");
  cmd->callback([args] {
    args->o.camera = sfm::CameraSpec::parse(args->camera);
    args->o.device = pipeline::parseDevice(args->device);
    args->o.progress = !args->quiet;
    args->o.frontend.guided = !args->noGuided;
    if (args->firstOctave) {
      args->o.autoFirstOctave = false;
      args->o.frontend.sift.firstOctave = *args->firstOctave;
    }
    io::RunRecord record;
    std::string command = "vidmap reconstruct " + args->input + " -o " + args->outDir;
    record.setCommand(command);
    const pipeline::ReconstructSummary s =
        pipeline::reconstruct(args->input, args->outDir, args->o, record);
    if (!args->quiet) std::printf("%s", pipeline::formatSummary(s).c_str());
  });
}

}  // namespace vidmap::cli
