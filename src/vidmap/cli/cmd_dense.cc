// `vidmap dense MODEL_DIR IMAGES -o OUT`: PatchMatch depth and normal maps of every registered
// image of a COLMAP model, then fusion into one coloured point cloud with normals.
//   OUT/fused.ply                                     the dense cloud
//   OUT/stereo/{depth,normal}_maps/NAME.{photometric,geometric}.bin   COLMAP's layout
//   OUT/run.json                                      times per pass and kernel, memory
// OUT is written as a whole (a temporary folder renamed at the end): nothing partial.
#include <cstdio>
#include <memory>
#include <string>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/run_record.h"
#include "vidmap/mvs/workspace.h"
#include "vidmap/pipeline/dense_stage.h"
#include "vidmap/pipeline/output_folder.h"

namespace vidmap::cli {

namespace {

namespace fs = std::filesystem;

struct DenseArgs {
  std::string model, images, outDir;
  std::string device = "auto";
  std::string maxGpuMemory = "0";
  bool overwrite = false, quiet = false, noMaps = false;
  pipeline::DenseOptions dense;
};

void runDense(const DenseArgs& a, io::RunRecord& record) {
  pipeline::DenseOptions o = a.dense;
  if (a.device == "cpu")
    o.patchMatch.backend = mvs::Backend::kCpu;
  else if (a.device == "cuda")
    o.patchMatch.backend = mvs::Backend::kCuda;
  else if (a.device != "auto")
    throw Error("--device must be auto, cpu or cuda, not " + a.device);
  o.patchMatch.maxGpuMemory = pipeline::parseByteSize(a.maxGpuMemory, "--max-gpu-memory");
  o.writeMaps = !a.noMaps;
  o.check();
  pipeline::OutputFolder out(a.outDir, a.overwrite);
  const io::ColmapModel model = io::readColmapModel(a.model);
  // Every missing image is named in one error before any is decoded.
  mvs::checkImagesPresent(model, a.images);
  const pipeline::DenseSummary s = pipeline::runDenseStage(
      model, [&](const io::ColmapImage& im) { return io::readRgb(fs::path(a.images) / im.name); },
      o, out.tmp(), record, /*threadSafeLoader=*/true);
  for (const std::string& k : s.skipped)
    std::fprintf(stderr, "vidmap dense: skipped %s\n", k.c_str());
  record.write(out.tmp() / "run.json");
  out.commit();
  if (!a.quiet) {
    std::string line = pipeline::formatDenseSummary(s, a.outDir);
    std::printf("%s", line.substr(0, line.find('\n') + 1).c_str());
  }
}

}  // namespace

void addDenseCommand(CLI::App& app) {
  auto args = std::make_shared<DenseArgs>();
  auto* cmd = app.add_subcommand(
      "dense", "Dense depth and normal maps (PatchMatch) of a COLMAP model, fused into a PLY");
  cmd->add_option("MODEL_DIR", args->model, "COLMAP sparse model (cameras/images/points3D)")
      ->required();
  cmd->add_option("IMAGES", args->images, "Folder of the model's images")->required();
  cmd->add_option("-o,--output", args->outDir, "Output folder (written as a whole)")->required();
  cmd->add_option("--device", args->device, "auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--max-gpu-memory", args->maxGpuMemory,
                  "Device memory budget, e.g. 4G (0: 80% of the device)")
      ->capture_default_str();
  cmd->add_option("--max-image-size", args->dense.workspace.maxImageSize,
                  "Longer side in pixels (0: native)")
      ->capture_default_str();
  cmd->add_option("--depth-min", args->dense.workspace.depthMin,
                  "With --depth-max: the depth range of every view (models without points)")
      ->capture_default_str();
  cmd->add_option("--depth-max", args->dense.workspace.depthMax)->capture_default_str();
  cmd->add_option("--sources", args->dense.workspace.maxSources,
                  "Source views per reference (1-12)")
      ->capture_default_str();
  cmd->add_option("--photometric-iterations", args->dense.patchMatch.photometricIterations)
      ->capture_default_str();
  cmd->add_option("--geometric-iterations", args->dense.patchMatch.geometricIterations,
                  "0: photometric pass only")
      ->capture_default_str();
  cmd->add_flag("--multi-resolution", args->dense.patchMatch.multiResolution,
                "Photometric pass at half resolution first, upsampled as the start");
  cmd->add_option("--fine-iterations", args->dense.patchMatch.fineIterations,
                  "With --multi-resolution: photometric iterations at full resolution")
      ->capture_default_str();
  cmd->add_option("--top-k", args->dense.patchMatch.topK, "Best sources averaged per hypothesis")
      ->capture_default_str();
  cmd->add_option("--max-cost", args->dense.patchMatch.maxCost,
                  "Depths of a higher cost are dropped")
      ->capture_default_str();
  cmd->add_option("--min-pixels", args->dense.fusion.minPixels, "Fusion: pixels per point")
      ->capture_default_str();
  cmd->add_option("--max-depth-error", args->dense.fusion.maxDepthError, "Fusion: relative")
      ->capture_default_str();
  cmd->add_option("--max-reproj-error", args->dense.fusion.maxReprojectionError, "Fusion: pixels")
      ->capture_default_str();
  cmd->add_option("--max-normal-error", args->dense.fusion.maxNormalErrorDeg, "Fusion: degrees")
      ->capture_default_str();
  cmd->add_flag("--no-maps", args->noMaps, "Do not write the depth and normal maps");
  cmd->add_flag("--overwrite", args->overwrite, "Replace OUT when it is not empty");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary line");
  cmd->callback([args] {
    io::RunRecord record;
    record.setCommand(typedCommandLine());
    record.setOption("mvs.photometric_iterations", args->dense.patchMatch.photometricIterations);
    record.setOption("mvs.geometric_iterations", args->dense.patchMatch.geometricIterations);
    record.setOption("mvs.max_sources", args->dense.workspace.maxSources);
    record.setOption("mvs.max_image_size", args->dense.workspace.maxImageSize);
    record.setOption("mvs.top_k", args->dense.patchMatch.topK);
    runDense(*args, record);
  });
}

}  // namespace vidmap::cli
