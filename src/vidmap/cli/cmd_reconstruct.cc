// `vidmap reconstruct INPUT -o OUTDIR`: cameras and a sparse 3D map from a video file, an image
// folder or a TUM list (vidmap/pipeline/reconstruct.h), written as COLMAP models, a PLY, a run
// record and report.html. The options are the fields of ReconstructOptions as listed once in
// pipeline/reconstruct_options_fields.h (the Python module takes the same names): --name with
// dashes, `--no-name` for switches that are on by default.
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include "vidmap/cli/commands.h"
#include "vidmap/pipeline/interrupt.h"
#include "vidmap/pipeline/reconstruct.h"
#include "vidmap/pipeline/reconstruct_options_fields.h"

namespace vidmap::cli {

namespace {

std::string dashed(std::string s) {
  for (char& c : s)
    if (c == '_') c = '-';
  return s;
}

std::string helpWithRange(const pipeline::FieldInfo& f, bool withRange) {
  std::ostringstream s;
  s.precision(10);
  s << f.help;
  if (withRange && std::isfinite(f.lo) && std::isfinite(f.hi))
    s << " [" << f.lo << ", " << f.hi << "]";
  return s.str();
}

}  // namespace

void addReconstructCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "reconstruct",
      "Cameras and a sparse 3D map from a video, an image folder or a TUM list (COLMAP model)");
  struct Args {
    std::string input, outDir;
    pipeline::ReconstructOptions o;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("INPUT", args->input, "Video file, image folder, or TUM list (rgb.txt)")
      ->required();
  cmd->add_option("-o,--output", args->outDir,
                  "Output folder (created; must not exist or be empty)")
      ->required();
  pipeline::forEachReconstructField(args->o, [&](const pipeline::FieldInfo& f, auto&& field) {
    using T = std::decay_t<decltype(field)>;
    const std::string name = (std::string(f.group) == "mvs" ? "mvs-" : "") + dashed(f.name);
    if (name == "progress") return;  // -q
    if constexpr (std::is_same_v<T, bool>) {
      bool* p = &field;
      if (field)
        cmd->add_flag_callback(
            "--no-" + name, [p] { *p = false; }, std::string("Turn off: ") + f.help);
      else
        cmd->add_flag_callback(
            "--" + name, [p] { *p = true; }, f.help);
    } else if constexpr (std::is_arithmetic_v<T>) {
      cmd->add_option("--" + name, field, helpWithRange(f, true))->capture_default_str();
    } else {
      const pipeline::TextField text = field;
      cmd->add_option_function<std::string>(
             "--" + name, [text](const std::string& s) { text.set(s); }, f.help)
          ->default_str(text.get());
    }
  });
  // Shorthands of --folder video / --folder photos.
  auto* seq = cmd->add_flag_callback(
      "--sequential", [args] { args->o.folder = io::FolderKind::kVideo; },
      "Read an image folder as the frames of one video (--folder video)");
  cmd->add_flag_callback(
         "--photos", [args] { args->o.folder = io::FolderKind::kPhotos; },
         "Read an image folder as photos: every image, no video sampling (--folder photos)")
      ->excludes(seq);
  cmd->add_flag("-q,--quiet", args->quiet, "No progress bar or summary");
  cmd->callback([args] {
    args->o.progress = !args->quiet;
    // Ctrl-C or `kill` stops at the next frame and leaves OUTDIR as it was (exit 130 / 143).
    pipeline::installInterruptHandlers();
    io::RunRecord record;
    record.setCommand(typedCommandLine());  // as typed, every option with it
    const pipeline::ReconstructSummary s =
        pipeline::reconstruct(args->input, args->outDir, args->o, record);
    if (!args->quiet) std::printf("%s", pipeline::formatSummary(s).c_str());
  });
}

}  // namespace vidmap::cli
