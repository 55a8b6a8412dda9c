// PatchMatch MVS benchmark; prints one JSON object.
//   mvs_bench synthetic [--width 640 --height 480 --views 6 --sources 5 --reps 3 --device cuda]
//   mvs_bench synthetic --width W --height H --views N --write DIR   (model + images only)
//   any mode: --multi-res 1 [--fine-iterations 3]   (coarse-to-fine photometric pass),
//             --min-pixels N --max-normal-error DEG   (fusion)
//   mvs_bench strecha DIR [--max-size 1536 --sources 8 --reps 3 --device cuda --ply OUT.ply]
//             --reps -1: loading only, views one at a time and in parallel
//   mvs_bench middlebury DIR/templeSparseRing [... --render OUT.png --render-view K]
//   mvs_bench fusion [--width 1536 --height 1024 --views 11 --sources 8 --reps 3]
//   any mode: --fusion-device cpu|cuda   (fusion's per-pixel phase; default: --device)
//   mvs_bench tum TUM_DIR VIDMAP_OUT [--model 0]   vidmap's depth maps against the Kinect's
//   mvs_bench render CLOUD.ply OUT.png MODE DIR [--render-view K]   (MODE strecha|middlebury)
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

#include <map>
#include <sstream>

#include "vidmap/geometry/similarity.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/ply.h"
#include "vidmap/mvs/depth_map_io.h"
#include "vidmap/mvs/fusion.h"
#include "vidmap/mvs/patch_match.h"
#include "vidmap/mvs/testing/synthetic.h"
#include "vidmap/sfm/model_trajectory.h"
#include "vidmap/sfm/trajectory_eval.h"

using namespace vidmap;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Args {
  std::string mode, dir, dir2, device = "cuda", fusionDevice, ply, write, render;
  int width = 640, height = 480, views = 6, sources = 5, reps = 3, maxSize = 1536;
  int renderView = 0, model = 0, multiRes = 0, fineIt = -1;
  double depthFactor = 1;  // tum: the Kinect depth times this (TUM lists ds = 1.035 for fr1)
  mvs::FusionOptions fusion;
  int photoIt = -1, geoIt = -1;
  int textures = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2)
    throw Error("usage: mvs_bench synthetic|strecha|middlebury|tum|render ... [options]");
  a.mode = argv[1];
  int i = 2;
  if (a.mode == "strecha" || a.mode == "middlebury") {
    if (argc < 3) throw Error("mvs_bench " + a.mode + " DIR");
    a.dir = argv[2];
    i = 3;
  } else if (a.mode == "tum") {
    if (argc < 4) throw Error("mvs_bench tum TUM_DIR VIDMAP_OUT");
    a.dir = argv[2], a.dir2 = argv[3];
    i = 4;
  } else if (a.mode == "render") {
    if (argc < 6) throw Error("mvs_bench render CLOUD.ply OUT.png strecha|middlebury DIR");
    a.ply = argv[2], a.render = argv[3], a.write = argv[4], a.dir = argv[5];
    i = 6;
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
    else if (k == "--parallel-clustering")
      a.fusion.parallelClusteringThreads = std::stoi(v);
    else if (k == "--textures")
      a.textures = std::stoi(v);
    else if (k == "--reps")
      a.reps = std::stoi(v);
    else if (k == "--max-size")
      a.maxSize = std::stoi(v);
    else if (k == "--device")
      a.device = v;
    else if (k == "--fusion-device")
      a.fusionDevice = v;
    else if (k == "--ply")
      a.ply = v;
    else if (k == "--write")
      a.write = v;
    else if (k == "--photometric-iterations")
      a.photoIt = std::stoi(v);
    else if (k == "--geometric-iterations")
      a.geoIt = std::stoi(v);
    else if (k == "--render")
      a.render = v;
    else if (k == "--render-view")
      a.renderView = std::stoi(v);
    else if (k == "--model")
      a.model = std::stoi(v);
    else if (k == "--min-pixels")
      a.fusion.minPixels = std::stoi(v);
    else if (k == "--max-normal-error")
      a.fusion.maxNormalErrorDeg = std::stod(v);
    else if (k == "--depth-factor")
      a.depthFactor = std::stod(v);
    else if (k == "--multi-res")
      a.multiRes = std::stoi(v);
    else if (k == "--fine-iterations")
      a.fineIt = std::stoi(v);
    else
      throw Error("unknown option " + k);
  }
  const std::string& fd = a.fusionDevice.empty() ? a.device : a.fusionDevice;
  a.fusion.backend = fd == "cpu" ? mvs::Backend::kCpu : mvs::Backend::kCuda;
  return a;
}

