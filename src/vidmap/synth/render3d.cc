#include "vidmap/synth/render3d.h"

#include "vidmap/core/parallel.h"

namespace vidmap::synth {

namespace {

template <class F>
void forRows(int height, bool parallel, F&& f) {
  if (parallel) {
    parallelFor(height, f);
  } else {
    for (int y = 0; y < height; ++y) f(y);
  }
}

}  // namespace

CameraView makeCameraView(const PinholeCamera& camera, const Pose& pose) {
  camera.check();
  Eigen::Matrix3d r = pose.rotation();
  CameraView v;
  v.center = {pose.t.x(), pose.t.y(), pose.t.z()};
  v.rx = {r(0, 0), r(1, 0), r(2, 0)};
  v.ry = {r(0, 1), r(1, 1), r(2, 1)};
  v.rz = {r(0, 2), r(1, 2), r(2, 2)};
  v.fx = camera.fx;
  v.fy = camera.fy;
  v.cx = camera.cx;
  v.cy = camera.cy;
  return v;
}

namespace {

// Renders every pixel and hands its colour to put(x, y, colour).
template <class Put>
void renderPixels(const Scene& scene, const PinholeCamera& camera, const Pose& pose,
                  const RenderOptions& options, Put&& put) {
  const CameraView cam = makeCameraView(camera, pose);
  const SceneView sv = scene.view();
  const int w = camera.width, h = camera.height;
  if (!options.antialias) {
    forRows(h, options.parallel, [&](std::int64_t y) {
      for (int x = 0; x < w; ++x)
        put(x, static_cast<int>(y), pointSampledPixel(sv, cam, x, static_cast<int>(y)));
    });
    return;
  }
  Image<Hit> centres(w, h);
  forRows(h, options.parallel, [&](std::int64_t y) {
    for (int x = 0; x < w; ++x)
      centres(x, static_cast<int>(y)) = centreHit(sv, cam, x, static_cast<int>(y));
  });
  forRows(h, options.parallel, [&](std::int64_t y) {
    for (int x = 0; x < w; ++x)
      put(x, static_cast<int>(y),
          antialiasedPixel(sv, cam, centres.data(), w, h, x, static_cast<int>(y)));
  });
}

}  // namespace

Image<Vec3> renderLinear(const Scene& scene, const PinholeCamera& camera, const Pose& pose,
                         const RenderOptions& options) {
  Image<Vec3> out(camera.width, camera.height);
  renderPixels(scene, camera, pose, options, [&](int x, int y, Vec3 c) { out(x, y) = c; });
  return out;
}

RgbImage renderImage(const Scene& scene, const PinholeCamera& camera, const Pose& pose,
                     const RenderOptions& options) {
  RgbImage out(camera.width, camera.height);
  renderPixels(scene, camera, pose, options, [&](int x, int y, Vec3 c) {
    out(x, y) = Rgb8{toByte(c.x), toByte(c.y), toByte(c.z)};
  });
  return out;
}

Image<float> renderDepth(const Scene& scene, const PinholeCamera& camera, const Pose& pose,
                         bool parallel) {
  const CameraView cam = makeCameraView(camera, pose);
  const SceneView sv = scene.view();
  Image<float> out(camera.width, camera.height);
  forRows(camera.height, parallel, [&](std::int64_t y) {
    for (int x = 0; x < camera.width; ++x)
      out(x, static_cast<int>(y)) =
          static_cast<float>(renderDepthPixel(sv, cam, x, static_cast<int>(y)));
  });
  return out;
}

}  // namespace vidmap::synth
