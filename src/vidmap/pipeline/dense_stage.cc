#include "vidmap/pipeline/dense_stage.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/io/ply.h"
#include "vidmap/mvs/depth_map_io.h"

namespace vidmap::pipeline {

namespace fs = std::filesystem;

void DenseOptions::check() const {
  workspace.check();
  patchMatch.check();
  fusion.check();
}

std::int64_t parseByteSize(const std::string& s, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    throw Error(what + ": '" + s + "' is not a size (e.g. 4G, 512M, 1000000)");
  }
  const std::string unit = s.substr(used);
  double scale = 1;
  if (unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "M" || unit == "m")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty())
    throw Error(what + ": unknown unit '" + unit + "' in '" + s + "' (K, M, G)");
  if (!(v >= 0) || !std::isfinite(v)) throw Error(what + " must not be negative ('" + s + "')");
  if (v * scale > 9.0e18) throw Error(what + ": '" + s + "' is too large");
  return static_cast<std::int64_t>(v * scale);
}

std::string formatByteSize(std::int64_t b) {
  const char* units[] = {"G", "M", "K"};
  const std::int64_t scales[] = {std::int64_t(1) << 30, std::int64_t(1) << 20, 1024};
  for (int i = 0; i < 3; ++i)
    if (b > 0 && b % scales[i] == 0) return std::to_string(b / scales[i]) + units[i];
  return std::to_string(b);
}

namespace {

void writeMaps(const fs::path& root, const mvs::View& v, const mvs::DepthMap& m, const char* kind) {
  const mvs::DenseArray depth{m.width, m.height, 1, m.depth};
  const mvs::DenseArray normal{m.width, m.height, 3, m.normal};
  const std::string file = v.name + "." + kind + ".bin";
  const fs::path d = root / "stereo" / "depth_maps" / file;
  const fs::path n = root / "stereo" / "normal_maps" / file;
  fs::create_directories(d.parent_path());  // names may hold folders
  fs::create_directories(n.parent_path());
  mvs::writeDenseArray(d, depth);
  mvs::writeDenseArray(n, normal);
}

// GPU ms of the kernels whose names start with prefix.
double gpuMsOf(const std::vector<gpu::KernelStat>& kernels, const std::string& prefix) {
  double ms = 0;
  for (const gpu::KernelStat& k : kernels)
    if (k.name.rfind(prefix, 0) == 0) ms += k.gpuMs;
  return ms;
}

}  // namespace

DenseSummary runDenseStage(const io::ColmapModel& model,
                           const std::function<RgbImage(const io::ColmapImage&)>& loadImage,
                           const DenseOptions& options, const fs::path& dir, io::RunRecord& record,
                           bool threadSafeLoader) {
  options.check();
  DenseSummary sum;
  mvs::Workspace ws;
  {
    auto t = record.stage("mvs_load");
    ws = mvs::buildWorkspace(model, loadImage, options.workspace, threadSafeLoader);
  }
  sum.views = static_cast<int>(ws.views.size());
  sum.skipped = ws.skipped;
  record.setCount("mvs_views", sum.views);
  record.setCount("mvs_skipped_views", static_cast<std::int64_t>(ws.skipped.size()));
  std::int64_t pixels = 0, sources = 0;
  for (size_t i = 0; i < ws.views.size(); ++i)
    if (ws.isReference[i]) {
      pixels += std::int64_t(ws.views[i].width) * ws.views[i].height;
      sources += static_cast<std::int64_t>(ws.views[i].sources.size());
    }
  record.setCount("mvs_reference_pixels", pixels);
  record.setCount("mvs_sources_total", sources);

  const mvs::PatchMatchResult r = mvs::runPatchMatch(ws, options.patchMatch);
  const mvs::PatchMatchStats& st = r.stats;
  record.addStage("mvs_photometric", st.photometricMs, gpuMsOf(st.kernels, "mvs_photometric"), 1,
                  st.backend == "cuda");
  if (!r.geometric.empty())
    record.addStage("mvs_geometric", st.geometricMs, gpuMsOf(st.kernels, "mvs_geometric"), 1,
                    st.backend == "cuda");
  record.addKernels(st.kernels);
  record.noteDevicePeakBytes(st.devicePeakBytes);
  record.setCount("mvs_references", st.references);
  record.setCount("mvs_plan_peak_bytes", st.planPeakBytes);
  record.setCount("mvs_device_peak_bytes", st.devicePeakBytes);
  record.setCount("mvs_view_uploads", st.uploads);
  record.setOption("mvs.backend", st.backend);
  sum.references = st.references;
  sum.backend = st.backend;
  sum.photometricSeconds = st.photometricMs / 1e3;
  sum.geometricSeconds = st.geometricMs / 1e3;

  mvs::FusionStats fst;
  std::vector<io::PlyPoint> points;
  {
    const auto t0 = std::chrono::steady_clock::now();
    // Fusion's per-pixel phase on the device PatchMatch ran on, within the same budget.
    mvs::FusionOptions fo = options.fusion;
    if (fo.backend == mvs::Backend::kAuto) {
      fo.backend = st.backend == "cuda" ? mvs::Backend::kCuda : mvs::Backend::kCpu;
      fo.device = options.patchMatch.device;
      fo.maxGpuMemory = options.patchMatch.maxGpuMemory;
    }
    points = mvs::fuseDepthMaps(ws, r.final(), fo, &fst);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    record.addStage("mvs_fusion", ms);
    sum.fusionSeconds = ms / 1e3;
  }
  if (fst.backend == "cuda") {
    record.addKernels(fst.kernels);
    record.setCount("mvs_fusion_plan_peak_bytes", fst.planPeakBytes);
    record.setCount("mvs_fusion_device_peak_bytes", fst.devicePeakBytes);
  }
  record.setOption("mvs.fusion_backend", fst.backend);
  sum.points = fst.points;
  record.setCount("mvs_fused_points", fst.points);
  record.setCount("mvs_fused_pixels", fst.fusedPixels);
  record.setCount("mvs_valid_pixels", fst.validPixels);
  {
    auto t = record.stage("mvs_write");
    fs::create_directories(dir);
    io::writePly(dir / "fused.ply", points, true);
    if (options.writeMaps)
      for (size_t i = 0; i < ws.views.size(); ++i) {
        if (!r.photometric[i].empty()) writeMaps(dir, ws.views[i], r.photometric[i], "photometric");
        if (!r.geometric.empty() && !r.geometric[i].empty())
          writeMaps(dir, ws.views[i], r.geometric[i], "geometric");
      }
  }
  return sum;
}

std::string formatDenseSummary(const DenseSummary& s, const fs::path& dir) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(2);
  o << "dense: " << s.references << " of " << s.views << " views (" << s.skipped.size()
    << " skipped), " << s.backend << ", photometric " << s.photometricSeconds << " s, geometric "
    << s.geometricSeconds << " s, fusion " << s.fusionSeconds << " s, " << s.points << " points -> "
    << (dir / "fused.ply").string() << "\n";
  for (const std::string& k : s.skipped) o << "  dense: skipped " << k << "\n";
  return o.str();
}

}  // namespace vidmap::pipeline
