// PatchMatch MVS benchmark; prints one JSON object.
//   mvs_bench synthetic [--width 640 --height 480 --views 6 --sources 5 --reps 3 --device cuda]
//   mvs_bench synthetic --width W --height H --views N --write DIR   (model + images only)
//   mvs_bench strecha DIR [--max-size 1536 --sources 8 --reps 3 --device cuda --ply OUT.ply]
// Times: wall ms of each pass per reference image (medians over --reps runs after one
// warm-up run; the pass includes its uploads and downloads), GPU ms per kernel per image
// (CUDA events, last run), fusion ms. Synthetic: depth accuracy and completeness of the
// middle view and fused-cloud F1 against the exact scene.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "vidmap/io/colmap_model.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/ply.h"
#include "vidmap/mvs/fusion.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/mvs/testing/synthetic.h"

using namespace vidmap;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Args {
  std::string mode, dir, device = "cuda", ply, write;
  int width = 640, height = 480, views = 6, sources = 5, reps = 3, maxSize = 1536;
  int photoIt = -1, geoIt = -1;
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) throw Error("usage: mvs_bench synthetic|strecha [DIR] [options]");
  a.mode = argv[1];
  int i = 2;
  if (a.mode == "strecha") {
    if (argc < 3) throw Error("mvs_bench strecha DIR");
    a.dir = argv[2];
    i = 3;
  }
  for (; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--width")
      a.width = std::stoi(v);
    else if (k == "--height")
      a.height = std::stoi(v);
    else if (k == "--views")
      a.views = std::stoi(v);
    else if (k == "--sources")
      a.sources = std::stoi(v);
    else if (k == "--reps")
      a.reps = std::stoi(v);
    else if (k == "--max-size")
      a.maxSize = std::stoi(v);
    else if (k == "--device")
      a.device = v;
    else if (k == "--ply")
      a.ply = v;
    else if (k == "--write")
      a.write = v;
    else if (k == "--photometric-iterations")
      a.photoIt = std::stoi(v);
    else if (k == "--geometric-iterations")
      a.geoIt = std::stoi(v);
    else
      throw Error("unknown option " + k);
  }
  return a;
}

// Strecha's cameras (K, R camera-to-world, C) as a COLMAP model without points, and the depth
// range around the point nearest to all optical axes.
io::ColmapModel strechaModel(const std::string& dir, double* dmin, double* dmax) {
  io::ColmapModel m;
  std::vector<Eigen::Vector3d> centers, axes;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/images"))
    if (e.path().extension() == ".jpg") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::uint32_t id = 1;
  for (const std::string& name : names) {
    std::ifstream f(dir + "/gt_dense_cameras/" + name + ".camera");
    if (!f) throw Error("no camera for " + name);
    double K[9], z[3], R[9], C[3], w, h;
    for (double& x : K) f >> x;
    for (double& x : z) f >> x;
    for (double& x : R) f >> x;
    for (double& x : C) f >> x;
    f >> w >> h;
    io::ColmapCamera cam;
    cam.id = id;
    cam.model = io::CameraModelId::kPinhole;
    cam.width = static_cast<std::uint64_t>(w), cam.height = static_cast<std::uint64_t>(h);
    cam.params = {K[0], K[4], K[2] + 0.5, K[5] + 0.5};
    m.cameras[id] = cam;
    Eigen::Matrix3d Rc2w;
    Rc2w << R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8];
    Eigen::Matrix3d Rw2c = Rc2w.transpose();
    Eigen::Vector3d c(C[0], C[1], C[2]);
    Eigen::Vector3d t = -Rw2c * c;
    Eigen::Quaterniond q(Rw2c);
    io::ColmapImage im;
    im.id = id, im.camera_id = id, im.name = name;
    im.qvec = {q.w(), q.x(), q.y(), q.z()};
    im.tvec = {t.x(), t.y(), t.z()};
    m.images[id] = im;
    centers.push_back(c);
    axes.push_back(Rw2c.row(2).transpose());
    ++id;
  }
  Eigen::Matrix3d A = Eigen::Matrix3d::Zero();
  Eigen::Vector3d b = Eigen::Vector3d::Zero();
  for (size_t i = 0; i < centers.size(); ++i) {
    Eigen::Matrix3d P = Eigen::Matrix3d::Identity() - axes[i] * axes[i].transpose();
    A += P, b += P * centers[i];
  }
  Eigen::Vector3d X = A.ldlt().solve(b);
  double lo = 1e30, hi = 0;
  for (size_t i = 0; i < centers.size(); ++i) {
    double d = axes[i].dot(X - centers[i]);
    lo = std::min(lo, d), hi = std::max(hi, d);
  }
  *dmin = 0.4 * lo, *dmax = 2.0 * hi;
  return m;
}

void printDepth(const char* name, const mvs::DepthMap& m, const Image<float>& truth) {
  std::printf("    \"%s\": {", name);
  for (double tol : {0.01, 0.02, 0.05}) {
    auto s = mvs::testing::scoreDepth(m, truth, tol);
    std::printf("\"within_%g\": {\"completeness\": %.4f, \"accuracy\": %.4f}, ", tol,
                s.completeness, s.accuracy);
  }
  std::printf("\"median_rel_error\": %.5f}",
              mvs::testing::scoreDepth(m, truth, 0.01).medianRelError);
}

}  // namespace

