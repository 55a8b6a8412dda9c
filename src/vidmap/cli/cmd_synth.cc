// `vidmap synth OUTDIR`: writes a synthetic sequence with known truth (frames, intrinsics,
// ground-truth poses) from a preset 3D scene and camera path (vidmap/synth/sequence.h).
#include <cstdio>
#include <string>

#include "vidmap/cli/commands.h"
#include "vidmap/synth/sequence.h"

namespace vidmap::cli {

void addSynthCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "synth", "Render a synthetic sequence with known truth (frames, cameras, poses)");
  struct Args {
    std::string outDir;
    synth::SequenceOptions o;
    std::string video;
    bool noAntialias = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("OUTDIR", args->outDir, "Folder to create (must not exist or be empty)")
      ->required();
  cmd->add_option("--scene", args->o.scene, "Scene preset: room, facade")->capture_default_str();
  cmd->add_option("--path", args->o.path, "Camera path: orbit, sideways, forward, pan")
      ->capture_default_str();
  cmd->add_option("--frames", args->o.frames, "Number of frames")->capture_default_str();
  cmd->add_option("--fps", args->o.fps, "Frames per second (timestamps)")->capture_default_str();
  cmd->add_option("--width", args->o.width, "Image width in pixels")->capture_default_str();
  cmd->add_option("--height", args->o.height, "Image height in pixels")->capture_default_str();
  cmd->add_option("--hfov", args->o.hfovDeg, "Horizontal field of view in degrees")
      ->capture_default_str();
  cmd->add_option("--seed", args->o.seed, "Texture seed")->capture_default_str();
  cmd->add_option("--video", args->video,
                  "Also write the frames as a video (.mp4: H.264 or MPEG-4, .mkv: lossless FFV1)");
  cmd->add_flag("--depth", args->o.writeDepth, "Also write 16-bit depth PNGs (TUM, /5000 m)");
  cmd->add_flag("--no-antialias", args->noAntialias, "One ray per pixel, no prefiltering");
  cmd->add_flag("--overwrite", args->o.overwrite, "Replace OUTDIR when it is not empty");
  cmd->callback([args] {
    args->o.video = args->video;
    args->o.antialias = !args->noAntialias;
    synth::SequenceResult r = synth::writeSequence(args->outDir, args->o);
    const synth::PinholeCamera& c = r.camera;
    std::printf("wrote %d frames %dx%d (scene %s, path %s, seed %u) in %.2f s to %s\n",
                static_cast<int>(r.frames.size()), c.width, c.height, args->o.scene.c_str(),
                args->o.path.c_str(), args->o.seed, r.seconds, r.dir.string().c_str());
    std::printf("  camera: PINHOLE fx %.4f fy %.4f cx %.4f cy %.4f (OpenCV convention)\n", c.fx,
                c.fy, c.cx, c.cy);
    for (const std::string& f : r.files) std::printf("  %s\n", f.c_str());
    if (!r.video.empty()) std::printf("  video: %s\n", r.video.string().c_str());
  });
}

}  // namespace vidmap::cli
