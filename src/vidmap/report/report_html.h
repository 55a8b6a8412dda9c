// The run report: one self-contained HTML file (OUTDIR/report.html) that opens offline and
// shows what a reconstruction folder holds: a 3D view of the points and camera frusta
// (three.js, inlined), the trajectory seen from above, per-stage and per-kernel times, track
// length and reprojection error histograms, the registered frames along the video, the
// warnings of the run, and the ground truth aligned onto the model when a trajectory is
// given. The page and its scripts are embedded in the binary at build time (CMakeLists.txt).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace vidmap::report {

struct ReportOptions {
  std::filesystem::path groundTruth;  // TUM trajectory (camera to world); empty: none
  // Points drawn in the 3D view, over all models; larger models are subsampled evenly (the
  // page stays a few MB and loads in a second).
  std::int64_t maxPoints = 200000;
  void check() const;
};

// What the page is built from, exposed for tests and front ends.
struct ReportData {
  std::string json;              // the data block embedded in the page
  std::int64_t pointsTotal = 0;  // points in the models
  std::int64_t pointsShown = 0;  // points embedded (<= maxPoints)
  int models = 0, images = 0;
  std::vector<std::string> warnings;  // shown at the top of the page
  double groundTruthAteRmse = -1;     // of the largest model, -1 without ground truth
};

// Reads dir/run.json and dir/sparse/N (COLMAP models with trajectory.txt beside them).
// Throws vidmap::Error naming a missing or malformed file.
ReportData collectReportData(const std::filesystem::path& dir, const ReportOptions& options);

// The whole page.
std::string renderReport(const ReportData& data);

// Writes dir/report.html (or `output`) atomically and returns its path.
std::filesystem::path writeReport(const std::filesystem::path& dir, const ReportOptions& options,
                                  const std::filesystem::path& output = {});

// True when the build embedded three.js (otherwise the page has no 3D view and says why).
bool reportHas3dView();

}  // namespace vidmap::report