// The depth range [0.4 x nearest, 2 x farthest] of the point nearest to all optical axes.
void rangeAroundAxes(const std::vector<Eigen::Vector3d>& centers,
                     const std::vector<Eigen::Vector3d>& axes, double* dmin, double* dmax) {
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
  rangeAroundAxes(centers, axes, dmin, dmax);
  return m;
}

// Middlebury's multi-view rings (*_par.txt: "name k11..k33 r11..r33 t1 t2 t3", P = K [R | t]),
// cameras as a COLMAP model without points and the depth range as for Strecha's.
io::ColmapModel middleburyModel(const std::string& dir, double* dmin, double* dmax) {
  std::string par;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().string().ends_with("_par.txt")) par = e.path().string();
  if (par.empty()) throw Error("no *_par.txt in " + dir);
  std::ifstream f(par);
  int n = 0;
  f >> n;
  io::ColmapModel m;
  std::vector<Eigen::Vector3d> centers, axes;
  for (std::uint32_t id = 1; id <= static_cast<std::uint32_t>(n); ++id) {
    std::string name;
    double K[9], R[9], t[3];
    f >> name;
    for (double& x : K) f >> x;
    for (double& x : R) f >> x;
    for (double& x : t) f >> x;
    if (!f) throw Error("bad line " + std::to_string(id) + " in " + par);
    const io::ImageHeader h = io::readImageHeader(dir + "/" + name);
    io::ColmapCamera cam;
    cam.id = id;
    cam.model = io::CameraModelId::kPinhole;
    cam.width = static_cast<std::uint64_t>(h.width),
    cam.height = static_cast<std::uint64_t>(h.height);
    cam.params = {K[0], K[4], K[2] + 0.5, K[5] + 0.5};
    m.cameras[id] = cam;
    Eigen::Matrix3d Rw2c;
    Rw2c << R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8];
    const Eigen::Quaterniond q(Rw2c);
    io::ColmapImage im;
    im.id = id, im.camera_id = id, im.name = name;
    im.qvec = {q.w(), q.x(), q.y(), q.z()};
    im.tvec = {t[0], t[1], t[2]};
    m.images[id] = im;
    centers.push_back(-Rw2c.transpose() * Eigen::Vector3d(t[0], t[1], t[2]));
    axes.push_back(Rw2c.row(2).transpose());
  }
  rangeAroundAxes(centers, axes, dmin, dmax);
  return m;
}

// Two views of a cloud side by side: from view v's camera and from it turned 30 degrees
// about the image's vertical axis around the cloud's median depth; points splatted 2 x 2
// with a z-buffer on white, at most 480 pixels wide per panel.
void renderCloud(const std::vector<io::PlyPoint>& pts, const mvs::View& v, const std::string& out) {
  const double k = std::min(1.0, 480.0 / v.width);
  const int W = static_cast<int>(v.width * k), H = static_cast<int>(v.height * k);
  std::vector<double> depths;
  for (const io::PlyPoint& p : pts) {
    const double z = (v.R * Eigen::Vector3d(p.xyz[0], p.xyz[1], p.xyz[2]) + v.t).z();
    if (z > 0) depths.push_back(z);
  }
  const double dmed = median(depths);
  const Eigen::Vector3d pivot = v.R.transpose() * (Eigen::Vector3d(0, 0, dmed) - v.t);
  RgbImage img(2 * W, H);
  for (long i = 0; i < img.pixels(); ++i) img.data()[i] = {255, 255, 255};
  for (int panel = 0; panel < 2; ++panel) {
    const double a = panel * 30.0 * M_PI / 180;
    const Eigen::Matrix3d R =
        Eigen::AngleAxisd(a, Eigen::Vector3d::UnitY()).toRotationMatrix() * v.R;
    const Eigen::Vector3d t = Eigen::Vector3d(0, 0, dmed) - R * pivot;
    std::vector<float> zbuf(static_cast<size_t>(W) * H, 1e30f);
    for (const io::PlyPoint& p : pts) {
      const Eigen::Vector3d c = R * Eigen::Vector3d(p.xyz[0], p.xyz[1], p.xyz[2]) + t;
      if (c.z() <= 0) continue;
      const int x = static_cast<int>(std::floor(k * (v.fx * c.x() / c.z() + v.cx) + 0.5));
      const int y = static_cast<int>(std::floor(k * (v.fy * c.y() / c.z() + v.cy) + 0.5));
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const int xx = x + dx, yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= W || yy >= H) continue;
          float& zb = zbuf[static_cast<size_t>(yy) * W + xx];
          if (c.z() >= zb) continue;
          zb = static_cast<float>(c.z());
          img(panel * W + xx, yy) = {p.rgb[0], p.rgb[1], p.rgb[2]};
        }
    }
  }
  io::writePng(out, img);
}

