// The dense stage: PatchMatch depth and normal maps of every registered image of a COLMAP
// model and their fusion into one cloud (vidmap/mvs), written into a folder of an output that
// the caller commits as a whole (pipeline/output_folder.h). `vidmap dense` runs it on a model
// read from disk, `vidmap reconstruct --dense` on the largest model of the run, with the
// images decoded again from the input:
//
//   DIR/fused.ply                                               the dense cloud with normals
//   DIR/stereo/{depth,normal}_maps/NAME.{photometric,geometric}.bin   COLMAP's layout
//
// and into the run record: stages mvs_load, mvs_photometric, mvs_geometric (wall and GPU ms),
// mvs_fusion, mvs_write; the kernels; counts mvs_* (views, skipped views, plan and device
// peak bytes, uploads, fused points).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/run_record.h"
#include "vidmap/mvs/fusion.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/mvs/workspace.h"

namespace vidmap::pipeline {

struct DenseOptions {
  mvs::WorkspaceOptions workspace;
  mvs::PatchMatchOptions patchMatch;
  mvs::FusionOptions fusion;
  bool writeMaps = true;  // the depth and normal maps beside fused.ply
  void check() const;
};

struct DenseSummary {
  int views = 0, references = 0;
  std::vector<std::string> skipped;  // views that were no reference, with the reason
  std::string backend;               // "cpu" or "cuda"
  double photometricSeconds = 0, geometricSeconds = 0, fusionSeconds = 0;
  std::int64_t points = 0;
};

// "123", "512M", "4G", "1.5G" (K, M, G: powers of 1024) -> bytes; else vidmap::Error naming
// `what`.
std::int64_t parseByteSize(const std::string& text, const std::string& what);
std::string formatByteSize(std::int64_t bytes);  // the inverse, exact: "4G", "1536M", "1000"

// Runs the dense stage on `model` (images from loadImage, called from several threads when
// threadSafeLoader: see mvs::buildWorkspace) and writes
// its files into dir (created). Bad input (fewer than two images, a wrong image, every view
// skipped, a GPU budget too small for one view) throws vidmap::Error before anything is
// written into dir.
DenseSummary runDenseStage(const io::ColmapModel& model,
                           const std::function<RgbImage(const io::ColmapImage&)>& loadImage,
                           const DenseOptions& options, const std::filesystem::path& dir,
                           io::RunRecord& record, bool threadSafeLoader = false);

// One line for the terminal.
std::string formatDenseSummary(const DenseSummary& s, const std::filesystem::path& dir);

}  // namespace vidmap::pipeline
