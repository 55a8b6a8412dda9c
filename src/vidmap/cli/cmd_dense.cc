// `vidmap dense MODEL_DIR IMAGES -o OUT`: PatchMatch depth and normal maps of every registered
// image of a COLMAP model, then fusion into one coloured point cloud with normals.
//   OUT/fused.ply                                     the dense cloud
//   OUT/stereo/{depth,normal}_maps/NAME.{photometric,geometric}.bin   COLMAP's layout
//   OUT/run.json                                      times per pass and kernel, memory
// OUT is written as a whole (a temporary folder renamed at the end): nothing partial.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/ply.h"
#include "vidmap/io/run_record.h"
#include "vidmap/mvs/depth_map_io.h"
#include "vidmap/mvs/fusion.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/pipeline/output_folder.h"

namespace vidmap::cli {

namespace {

namespace fs = std::filesystem;

struct DenseArgs {
  std::string model, images, outDir;
  std::string device = "auto";
  std::string maxGpuMemory = "0";
  bool overwrite = false, quiet = false, noMaps = false;
  mvs::WorkspaceOptions ws;
  mvs::PatchMatchOptions pm;
  mvs::FusionOptions fusion;
};

// "123", "512M", "4G", "1.5G" -> bytes.
std::int64_t parseBytes(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    throw Error("--max-gpu-memory: '" + s + "' is not a size (e.g. 4G, 512M, 1000000)");
  }
  std::string unit = s.substr(used);
  double scale = 1;
  if (unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "M" || unit == "m")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty())
    throw Error("--max-gpu-memory: unknown unit '" + unit + "' (K, M, G)");
  if (!(v >= 0)) throw Error("--max-gpu-memory must not be negative");
  return static_cast<std::int64_t>(v * scale);
}

void writeMaps(const fs::path& root, const mvs::View& v, const mvs::DepthMap& m, const char* kind) {
  mvs::DenseArray depth{m.width, m.height, 1, m.depth};
  mvs::DenseArray normal{m.width, m.height, 3, m.normal};
  const std::string file = v.name + "." + kind + ".bin";
  fs::path d = root / "stereo" / "depth_maps" / file, n = root / "stereo" / "normal_maps" / file;
  fs::create_directories(d.parent_path());
  fs::create_directories(n.parent_path());
  mvs::writeDenseArray(d, depth);
  mvs::writeDenseArray(n, normal);
}