// vidmap's depth maps (OUT/dense/stereo) of a TUM RGB-D sequence against the Kinect's depth,
// after the similarity that maps the model's camera centres onto the ground truth (Umeyama).
// A depth-map pixel's ray is distorted by the model's camera to find the raw image pixel that
// the registered Kinect depth belongs to (nearest pixel; depth PNG / 5000 = metres).
int tumEval(const Args& a) {
  namespace fs = std::filesystem;
  const fs::path out = a.dir2, tum = a.dir;
  const fs::path modelDir = out / "sparse" / std::to_string(a.model);
  const io::ColmapModel model = io::readColmapModel(modelDir);
  const auto est = sfm::modelTrajectory(model, sfm::readImageListTimes(tum / "rgb.txt"));
  const auto gt = sfm::readTumTrajectory(tum / "groundtruth.txt");
  const auto pairs = sfm::associate(est, gt, 0.02);
  geometry::Vec3List src, dst;
  for (const auto& p : pairs) src.push_back(p.est.c), dst.push_back(p.gt.c);
  const geometry::Sim3 sim = geometry::alignUmeyama(src, dst, true);
  double ate = 0;
  for (size_t i = 0; i < src.size(); ++i) ate += (sim.apply(src[i]) - dst[i]).squaredNorm();
  ate = std::sqrt(ate / src.size());
  std::map<std::string, std::string> depthOf;  // rgb file name -> depth path
  {
    std::ifstream f(tum / "associations.txt");
    std::string line;
    while (std::getline(f, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream l(line);
      std::string t1, rgb, t2, depth;
      l >> t1 >> rgb >> t2 >> depth;
      depthOf[fs::path(rgb).filename().string()] = depth;
    }
  }
  std::vector<double> errs;
  std::int64_t truthPixels = 0, estimates = 0, within5 = 0, frames = 0;
  std::vector<double> ratios;  // Kinect / scaled estimate, per frame median
  int mapW = 0, mapH = 0;
  for (const auto& [id, im] : model.images) {
    fs::path dm = out / "dense" / "stereo" / "depth_maps" / (im.name + ".geometric.bin");
    if (!fs::exists(dm))
      dm = out / "dense" / "stereo" / "depth_maps" / (im.name + ".photometric.bin");
    const auto it = depthOf.find(fs::path(im.name).filename().string());
    if (!fs::exists(dm) || it == depthOf.end()) continue;
    const mvs::DenseArray D = mvs::readDenseArray(dm);
    const Image<std::uint16_t> kinect = io::readGray16(tum / it->second);
    const io::ColmapCamera& cam = model.cameras.at(im.camera_id);
    double fx, fy, cx, cy;  // native pinhole, pixel centres at integers
    if (cam.model == io::CameraModelId::kSimpleRadial || cam.model == io::CameraModelId::kRadial ||
        cam.model == io::CameraModelId::kSimplePinhole)
      fx = fy = cam.params[0], cx = cam.params[1] - 0.5, cy = cam.params[2] - 0.5;
    else
      fx = cam.params[0], fy = cam.params[1], cx = cam.params[2] - 0.5, cy = cam.params[3] - 0.5;
    const double sx = double(D.width) / cam.width, sy = double(D.height) / cam.height;
    mapW = D.width, mapH = D.height;
    ++frames;
    std::vector<double> frameRatios;
    for (int y = 0; y < D.height; ++y)
      for (int x = 0; x < D.width; ++x) {
        // The map's pixel at native pinhole coordinates, then its raw (distorted) pixel.
        const double xn = (x + 0.5) / sx - 0.5, yn = (y + 0.5) / sy - 0.5;
        double du, dv;
        mvs::distortNormalized(cam, (xn - cx) / fx, (yn - cy) / fy, &du, &dv);
        const int px = static_cast<int>(std::lround(fx * du + cx));
        const int py = static_cast<int>(std::lround(fy * dv + cy));
        if (px < 0 || py < 0 || px >= kinect.width() || py >= kinect.height()) continue;
        const double k = a.depthFactor * kinect(px, py) / 5000.0;
        if (k <= 0) continue;
        ++truthPixels;
        const float d = D.data[static_cast<size_t>(y) * D.width + x];
        if (!(d > 0)) continue;
        ++estimates;
        const double e = std::abs(sim.s * d - k);
        errs.push_back(e);
        within5 += e <= 0.05;
        frameRatios.push_back(k / (sim.s * d));
      }
    if (!frameRatios.empty()) ratios.push_back(median(frameRatios));
  }
  std::sort(errs.begin(), errs.end());
  auto frac = [&](double tau) {
    return errs.empty() ? 0.0
                        : double(std::upper_bound(errs.begin(), errs.end(), tau) - errs.begin()) /
                              errs.size();
  };
  std::printf("{\n  \"bench\": \"mvs\", \"case\": \"tum\", \"model\": \"%s\",\n",
              modelDir.string().c_str());
  std::printf(
      "  \"depth_factor\": %.4f, \"frames\": %lld, \"map_width\": %d, \"map_height\": %d, "
      "\"sim3_pairs\": %zu, "
      "\"sim3_scale\": %.6f, \"ate_rmse_m\": %.4f,\n",
      a.depthFactor, (long long)frames, mapW, mapH, pairs.size(), sim.s, ate);
  std::printf("  \"kinect_pixels\": %lld, \"estimates\": %lld, \"density\": %.4f,\n",
              (long long)truthPixels, (long long)estimates,
              truthPixels ? double(estimates) / truthPixels : 0.0);
  std::printf(
      "  \"median_abs_error_m\": %.4f, \"within_2cm\": %.4f, \"within_5cm\": %.4f, "
      "\"within_10cm\": %.4f,\n",
      errs.empty() ? 0.0 : errs[errs.size() / 2], frac(0.02), frac(0.05), frac(0.10));
  std::printf("  \"completeness_5cm\": %.4f, \"median_frame_scale_ratio\": %.4f\n}\n",
              truthPixels ? double(within5) / truthPixels : 0.0, median(ratios));
  return 0;
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

// Fusion alone on maps made from the exact depth of the synthetic facade (normals from the
// depth's neighbours): the size of a real dense stage without running PatchMatch, so the
// CPU's fusion can be timed on any machine (--device cpu), and the CUDA phase 1 against it.
int fusionBench(const Args& a) {
  const mvs::testing::SyntheticMvs scene =
      mvs::testing::makeFacadeMvs(a.width, a.height, a.views, 1.2);
  mvs::WorkspaceOptions wo;
  wo.maxSources = a.sources;
  const mvs::Workspace ws = mvs::buildWorkspace(
      scene.model, [&](const io::ColmapImage& im) { return scene.images.at(im.id); }, wo);
  std::vector<mvs::DepthMap> maps(ws.views.size());
  for (size_t v = 0; v < ws.views.size(); ++v) {
    const mvs::View& V = ws.views[v];
    const Image<float>& d = scene.depth[v];
    mvs::DepthMap& m = maps[v];
    m.resize(V.width, V.height);
    const size_t n = static_cast<size_t>(V.width) * V.height;
    auto P = [&](int x, int y) {
      const double z = d(x, y);
      return Eigen::Vector3d((x - V.cx) / V.fx * z, (y - V.cy) / V.fy * z, z);
    };
    for (int y = 0; y < V.height; ++y)
      for (int x = 0; x < V.width; ++x) {
        const size_t i = static_cast<size_t>(y) * V.width + x;
        if (!(d(x, y) > 0) || x == 0 || y == 0 || x + 1 == V.width || y + 1 == V.height) continue;
        Eigen::Vector3d nrm = (P(x + 1, y) - P(x - 1, y)).cross(P(x, y + 1) - P(x, y - 1));
        if (!(nrm.norm() > 0)) continue;
        nrm.normalize();
        if (nrm.dot(P(x, y)) > 0) nrm = -nrm;
        m.depth[i] = d(x, y), m.cost[i] = 0;
        for (int c = 0; c < 3; ++c) m.normal[c * n + i] = static_cast<float>(nrm[c]);
      }
  }
  // One warm-up run (the CUDA context), then the timed ones; the CPU's on the same maps, and
  // whether its cloud equals the timed backend's byte for byte.
  auto timed = [&](const mvs::FusionOptions& fo, std::vector<double>* total,
                   std::vector<double>* match, std::vector<double>* cluster, mvs::FusionStats* st) {
    std::vector<io::PlyPoint> pts = mvs::fuseDepthMaps(ws, maps, fo, st);
    for (int k = 0; k < std::max(1, a.reps); ++k) {
      pts = mvs::fuseDepthMaps(ws, maps, fo, st);
      total->push_back(st->totalMs), match->push_back(st->matchMs);
      cluster->push_back(st->clusterMs);
    }
    return pts;
  };
  std::vector<double> total, match, cluster, cpuTotal, cpuMatch, cpuCluster;
  mvs::FusionStats st, cpuSt;
  const std::vector<io::PlyPoint> pts = timed(a.fusion, &total, &match, &cluster, &st);
  mvs::FusionOptions cpu = a.fusion;
  cpu.backend = mvs::Backend::kCpu;
  const std::vector<io::PlyPoint> cpuPts = timed(cpu, &cpuTotal, &cpuMatch, &cpuCluster, &cpuSt);
  bool same = pts.size() == cpuPts.size();
  for (size_t i = 0; same && i < pts.size(); ++i)
    same = pts[i].xyz == cpuPts[i].xyz && pts[i].normal == cpuPts[i].normal &&
           pts[i].rgb == cpuPts[i].rgb;
  std::printf(
      "{\"bench\": \"mvs_fusion\", \"width\": %d, \"height\": %d, \"views\": %zu, "
      "\"fusion_ms\": %.1f, \"fusion_match_ms\": %.1f, \"fusion_cluster_ms\": %.1f, "
      "\"points\": %lld, \"valid_pixels\": %lld, \"fused_pixels\": %lld, \"records\": %lld, "
      "\"dependent_records\": %lld, \"fusion_backend\": \"%s\", \"fusion_plan_peak_bytes\": %lld, "
      "\"fusion_device_peak_bytes\": %lld, \"cpu_fusion_ms\": %.1f, \"cpu_fusion_match_ms\": %.1f, "
      "\"cpu_fusion_cluster_ms\": %.1f, \"same_points_as_cpu\": %s",
      a.width, a.height, ws.views.size(), median(total), median(match), median(cluster),
      (long long)st.points, (long long)st.validPixels, (long long)st.fusedPixels,
      (long long)st.records, (long long)st.dependentRecords, st.backend.c_str(),
      (long long)st.planPeakBytes, (long long)st.devicePeakBytes, median(cpuTotal),
      median(cpuMatch), median(cpuCluster), same ? "true" : "false");
  for (const gpu::KernelStat& k : st.kernels)
    std::printf(", \"%s_gpu_ms\": %.3f", k.name.c_str(), k.gpuMs);
  std::printf("}\n");
  return 0;
}
}  // namespace

int main(int argc, char** argv) try {
  Args a = parse(argc, argv);
  if (a.mode == "tum") return tumEval(a);
  if (a.mode == "fusion") return fusionBench(a);
  if (a.mode == "render") {  // a cloud written earlier, seen from a view of its data set
    double lo, hi;
    const bool strecha = a.write == "strecha";
    mvs::WorkspaceOptions wo;
    wo.maxImageSize = a.maxSize;
    io::ColmapModel m = strecha ? strechaModel(a.dir, &lo, &hi) : middleburyModel(a.dir, &lo, &hi);
    wo.depthMin = lo, wo.depthMax = hi;
    const mvs::Workspace ws = mvs::loadWorkspace(m, strecha ? a.dir + "/images" : a.dir, wo);
    renderCloud(io::readPly(a.ply), ws.views.at(a.renderView), a.render);
    return 0;
  }
  mvs::PatchMatchOptions o;
  o.backend = a.device == "cpu" ? mvs::Backend::kCpu : mvs::Backend::kCuda;
  if (a.photoIt >= 0) o.photometricIterations = a.photoIt;
  if (a.geoIt >= 0) o.geometricIterations = a.geoIt;
  o.multiResolution = a.multiRes != 0;
  o.textures = a.textures != 0;
  if (a.fineIt >= 0) o.fineIterations = a.fineIt;
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
  } else if (a.mode == "strecha" || a.mode == "middlebury") {
    double lo, hi;
    const bool strecha = a.mode == "strecha";
    io::ColmapModel m = strecha ? strechaModel(a.dir, &lo, &hi) : middleburyModel(a.dir, &lo, &hi);
    if (!a.write.empty()) {  // the cameras as a COLMAP model, for `vidmap dense`
      io::writeColmapModel(m, a.write, io::ColmapFormat::kText);
      std::printf("{\"depth_min\": %.6f, \"depth_max\": %.6f}\n", lo, hi);
      return 0;
    }
    wo.maxImageSize = a.maxSize;
    wo.depthMin = lo, wo.depthMax = hi;
    const std::string images = strecha ? a.dir + "/images" : a.dir;
    if (a.reps < 0) {  // loading only: views one at a time against views in parallel
      double ms[2];
      for (int par = 0; par < 2; ++par) {
        const auto t0 = std::chrono::steady_clock::now();
        ws = mvs::buildWorkspace(
            m, [&](const io::ColmapImage& im) { return io::readRgb(images + "/" + im.name); }, wo,
            par == 1);
        ms[par] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count();
      }
      std::printf("{\"load_sequential_ms\": %.1f, \"load_parallel_ms\": %.1f, \"views\": %zu}\n",
                  ms[0], ms[1], ws.views.size());
      return 0;
    }
    ws = mvs::loadWorkspace(m, images, wo);
  } else {
    throw Error("unknown mode " + a.mode);
  }
  double loadMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tl).count();
  // Warm-up, then the timed runs.
  mvs::PatchMatchResult r = mvs::runPatchMatch(ws, o);
  std::vector<double> photo, geo, fusion, match, cluster, stage;
  mvs::FusionStats fs;
  std::vector<io::PlyPoint> points;
  for (int k = 0; k < a.reps; ++k) {
    auto ts = std::chrono::steady_clock::now();
    r = mvs::runPatchMatch(ws, o);
    photo.push_back(r.stats.photometricMs / r.stats.references);
    geo.push_back(r.stats.geometricMs / r.stats.references);
    auto t0 = std::chrono::steady_clock::now();
    points = mvs::fuseDepthMaps(ws, r.final(), a.fusion, &fs);
    const auto t1 = std::chrono::steady_clock::now();
    fusion.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    match.push_back(fs.matchMs);
    cluster.push_back(fs.clusterMs);
    // The whole call, context creation, half-size workspace and host copies included.
    stage.push_back(std::chrono::duration<double, std::milli>(t1 - ts).count());
  }
  if (!a.ply.empty()) io::writePly(a.ply, points, true);
  if (!a.render.empty()) renderCloud(points, ws.views.at(a.renderView), a.render);
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
  std::printf("  \"multi_resolution\": %s, \"fine_iterations\": %d, \"coarse_ms\": %.1f,\n",
              o.multiResolution ? "true" : "false", o.fineIterations, r.stats.coarseMs);
  std::printf("  \"load_ms\": %.1f,\n", loadMs);
  std::printf(
      "  \"photometric_ms_per_image\": %.3f, \"geometric_ms_per_image\": %.3f, "
      "\"fusion_ms\": %.1f,\n",
      median(photo), median(geo), median(fusion));
  std::printf("  \"dense_stage_ms\": %.1f,\n",
              (median(photo) + median(geo)) * r.stats.references + median(fusion));
  std::printf(
      "  \"textures\": %s, \"fusion_match_ms\": %.1f, \"stage_wall_ms\": %.1f, "
      "\"stage_with_load_ms\": %.1f,\n",
      o.textures ? "true" : "false", median(match), median(stage), median(stage) + loadMs);
  std::printf(
      "  \"fusion_backend\": \"%s\", \"fusion_cluster_ms\": %.1f, \"fusion_plan_peak_bytes\": "
      "%lld, \"fusion_device_peak_bytes\": %lld,\n",
      fs.backend.c_str(), median(cluster), (long long)fs.planPeakBytes,
      (long long)fs.devicePeakBytes);
  std::printf("  \"plan_peak_bytes\": %lld, \"device_peak_bytes\": %lld, \"points\": %zu,\n",
              (long long)r.stats.planPeakBytes, (long long)r.stats.devicePeakBytes, points.size());
  std::printf("  \"kernels_gpu_ms_per_image\": {");
  for (size_t k = 0; k < r.stats.kernels.size(); ++k)
    std::printf("%s\"%s\": %.3f", k ? ", " : "", r.stats.kernels[k].name.c_str(),
                r.stats.kernels[k].gpuMs / r.stats.references);
  for (const gpu::KernelStat& k : fs.kernels)  // fusion's, per reference
    std::printf(", \"%s\": %.3f", k.name.c_str(), k.gpuMs / std::max(1, r.stats.references));
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
