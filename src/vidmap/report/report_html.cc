#include "vidmap/report/report_html.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/run_warnings.h"
#include "vidmap/report/report_resources.h"
#include "vidmap/sfm/trajectory_eval.h"

namespace vidmap::report {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

void ReportOptions::check() const {
  checkRange<std::int64_t>("report.maxPoints", maxPoints, 1, std::int64_t(1) << 32);
}

bool reportHas3dView() { return resources::kScriptCount > 0; }

namespace {

std::string base64(const void* data, size_t n) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < n; i += 3) {
    const unsigned v = p[i] << 16 | p[i + 1] << 8 | p[i + 2];
    out += k[v >> 18];
    out += k[v >> 12 & 63];
    out += k[v >> 6 & 63];
    out += k[v & 63];
  }
  if (i < n) {
    const unsigned v = p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0);
    out += k[v >> 18];
    out += k[v >> 12 & 63];
    out += i + 1 < n ? k[v >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  require(in.good(), "report: cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Histogram with unit bins from lo; the last bin collects everything above.
Json histogram(const std::vector<double>& values, double lo, double width, int bins) {
  std::vector<std::int64_t> h(bins, 0);
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    const int b = std::clamp(static_cast<int>(std::floor((v - lo) / width)), 0, bins - 1);
    ++h[b];
  }
  return Json{{"lo", lo}, {"width", width}, {"counts", h}};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct ModelFiles {
  int index;
  fs::path dir;
};

std::vector<ModelFiles> findModels(const fs::path& dir) {
  std::vector<ModelFiles> out;
  const fs::path sparse = dir / "sparse";
  if (!fs::is_directory(sparse)) return out;
  for (int i = 0;; ++i) {
    const fs::path d = sparse / std::to_string(i);
    if (!fs::is_directory(d)) break;
    out.push_back({i, d});
  }
  return out;
}

}  // namespace

ReportData collectReportData(const fs::path& dir, const ReportOptions& options) {
  options.check();
  require(fs::is_directory(dir), "report: '" + dir.string() + "' is not a folder");
  const fs::path runPath = dir / "run.json";
  require(fs::exists(runPath), "report: " + runPath.string() +
                                   " is missing (not a folder written by vidmap reconstruct?)");
  Json run;
  try {
    run = Json::parse(readText(runPath));
  } catch (const nlohmann::json::exception& e) {
    throw Error("report: " + runPath.string() + " is not valid JSON: " + e.what());
  }
  const std::vector<ModelFiles> files = findModels(dir);
  require(!files.empty(), "report: no model in " + (dir / "sparse").string());

  ReportData data;
  std::vector<io::ColmapModel> models;
  for (const ModelFiles& f : files) {
    models.push_back(io::readColmapModel(f.dir));
    data.pointsTotal += static_cast<std::int64_t>(models.back().points3d.size());
  }
  data.models = static_cast<int>(models.size());
  // One stride for all models keeps their densities comparable.
  const std::int64_t stride =
      std::max<std::int64_t>(1, (data.pointsTotal + options.maxPoints - 1) / options.maxPoints);

  std::vector<sfm::StampedPose> gt;
  if (!options.groundTruth.empty()) gt = sfm::readTumTrajectory(options.groundTruth);

  Json jmodels = Json::array();
  size_t largest = 0;
  for (size_t m = 0; m < models.size(); ++m)
    if (models[m].images.size() > models[largest].images.size()) largest = m;
  for (size_t m = 0; m < models.size(); ++m) {
    const io::ColmapModel& cm = models[m];
    Json jm;
    jm["index"] = files[m].index;
    jm["images"] = cm.images.size();
    jm["points"] = cm.points3d.size();
    data.images += static_cast<int>(cm.images.size());
    // Points (subsampled) and their colours, as base64 float32 / uint8 arrays.
    std::vector<float> xyz;
    std::vector<std::uint8_t> rgb;
    std::vector<double> trackLengths, errors;
    std::int64_t k = 0;
    for (const auto& [id, p] : cm.points3d) {
      trackLengths.push_back(static_cast<double>(p.track.size()));
      errors.push_back(p.error);
      if (k++ % stride != 0) continue;
      for (int i = 0; i < 3; ++i) xyz.push_back(static_cast<float>(p.xyz[i]));
      for (int i = 0; i < 3; ++i) rgb.push_back(p.rgb[i]);
    }
    data.pointsShown += static_cast<std::int64_t>(rgb.size() / 3);
    jm["points_shown"] = rgb.size() / 3;
    jm["xyz"] = base64(xyz.data(), xyz.size() * sizeof(float));
    jm["rgb"] = base64(rgb.data(), rgb.size());
    jm["track_length_hist"] = histogram(trackLengths, 2, 1, 19);  // 2 .. 20+
    jm["reproj_error_hist"] = histogram(errors, 0, 0.1, 30);      // 0 .. 3+ px
    jm["median_track_length"] = median(trackLengths);
    jm["median_reproj_error_px"] = median(errors);
    // Cameras: centre and camera-to-world rotation (row-major), with the intrinsics of the
    // frustum (focal over width and height).
    Json cams = Json::array();
    for (const auto& [id, im] : cm.images) {
      const Eigen::Quaterniond q(im.qvec[0], im.qvec[1], im.qvec[2], im.qvec[3]);
      const Eigen::Matrix3d Rcw = q.normalized().toRotationMatrix();
      const Eigen::Vector3d c =
          -Rcw.transpose() * Eigen::Vector3d(im.tvec[0], im.tvec[1], im.tvec[2]);
      const Eigen::Matrix3d Rwc = Rcw.transpose();
      Json r = Json::array();
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.push_back(Rwc(i, j));
      cams.push_back({{"id", id}, {"name", im.name}, {"c", {c.x(), c.y(), c.z()}}, {"r", r}});
    }
    jm["cameras"] = std::move(cams);
    const io::ColmapCamera& cam = cm.cameras.begin()->second;
    jm["camera"] = {{"model", io::cameraModelName(cam.model)},
                    {"width", cam.width},
                    {"height", cam.height},
                    {"params", cam.params}};
    // Every posed frame in time order (keyframes and localised frames).
    std::vector<sfm::StampedPose> traj;
    const fs::path trajPath = files[m].dir / "trajectory.txt";
    if (fs::exists(trajPath)) traj = sfm::readTumTrajectory(trajPath);
    Json jt = Json::array();
    for (const sfm::StampedPose& p : traj) jt.push_back({p.t, p.c.x(), p.c.y(), p.c.z()});
    jm["trajectory"] = std::move(jt);
    // Ground truth in the model's frame: the inverse of the similarity aligning the model's
    // centres onto the truth.
    if (!gt.empty() && !traj.empty()) {
      const std::vector<sfm::PosePair> pairs = sfm::associate(traj, gt);
      if (pairs.size() >= 3) {
        try {
          const sfm::TrajectoryError e = sfm::evaluateTrajectory(pairs);
          const sfm::Sim3& s = e.alignment;
          Json g = Json::array();
          // The truth over the model's time span (a model may cover a part of the video).
          const double t0 = traj.front().t - 0.5, t1 = traj.back().t + 0.5;
          for (const sfm::StampedPose& p : gt) {
            if (p.t < t0 || p.t > t1) continue;
            const Eigen::Vector3d x = s.R.transpose() * (p.c - s.t) / s.s;
            g.push_back({p.t, x.x(), x.y(), x.z()});
          }
          jm["groundtruth"] = {{"pairs", e.pairs},
                               {"ate_rmse", e.ate_rmse},
                               {"ate_median", e.ate_median},
                               {"rot_rmse_deg", e.rot_rmse_deg},
                               {"scale", s.s},
                               {"trajectory", std::move(g)}};
          if (m == largest) data.groundTruthAteRmse = e.ate_rmse;
        } catch (const Error& e) {
          data.warnings.push_back("ground truth: model " + std::to_string(files[m].index) +
                                  " could not be aligned (" + e.what() + ")");
        }
      } else {
        data.warnings.push_back("ground truth: model " + std::to_string(files[m].index) +
                                " shares fewer than 3 timestamps with " +
                                options.groundTruth.string());
      }
    }
    jmodels.push_back(std::move(jm));
  }

  // Warnings a user can act on, from the record.
  auto metric = [&](const char* name, double fallback) {
    const Json& m = run.contains("metrics") ? run["metrics"] : Json::object();
    return m.contains(name) && m[name].is_number() ? m[name].get<double>() : fallback;
  };
  auto count = [&](const char* name, double fallback) {
    const Json& c = run.contains("counts") ? run["counts"] : Json::object();
    return c.contains(name) && c[name].is_number() ? c[name].get<double>() : fallback;
  };
  if (count(io::kFocalUndeterminedCount, 0) != 0)
    data.warnings.push_back(io::focalUndeterminedWarning(metric(io::kFocalRelUncertaintyMetric, 0),
                                                         metric(io::kFocalTurnMetric, 0)));
  if (data.models > 1)
    data.warnings.push_back("the video broke into " + std::to_string(data.models) +
                            " models that could not be merged (tracking lost between them)");
  const double regFrac = metric("registered_fraction", 1);
  if (regFrac < 0.9) {
    std::ostringstream s;
    s.precision(3);
    s << "only " << 100 * regFrac << " % of the keyframes were registered ("
      << count("registered_keyframes", 0) << " of " << count("keyframes", 0) << ")";
    data.warnings.push_back(s.str());
  }
  const double err = metric("mean_reprojection_error_px", 0);
  if (err > 1.5) {
    std::ostringstream s;
    s.precision(3);
    s << "mean reprojection error " << err << " px is high (distortion not modelled?)";
    data.warnings.push_back(s.str());
  }
  if (run.contains("warnings") && run["warnings"].is_array())
    for (const Json& w : run["warnings"])
      if (w.is_string()) data.warnings.push_back(w.get<std::string>());
  if (stride > 1) {
    std::ostringstream s;
    s << "the 3D view shows " << data.pointsShown << " of " << data.pointsTotal << " points (every "
      << stride << "th)";
    data.warnings.push_back(s.str());
  }
  if (!reportHas3dView())
    data.warnings.push_back(
        "this vidmap was built without three.js (Debian libjs-three): no 3D view");

  Json j;
  j["folder"] = fs::absolute(dir).lexically_normal().string();
  j["run"] = std::move(run);
  j["models"] = std::move(jmodels);
  j["warnings"] = data.warnings;
  j["points_total"] = data.pointsTotal;
  j["points_shown"] = data.pointsShown;
  j["groundtruth_file"] = options.groundTruth.string();
  j["has_3d"] = reportHas3dView();
  data.json = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return data;
}

std::string renderReport(const ReportData& data) {
  // A JSON string may hold "</script>"; "<\/" is the same JSON and cannot end the element.
  std::string json;
  json.reserve(data.json.size());
  for (size_t i = 0; i < data.json.size(); ++i) {
    json += data.json[i];
    if (data.json[i] == '<' && i + 1 < data.json.size() && data.json[i + 1] == '/') json += '\\';
  }
  std::string scripts;
  for (int i = 0; i < resources::kScriptCount; ++i) {
    scripts += "<script>/* ";
    scripts += resources::kScriptNames[i];
    scripts += " (Debian libjs-three) */\n";
    scripts += resources::kScripts[i];
    scripts += "\n</script>\n";
  }
  std::string page(resources::kTemplate);
  auto replace = [&](const std::string& key, const std::string& value) {
    const size_t at = page.find(key);
    require(at != std::string::npos, "report: the template lacks " + key);
    page.replace(at, key.size(), value);
  };
  replace("<!--VIDMAP_SCRIPTS-->", scripts);
  replace("/*VIDMAP_DATA*/", json);
  return page;
}

fs::path writeReport(const fs::path& dir, const ReportOptions& options, const fs::path& output) {
  const fs::path path = output.empty() ? dir / "report.html" : output;
  io::writeTextAtomically(path, renderReport(collectReportData(dir, options)));
  return path;
}

}  // namespace vidmap::report
