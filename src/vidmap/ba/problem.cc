#include "vidmap/ba/problem.h"

#include <cmath>
#include <sstream>

#include "vidmap/ba/dispatch.h"
#include "vidmap/ba/observation.h"
#include "vidmap/core/error.h"

namespace vidmap::ba {

namespace {

bool finite(const double* v, int n) {
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}

[[noreturn]] void fail(const std::string& what) {
  throw Error("bundle adjustment problem: " + what);
}

}  // namespace

CameraModel parseModel(const std::string& name) {
  for (auto m : {CameraModel::kSimplePinhole, CameraModel::kPinhole, CameraModel::kSimpleRadial,
                 CameraModel::kRadial, CameraModel::kBal})
    if (name == modelName(m)) return m;
  throw Error("unknown camera model '" + name +
              "' (known: SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, BAL)");
}

void Problem::check() const {
  if (!modelName(model)) fail("unknown camera model");
  if (!adjusterRefines(model))
    fail(std::string("camera model ") + modelName(model) +
         " is not refined (SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, BAL)");
  const int k = numIntrinsics(model);
  if (images.empty()) fail("no images");
  if (cameras.empty()) fail("no cameras");
  if (observations.empty()) fail("no observations");
  for (size_t c = 0; c < cameras.size(); ++c) {
    const auto& cam = cameras[c];
    if (!finite(cam.params.data(), k))
      fail("camera " + std::to_string(c) + " has a parameter that is not finite");
    for (int f = 0; f < numFocals(model); ++f)
      if (!(cam.params[f] > 0.0)) {
        std::ostringstream s;
        s << "camera " << c << " focal length " << cam.params[f] << " must be positive";
        fail(s.str());
      }
  }
  const int nr = rotationParams(rotation);
  for (size_t i = 0; i < images.size(); ++i) {
    const auto& im = images[i];
    if (im.camera < 0 || im.camera >= static_cast<int>(cameras.size()))
      fail("image " + std::to_string(i) + " refers to camera " + std::to_string(im.camera) +
           " of " + std::to_string(cameras.size()));
    if (!finite(im.rotation.data(), nr) || !finite(im.translation.data(), 3))
      fail("image " + std::to_string(i) + " has a pose parameter that is not finite");
    if (rotation == RotationType::kQuaternion) {
      const double n = im.rotation[0] * im.rotation[0] + im.rotation[1] * im.rotation[1] +
                       im.rotation[2] * im.rotation[2] + im.rotation[3] * im.rotation[3];
      if (!(n > 1e-300)) fail("image " + std::to_string(i) + " has a zero quaternion");
    }
  }
  for (size_t p = 0; p < points.size(); ++p)
    if (!finite(points[p].xyz.data(), 3))
      fail("point " + std::to_string(p) + " has a coordinate that is not finite");
  for (size_t o = 0; o < observations.size(); ++o) {
    const auto& ob = observations[o];
    if (ob.image < 0 || ob.image >= static_cast<int>(images.size()))
      fail("observation " + std::to_string(o) + " refers to image " + std::to_string(ob.image) +
           " of " + std::to_string(images.size()));
    if (ob.point < 0 || ob.point >= static_cast<int>(points.size()))
      fail("observation " + std::to_string(o) + " refers to point " + std::to_string(ob.point) +
           " of " + std::to_string(points.size()));
    if (!std::isfinite(ob.x) || !std::isfinite(ob.y))
      fail("observation " + std::to_string(o) + " has a pixel that is not finite");
  }
}

std::vector<double> reprojectionResiduals(const Problem& p) {
  p.check();
  std::vector<double> out(2 * p.observations.size());
  dispatchModel(p.model, p.rotation, [&](auto mTag, auto rTag) {
    constexpr CameraModel M = decltype(mTag)::value;
    constexpr RotationType R = decltype(rTag)::value;
    for (size_t o = 0; o < p.observations.size(); ++o) {
      const auto& ob = p.observations[o];
      const auto& im = p.images[ob.image];
      const double xy[2] = {ob.x, ob.y};
      double r[2];
      if (!reprojectionResidual<M, R>(im.rotation.data(), im.translation.data(),
                                      p.cameras[im.camera].params.data(),
                                      p.points[ob.point].xyz.data(), xy, r))
        r[0] = r[1] = HUGE_VAL;
      out[2 * o] = r[0];
      out[2 * o + 1] = r[1];
    }
  });
  return out;
}

double rmsReprojectionError(const Problem& p) {
  auto r = reprojectionResiduals(p);
  double s = 0.0;
  for (double v : r) s += v * v;
  return std::sqrt(s / static_cast<double>(p.observations.size()));
}

}  // namespace vidmap::ba