void runDense(const DenseArgs& a, io::RunRecord& record) {
  mvs::PatchMatchOptions pm = a.pm;
  if (a.device == "cpu")
    pm.backend = mvs::Backend::kCpu;
  else if (a.device == "cuda")
    pm.backend = mvs::Backend::kCuda;
  else if (a.device != "auto")
    throw Error("--device must be auto, cpu or cuda, not " + a.device);
  pm.maxGpuMemory = parseBytes(a.maxGpuMemory);
  pm.check();
  a.ws.check();
  a.fusion.check();
  pipeline::OutputFolder out(a.outDir, a.overwrite);

  mvs::Workspace ws;
  {
    auto t = record.stage("mvs_load");
    io::ColmapModel model = io::readColmapModel(a.model);
    ws = mvs::loadWorkspace(model, a.images, a.ws);
  }
  for (const std::string& s : ws.skipped)
    std::fprintf(stderr, "vidmap dense: skipped %s\n", s.c_str());
  record.setCount("mvs_views", static_cast<std::int64_t>(ws.views.size()));
  record.setCount("mvs_skipped_views", static_cast<std::int64_t>(ws.skipped.size()));
  std::int64_t pixels = 0, sources = 0;
  for (size_t i = 0; i < ws.views.size(); ++i)
    if (ws.isReference[i])
      pixels += std::int64_t(ws.views[i].width) * ws.views[i].height,
          sources += static_cast<std::int64_t>(ws.views[i].sources.size());
  record.setCount("mvs_reference_pixels", pixels);

  mvs::PatchMatchResult r = mvs::runPatchMatch(ws, pm);
  record.addStage("mvs_photometric", r.stats.photometricMs);
  if (!r.geometric.empty()) record.addStage("mvs_geometric", r.stats.geometricMs);
  record.addKernels(r.stats.kernels);
  record.noteDevicePeakBytes(r.stats.devicePeakBytes);
  record.setCount("mvs_references", r.stats.references);
  record.setCount("mvs_sources_total", sources);
  record.setCount("mvs_plan_peak_bytes", r.stats.planPeakBytes);
  record.setCount("mvs_device_peak_bytes", r.stats.devicePeakBytes);
  record.setCount("mvs_view_uploads", r.stats.uploads);
  record.setOption("mvs.backend", r.stats.backend);

  mvs::FusionStats fs;
  std::vector<io::PlyPoint> points;
  {
    auto t = record.stage("mvs_fusion");
    points = mvs::fuseDepthMaps(ws, r.final(), a.fusion, &fs);
  }
  record.setCount("mvs_fused_points", fs.points);
  record.setCount("mvs_fused_pixels", fs.fusedPixels);
  record.setCount("mvs_valid_pixels", fs.validPixels);
  {
    auto t = record.stage("mvs_write");
    io::writePly(out.tmp() / "fused.ply", points, true);
    if (!a.noMaps)
      for (size_t i = 0; i < ws.views.size(); ++i) {
        if (!r.photometric[i].empty())
          writeMaps(out.tmp(), ws.views[i], r.photometric[i], "photometric");
        if (!r.geometric.empty() && !r.geometric[i].empty())
          writeMaps(out.tmp(), ws.views[i], r.geometric[i], "geometric");
      }
  }
  record.write(out.tmp() / "run.json");
  out.commit();
  if (!a.quiet)
    std::printf(
        "dense: %d references (%zu skipped), %s, photometric %.2f s, geometric %.2f s, "
        "%lld points -> %s\n",
        r.stats.references, ws.skipped.size(), r.stats.backend.c_str(), r.stats.photometricMs / 1e3,
        r.stats.geometricMs / 1e3, static_cast<long long>(fs.points),
        (fs::path(a.outDir) / "fused.ply").c_str());
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
  cmd->add_option("--max-image-size", args->ws.maxImageSize, "Longer side in pixels (0: native)")
      ->capture_default_str();
  cmd->add_option("--depth-min", args->ws.depthMin,
                  "With --depth-max: the depth range of every view (models without points)")
      ->capture_default_str();
  cmd->add_option("--depth-max", args->ws.depthMax)->capture_default_str();
  cmd->add_option("--sources", args->ws.maxSources, "Source views per reference (1-12)")
      ->capture_default_str();
  cmd->add_option("--photometric-iterations", args->pm.photometricIterations)
      ->capture_default_str();
  cmd->add_option("--geometric-iterations", args->pm.geometricIterations,
                  "0: photometric pass only")
      ->capture_default_str();
  cmd->add_option("--top-k", args->pm.topK, "Best sources averaged per hypothesis")
      ->capture_default_str();
  cmd->add_option("--max-cost", args->pm.maxCost, "Depths of a higher cost are dropped")
      ->capture_default_str();
  cmd->add_option("--min-pixels", args->fusion.minPixels, "Fusion: pixels per point")
      ->capture_default_str();
  cmd->add_option("--max-depth-error", args->fusion.maxDepthError, "Fusion: relative")
      ->capture_default_str();
  cmd->add_option("--max-reproj-error", args->fusion.maxReprojectionError, "Fusion: pixels")
      ->capture_default_str();
  cmd->add_option("--max-normal-error", args->fusion.maxNormalErrorDeg, "Fusion: degrees")
      ->capture_default_str();
  cmd->add_flag("--no-maps", args->noMaps, "Do not write the depth and normal maps");
  cmd->add_flag("--overwrite", args->overwrite, "Replace OUT when it is not empty");
  cmd->add_flag("-q,--quiet", args->quiet, "No summary line");
  cmd->callback([args] {
    io::RunRecord record;
    record.setCommand(typedCommandLine());
    record.setOption("mvs.photometric_iterations", args->pm.photometricIterations);
    record.setOption("mvs.geometric_iterations", args->pm.geometricIterations);
    record.setOption("mvs.max_sources", args->ws.maxSources);
    record.setOption("mvs.max_image_size", args->ws.maxImageSize);
    record.setOption("mvs.top_k", args->pm.topK);
    runDense(*args, record);
  });
}

}  // namespace vidmap::cli
