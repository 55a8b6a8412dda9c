#include "vidmap/mvs/workspace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <Eigen/Geometry>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/core/parallel.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/resize.h"

namespace vidmap::mvs {

void WorkspaceOptions::check() const {
  checkRange("mvs.max_image_size", maxImageSize, 0, 1 << 16);
  checkRange("mvs.max_sources", maxSources, 1, 12);
  checkRange("mvs.min_triangulation_angle_deg", minTriangulationAngleDeg, 0.0, 60.0);
  checkRange("mvs.min_shared_points", minSharedPoints, 1, 1 << 20);
  checkRange("mvs.depth_percentile_low", depthPercentileLow, 0.0, 0.5);
  checkRange("mvs.depth_percentile_high", depthPercentileHigh, 0.5, 1.0);
  checkRange("mvs.depth_margin", depthMargin, 0.0, 10.0);
  checkRange("mvs.depth_min", depthMin, 0.0, 1e9);
  checkRange("mvs.depth_max", depthMax, depthMin, 1e9);
  checkRange("mvs.max_axis_angle_deg", maxAxisAngleDeg, 0.0, 180.0);
}

Image<std::uint8_t> toGray8(const RgbImage& rgb) {
  Image<std::uint8_t> g(rgb.width(), rgb.height());
  for (long i = 0; i < rgb.pixels(); ++i) {
    const Rgb8& p = rgb.data()[i];
    float y = 0.299f * p.r + 0.587f * p.g + 0.114f * p.b + 0.5f;
    g.data()[i] = static_cast<std::uint8_t>(y >= 255.0f ? 255.0f : y);
  }
  return g;
}

using io::CameraModelId;

// The model's distortion of the normalised coordinates (u, v): core/camera_model.h.
void distortNormalized(const io::ColmapCamera& c, double u, double v, double* du, double* dv) {
  double d[2];
  vidmap::distortNormalized(c.model, c.params.data() + modelDistortionIndex(c.model), u, v, d);
  *du = d[0], *dv = d[1];
}

namespace {

void pinholeOf(const io::ColmapCamera& c, double* fx, double* fy, double* cx, double* cy) {
  const std::vector<double>& p = c.params;
  switch (c.model) {
    case CameraModelId::kSimplePinhole:
    case CameraModelId::kSimpleRadial:
    case CameraModelId::kRadial:
      *fx = *fy = p[0], *cx = p[1], *cy = p[2];
      return;
    case CameraModelId::kPinhole:
    case CameraModelId::kOpenCV:
    case CameraModelId::kFullOpenCV:
      *fx = p[0], *fy = p[1], *cx = p[2], *cy = p[3];
      return;
    case CameraModelId::kBal:
      break;
  }
  throw Error("mvs: unsupported camera model " + io::cameraModelName(c.model));
}

Rgb8 sampleRgb(const RgbImage& im, double x, double y) {
  if (!(x >= 0 && y >= 0 && x <= im.width() - 1 && y <= im.height() - 1)) return {};
  int x0 = static_cast<int>(x), y0 = static_cast<int>(y);
  int x1 = std::min(x0 + 1, im.width() - 1), y1 = std::min(y0 + 1, im.height() - 1);
  double fx = x - x0, fy = y - y0;
  auto mix = [&](auto field) {
    double top = (1 - fx) * (im(x0, y0).*field) + fx * (im(x1, y0).*field);
    double bot = (1 - fx) * (im(x0, y1).*field) + fx * (im(x1, y1).*field);
    return static_cast<std::uint8_t>(std::lround((1 - fy) * top + fy * bot));
  };
  return {mix(&Rgb8::r), mix(&Rgb8::g), mix(&Rgb8::b)};
}

}  // namespace

RgbImage undistortImage(const RgbImage& image, const io::ColmapCamera& camera, double* fx,
                        double* fy, double* cx, double* cy) {
  double pfx, pfy, pcx, pcy;
  pinholeOf(camera, &pfx, &pfy, &pcx, &pcy);
  // COLMAP puts the centre of the top-left pixel at (0.5, 0.5); ours is at (0, 0).
  *fx = pfx, *fy = pfy, *cx = pcx - 0.5, *cy = pcy - 0.5;
  if (camera.model == CameraModelId::kPinhole || camera.model == CameraModelId::kSimplePinhole)
    return image;
  RgbImage out(image.width(), image.height());
  parallelFor(image.height(), [&](std::int64_t y) {
    for (int x = 0; x < image.width(); ++x) {
      double u = (x - *cx) / pfx, v = (y - *cy) / pfy, du, dv;
      distortNormalized(camera, u, v, &du, &dv);
      out(x, static_cast<int>(y)) = sampleRgb(image, pfx * du + *cx, pfy * dv + *cy);
    }
  });
  return out;
}

Workspace buildWorkspace(const io::ColmapModel& model,
                         const std::function<RgbImage(const io::ColmapImage&)>& loadImage,
                         const WorkspaceOptions& options, bool threadSafeLoader) {
  options.check();
  model.validate();
  if (model.images.size() < 2)
    throw Error("mvs: the model has " + std::to_string(model.images.size()) +
                " registered image(s); dense stereo needs at least 2");
  Workspace ws;
  std::map<std::uint32_t, int> index;
  for (const auto& [id, im] : model.images) {
    View v;
    v.imageId = id;
    v.name = im.name;
    Eigen::Quaterniond q(im.qvec[0], im.qvec[1], im.qvec[2], im.qvec[3]);
    v.R = q.normalized().toRotationMatrix();
    v.t = Eigen::Vector3d(im.tvec[0], im.tvec[1], im.tvec[2]);
    index[id] = static_cast<int>(ws.views.size());
    ws.views.push_back(std::move(v));
  }
  // Images: undistort, scale, gray.
  std::vector<const io::ColmapImage*> images;
  for (const auto& [id, im] : model.images) images.push_back(&im);
  auto prepare = [&](std::int64_t k) {
    const io::ColmapImage& im = *images[k];
    const io::ColmapCamera& cam = model.cameras.at(im.camera_id);
    View& v = ws.views[k];
    RgbImage rgb = loadImage(im);
    if (rgb.width() != static_cast<int>(cam.width) || rgb.height() != static_cast<int>(cam.height))
      throw Error("mvs: image " + im.name + " is " + std::to_string(rgb.width()) + "x" +
                  std::to_string(rgb.height()) + " but its camera is " + std::to_string(cam.width) +
                  "x" + std::to_string(cam.height));
    rgb = undistortImage(rgb, cam, &v.fx, &v.fy, &v.cx, &v.cy);
    int longSide = std::max(rgb.width(), rgb.height());
    if (options.maxImageSize > 0 && longSide > options.maxImageSize) {
      int w, h;
      io::scaledSize(rgb.width(), rgb.height(), options.maxImageSize, &w, &h);
      double sx = double(w) / rgb.width(), sy = double(h) / rgb.height();
      v.fx *= sx, v.fy *= sy;
      v.cx = (v.cx + 0.5) * sx - 0.5, v.cy = (v.cy + 0.5) * sy - 0.5;
      rgb = io::resizeImage(rgb, w, h);
    }
    v.width = rgb.width(), v.height = rgb.height();
    v.gray = toGray8(rgb);
    v.rgb = std::move(rgb);
  };
  // A thread-safe loader (image files): one view per thread, since decoding is sequential
  // inside a view and was most of the loading (fountain-P11, 11 JPEGs of 6.3 MP:
  // docs/benchmarks.md); the image operations' own row loops then nest without extra
  // threads. Otherwise (a video replayed in order) one view at a time, in model order.
  if (threadSafeLoader)
    parallelFor(static_cast<std::int64_t>(images.size()), prepare);
  else
    for (size_t k = 0; k < images.size(); ++k) prepare(static_cast<std::int64_t>(k));
  // Shared points at a sufficient triangulation angle, and depths per view.
  const size_t n = ws.views.size();
  std::vector<std::map<int, int>> shared(n);
  std::vector<std::vector<double>> depths(n);
  const double cosMin = std::cos(options.minTriangulationAngleDeg * M_PI / 180.0);
  std::vector<Eigen::Vector3d> centers(n);
  for (size_t i = 0; i < n; ++i) centers[i] = ws.views[i].center();
  for (const auto& [pid, p] : model.points3d) {
    Eigen::Vector3d X(p.xyz[0], p.xyz[1], p.xyz[2]);
    std::vector<int> seen;
    for (const auto& e : p.track) {
      int v = index.at(e.image_id);
      if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      seen.push_back(v);
      double z = (ws.views[v].R * X + ws.views[v].t).z();
      if (z > 0) depths[v].push_back(z);
    }
    for (size_t a = 0; a < seen.size(); ++a) {
      Eigen::Vector3d ra = (X - centers[seen[a]]).normalized();
      for (size_t b = a + 1; b < seen.size(); ++b) {
        Eigen::Vector3d rb = (X - centers[seen[b]]).normalized();
        if (ra.dot(rb) > cosMin) continue;
        ++shared[seen[a]][seen[b]];
        ++shared[seen[b]][seen[a]];
      }
    }
  }
  ws.isReference.assign(n, true);
  const bool givenRange = options.depthMin > 0 && options.depthMax > options.depthMin;
  const bool byGeometry = model.points3d.empty() && givenRange;
  for (size_t i = 0; i < n; ++i) {
    View& v = ws.views[i];
    if (byGeometry) {
      const double mid = 0.5 * (options.depthMin + options.depthMax);
      const double minBase = std::tan(options.minTriangulationAngleDeg * M_PI / 180.0) * mid;
      const Eigen::Vector3d axis = v.R.row(2).transpose();
      std::vector<std::pair<double, int>> cand;  // (axis angle, view)
      for (size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        double a = std::acos(std::clamp(axis.dot(ws.views[j].R.row(2).transpose()), -1.0, 1.0));
        if (a * 180.0 / M_PI > options.maxAxisAngleDeg) continue;
        if ((centers[j] - centers[i]).norm() < minBase) continue;
        cand.push_back({a, static_cast<int>(j)});
      }
      std::sort(cand.begin(), cand.end());
      for (size_t k = 0; k < cand.size() && static_cast<int>(k) < options.maxSources; ++k)
        v.sources.push_back(cand[k].second);
    } else {
      std::vector<std::pair<int, int>> cand;  // (-shared, view)
      for (const auto& [j, count] : shared[i])
        if (count >= options.minSharedPoints) cand.push_back({-count, j});
      std::sort(cand.begin(), cand.end());
      for (size_t k = 0; k < cand.size() && static_cast<int>(k) < options.maxSources; ++k)
        v.sources.push_back(cand[k].second);
    }
    std::vector<double>& d = depths[i];
    if (givenRange) {
      v.depthMin = options.depthMin, v.depthMax = options.depthMax;
    } else if (d.size() >= 3) {
      std::sort(d.begin(), d.end());
      auto at = [&](double q) { return d[static_cast<size_t>(std::lround(q * (d.size() - 1)))]; };
      v.depthMin = at(options.depthPercentileLow) * (1 - options.depthMargin);
      v.depthMax = at(options.depthPercentileHigh) * (1 + options.depthMargin);
    }
    if (v.sources.empty()) {
      ws.isReference[i] = false;
      ws.skipped.push_back(v.name + ": no source view shares " +
                           std::to_string(options.minSharedPoints) +
                           " sparse points at a triangulation angle of at least " +
                           std::to_string(options.minTriangulationAngleDeg) + " deg");
    } else if (d.size() < 3 && !givenRange) {
      ws.isReference[i] = false;
      ws.skipped.push_back(v.name + ": fewer than 3 sparse points in front of the camera");
    }
  }
  return ws;
}

void checkImagesPresent(const io::ColmapModel& model, const std::filesystem::path& imagesDir) {
  std::vector<std::string> missing;
  for (const auto& [id, im] : model.images)
    if (!std::filesystem::is_regular_file(imagesDir / im.name)) missing.push_back(im.name);
  if (!missing.empty()) {
    std::ostringstream s;
    s << "mvs: " << missing.size() << " of " << model.images.size()
      << " registered images are missing in " << imagesDir << " (first: " << missing.front() << ")";
    throw Error(s.str());
  }
}

Workspace loadWorkspace(const io::ColmapModel& model, const std::filesystem::path& imagesDir,
                        const WorkspaceOptions& options) {
  checkImagesPresent(model, imagesDir);
  return buildWorkspace(
      model, [&](const io::ColmapImage& im) { return io::readRgb(imagesDir / im.name); }, options,
      /*threadSafeLoader=*/true);
}

}  // namespace vidmap::mvs
