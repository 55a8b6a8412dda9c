// `vidmap export --format nerfstudio MODEL -o transforms.json`: a COLMAP model (a sparse/N
// folder written by `vidmap reconstruct`, or by COLMAP) in another tool's format
// (vidmap/io/nerfstudio.h).
#include <cstdio>
#include <memory>
#include <string>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/nerfstudio.h"

namespace vidmap::cli {

void addExportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export", "Convert a COLMAP model: nerfstudio's transforms.json (NeRF, Gaussian splatting)");
  struct Args {
    std::string model, output, format = "nerfstudio";
    io::NerfstudioOptions ns;
    bool noPly = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->model, "COLMAP model folder (e.g. OUTDIR/sparse/0)")->required();
  cmd->add_option("-o,--output", args->output, "Output file (transforms.json)")->required();
  cmd->add_option("--format", args->format, "Output format: nerfstudio")->capture_default_str();
  cmd->add_option("--images", args->ns.imageDir,
                  "Folder of the frames, relative to the output file (file_path = FOLDER/name)")
      ->capture_default_str();
  cmd->add_flag("--no-ply", args->noPly,
                "Do not write the points beside the output (sparse_pc.ply, for splatfacto)");
  cmd->callback([args] {
    if (args->format != "nerfstudio")
      throw Error("export: unknown --format '" + args->format + "' (nerfstudio)");
    if (args->noPly) args->ns.plyFile.clear();
    const io::ColmapModel model = io::readColmapModel(args->model);
    io::exportNerfstudio(model, args->output, args->ns);
    std::printf("wrote %s: %zu frames%s\n", args->output.c_str(), model.images.size(),
                args->ns.plyFile.empty() ? "" : (", " + args->ns.plyFile).c_str());
  });
}

}  // namespace vidmap::cli