int main(int argc, char** argv) try {
  Args a = parse(argc, argv);
  mvs::PatchMatchOptions o;
  o.backend = a.device == "cpu" ? mvs::Backend::kCpu : mvs::Backend::kCuda;
  if (a.photoIt >= 0) o.photometricIterations = a.photoIt;
  if (a.geoIt >= 0) o.geometricIterations = a.geoIt;
  mvs::WorkspaceOptions wo;
  wo.maxSources = a.sources;
  std::optional<mvs::testing::SyntheticMvs> scene;
  mvs::Workspace ws;
  auto tl = std::chrono::steady_clock::now();
  if (a.mode == "synthetic") {
    scene = mvs::testing::makeFacadeMvs(a.width, a.height, a.views, 1.2);
    if (!a.write.empty()) {  // the scene as a COLMAP model and images, for `vidmap dense`
      io::writeColmapModel(scene->model, a.write + "/sparse", io::ColmapFormat::kText);
      std::filesystem::create_directories(a.write + "/images");
      for (const auto& [id, im] : scene->model.images)
        io::writePng(a.write + "/images/" + im.name, scene->images.at(id));
      return 0;
    }
    ws = mvs::buildWorkspace(
        scene->model, [&](const io::ColmapImage& im) { return scene->images.at(im.id); }, wo);
  } else if (a.mode == "strecha") {
    double lo, hi;
    io::ColmapModel m = strechaModel(a.dir, &lo, &hi);
    wo.maxImageSize = a.maxSize;
    wo.depthMin = lo, wo.depthMax = hi;
    ws = mvs::loadWorkspace(m, a.dir + "/images", wo);
  } else {
    throw Error("unknown mode " + a.mode);
  }
  double loadMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tl).count();
  // Warm-up, then the timed runs.
  mvs::PatchMatchResult r = mvs::runPatchMatch(ws, o);
  std::vector<double> photo, geo, fusion;
  std::vector<io::PlyPoint> points;
  for (int k = 0; k < a.reps; ++k) {
    r = mvs::runPatchMatch(ws, o);
    photo.push_back(r.stats.photometricMs / r.stats.references);
    geo.push_back(r.stats.geometricMs / r.stats.references);
    auto t0 = std::chrono::steady_clock::now();
    points = mvs::fuseDepthMaps(ws, r.final(), mvs::FusionOptions{});
    fusion.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!a.ply.empty()) io::writePly(a.ply, points, true);
  double srcSum = 0;
  for (const auto& v : ws.views) srcSum += v.sources.size();
  std::printf("{\n  \"bench\": \"mvs\", \"case\": \"%s\", \"backend\": \"%s\",\n", a.mode.c_str(),
              r.stats.backend.c_str());
  std::printf(
      "  \"width\": %d, \"height\": %d, \"views\": %zu, \"references\": %d, "
      "\"mean_sources\": %.2f, \"top_k\": %d,\n",
      ws.views[0].width, ws.views[0].height, ws.views.size(), r.stats.references,
      srcSum / ws.views.size(), o.topK);
  std::printf("  \"photometric_iterations\": %d, \"geometric_iterations\": %d, \"reps\": %d,\n",
              o.photometricIterations, o.geometricIterations, a.reps);
  std::printf("  \"load_ms\": %.1f,\n", loadMs);
  std::printf(
      "  \"photometric_ms_per_image\": %.3f, \"geometric_ms_per_image\": %.3f, "
      "\"fusion_ms\": %.1f,\n",
      median(photo), median(geo), median(fusion));
  std::printf("  \"dense_stage_ms\": %.1f,\n",
              (median(photo) + median(geo)) * r.stats.references + median(fusion));
  std::printf("  \"plan_peak_bytes\": %lld, \"device_peak_bytes\": %lld, \"points\": %zu,\n",
              (long long)r.stats.planPeakBytes, (long long)r.stats.devicePeakBytes, points.size());
  std::printf("  \"kernels_gpu_ms_per_image\": {");
  for (size_t k = 0; k < r.stats.kernels.size(); ++k)
    std::printf("%s\"%s\": %.3f", k ? ", " : "", r.stats.kernels[k].name.c_str(),
                r.stats.kernels[k].gpuMs / r.stats.references);
  std::printf("}");
  if (scene) {
    const int mid = a.views / 2;
    std::printf(",\n  \"depth_mid_view\": {\n");
    printDepth("photometric", r.photometric[mid], scene->depth[mid]);
    if (!r.geometric.empty()) {
      std::printf(",\n");
      printDepth("geometric", r.geometric[mid], scene->depth[mid]);
    }
    std::printf("\n  },\n  \"cloud\": {");
    double medDepth = 0.5 * (ws.views[mid].depthMin + ws.views[mid].depthMax) / 1.0;
    (void)medDepth;
    bool first = true;
    for (double tau : {0.03, 0.06, 0.12}) {
      auto c = mvs::testing::scoreCloud(points, *scene, tau);
      std::printf("%s\"tau_%g_m\": {\"accuracy\": %.4f, \"completeness\": %.4f, \"f1\": %.4f}",
                  first ? "" : ", ", tau, c.accuracy, c.completeness, c.f1);
      first = false;
    }
    std::printf("}");
  }
  std::printf("\n}\n");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "mvs_bench: %s\n", e.what());
  return 1;
}
