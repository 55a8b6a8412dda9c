#include "vidmap/sfm/camera.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "vidmap/core/error.h"

namespace vidmap::sfm {

namespace {

using io::CameraModelId;

// The distorted normalized point of an undistorted one (core/camera_model.h).
Vec2 distort(CameraModelId m, const double* k, const Vec2& n) {
  Vec2 d;
  distortNormalized(m, k, n.x(), n.y(), d.data());
  return d;
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::vector<std::string> cameraParamNames(CameraModelId model) {
  switch (model) {
    case CameraModelId::kSimplePinhole:
      return {"f", "cx", "cy"};
    case CameraModelId::kPinhole:
      return {"fx", "fy", "cx", "cy"};
    case CameraModelId::kSimpleRadial:
      return {"f", "cx", "cy", "k"};
    case CameraModelId::kRadial:
      return {"f", "cx", "cy", "k1", "k2"};
    case CameraModelId::kOpenCV:
      return {"fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2"};
    case CameraModelId::kFullOpenCV:
      return {"fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3", "k4", "k5", "k6"};
    case CameraModelId::kBal:
      return {"f", "k1", "k2"};
  }
  return {};
}

void CameraSpec::checkAgainst(int nativeWidth, int nativeHeight) const {
  if (!known()) return;
  const std::vector<std::string> names = cameraParamNames(model);
  const double side = std::max(nativeWidth, nativeHeight);
  const std::string size = std::to_string(nativeWidth) + "x" + std::to_string(nativeHeight);
  const int nf = modelNumFocals(model), pp = nf;  // the principal point follows
  for (int i = 0; i < nf; ++i)
    if (!(params[i] >= 0.05 * side && params[i] <= 100 * side))
      throw Error("--camera: " + names[i] + " = " + number(params[i]) + " is not a focal length " +
                  "of a " + size + " image (expected [" + number(0.05 * side) + ", " +
                  number(100 * side) + "] pixels, 0.05 to 100 x the larger side)");
  for (int j = 0; j < 2; ++j) {
    const double extent = j == 0 ? nativeWidth : nativeHeight, v = params[pp + j];
    if (!(v >= -0.25 * extent && v <= 1.25 * extent))
      throw Error("--camera: " + names[pp + j] + " = " + number(v) +
                  " puts the principal point far outside the " + size + " image (expected [" +
                  number(-0.25 * extent) + ", " + number(1.25 * extent) +
                  "], COLMAP's pixel convention at the native size)");
  }
}

CameraSpec CameraSpec::parse(const std::string& text) {
  std::string s = text;
  std::replace(s.begin(), s.end(), ',', ' ');
  std::istringstream in(s);
  std::string name;
  if (!(in >> name))
    throw Error(
        "--camera is empty; expected a model such as SIMPLE_RADIAL or 'PINHOLE fx,fy,cx,cy'");
  CameraSpec spec;
  try {
    spec.model = io::cameraModelFromName(name);
  } catch (const Error&) {
    throw Error("--camera: unknown camera model '" + name +
                "' (SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV, FULL_OPENCV)");
  }
  std::string tok;
  while (in >> tok) {
    char* end = nullptr;
    const double v = std::strtod(tok.c_str(), &end);
    if (end == tok.c_str() || *end != '\0' || !std::isfinite(v))
      throw Error("--camera: '" + tok + "' is not a finite number");
    spec.params.push_back(v);
  }
  const int n = io::cameraModelNumParams(spec.model);
  if (!spec.params.empty() && static_cast<int>(spec.params.size()) != n) {
    std::ostringstream m;
    m << "--camera: model " << name << " takes " << n << " parameters, got " << spec.params.size();
    throw Error(m.str());
  }
  if (spec.params.empty() && !adjusterRefines(spec.model))
    throw Error("--camera: model " + name +
                " needs its parameters (an unknown camera must be SIMPLE_PINHOLE, PINHOLE, "
                "SIMPLE_RADIAL or RADIAL)");
  if (spec.known()) {
    const int nf = modelNumFocals(spec.model);
    for (int i = 0; i < nf; ++i)
      if (!(spec.params[i] > 0)) throw Error("--camera: the focal length must be positive");
    const std::vector<std::string> names = cameraParamNames(spec.model);
    for (size_t i = modelDistortionIndex(spec.model); i < spec.params.size(); ++i) {
      const bool tangential = names[i][0] == 'p';
      const double bound = tangential ? 1 : 100;
      if (!(std::abs(spec.params[i]) <= bound))
        throw Error("--camera: distortion " + names[i] + " = " + number(spec.params[i]) +
                    " is outside the sane range [" + number(-bound) + ", " + number(bound) + "] (" +
                    (tangential ? "tangential" : "radial") +
                    " coefficient, normalized coordinates)");
    }
  }
  return spec;
}

std::string CameraSpec::toString() const {
  std::ostringstream s;
  s << io::cameraModelName(model);
  for (size_t i = 0; i < params.size(); ++i) s << (i ? "," : " ") << params[i];
  return s.str();
}

Camera Camera::fromSpec(const CameraSpec& spec, int nativeWidth, int nativeHeight, int width,
                        int height) {
  require(nativeWidth > 0 && nativeHeight > 0 && width > 0 && height > 0,
          "camera: image sizes must be positive");
  spec.checkAgainst(nativeWidth, nativeHeight);
  Camera c;
  c.model_ = spec.model;
  c.width_ = width;
  c.height_ = height;
  c.nativeWidth_ = nativeWidth;
  c.nativeHeight_ = nativeHeight;
  c.scale_ = static_cast<double>(width) / nativeWidth;
  const int nf = modelNumFocals(spec.model), pp = nf;
  if (spec.known()) {
    c.fixed_ = !spec.refine;
    c.params_ = spec.params;
    const double sy = static_cast<double>(height) / nativeHeight;
    for (int i = 0; i < nf; ++i) c.params_[i] *= i == 0 ? c.scale_ : sy;
    c.params_[pp] = spec.params[pp] * c.scale_ - 0.5;
    c.params_[pp + 1] = spec.params[pp + 1] * (static_cast<double>(height) / nativeHeight) - 0.5;
  } else {
    c.params_.assign(io::cameraModelNumParams(spec.model), 0.0);
    const double f = 1.2 * std::max(width, height);
    for (int i = 0; i < nf; ++i) c.params_[i] = f;
    c.params_[pp] = 0.5 * width - 0.5;
    c.params_[pp + 1] = 0.5 * height - 0.5;
  }
  return c;
}

bool Camera::hasDistortion() const {
  const int e = modelDistortionIndex(model_);
  for (size_t i = e; i < params_.size(); ++i)
    if (params_[i] != 0) return true;
  return false;
}

geometry::Pinhole Camera::pinhole() const {
  const int pp = modelNumFocals(model_);
  geometry::Pinhole p;
  p.fx = params_[0];
  p.fy = params_[pp - 1];
  p.cx = params_[pp];
  p.cy = params_[pp + 1];
  return p;
}

Vec2 Camera::distortAndProject(const Vec2& n) const {
  const Vec2 d = distort(model_, params_.data() + modelDistortionIndex(model_), n);
  return pinhole().project(d);
}

Vec2 Camera::normalize(const Vec2& px) const {
  const Vec2 target = pinhole().normalize(px);
  if (!hasDistortion()) return target;
  // Newton's method on distort(x) = target with a central-difference Jacobian, as COLMAP's
  // IterativeUndistortion; the undistorted point starts at the distorted one.
  const double* k = params_.data() + modelDistortionIndex(model_);
  Vec2 x = target;
  for (int it = 0; it < 100; ++it) {
    const Vec2 r = distort(model_, k, x) - target;
    if (r.squaredNorm() < 1e-30) break;
    const double h = 1e-7 * std::max(1.0, x.cwiseAbs().maxCoeff());
    Eigen::Matrix2d J;
    for (int c = 0; c < 2; ++c) {
      Vec2 d = Vec2::Zero();
      d[c] = h;
      J.col(c) = (distort(model_, k, x + d) - distort(model_, k, x - d)) / (2 * h);
    }
    const Vec2 step = J.partialPivLu().solve(r);
    if (!step.allFinite()) break;
    x -= step;
    if (step.squaredNorm() < 1e-28) break;
  }
  return x;
}

io::ColmapCamera Camera::toColmap(std::uint32_t id) const {
  io::ColmapCamera c;
  c.id = id;
  c.model = model_;
  c.width = static_cast<std::uint64_t>(nativeWidth_);
  c.height = static_cast<std::uint64_t>(nativeHeight_);
  c.params = params_;
  const int nf = modelNumFocals(model_), pp = nf;
  const double sy = static_cast<double>(height_) / nativeHeight_;
  for (int i = 0; i < nf; ++i) c.params[i] /= i == 0 ? scale_ : sy;
  c.params[pp] = (params_[pp] + 0.5) / scale_;
  c.params[pp + 1] = (params_[pp + 1] + 0.5) / sy;
  return c;
}

Vec2 Camera::toColmapPixel(const Vec2& px) const {
  const double sy = static_cast<double>(height_) / nativeHeight_;
  return {(px.x() + 0.5) / scale_, (px.y() + 0.5) / sy};
}

}  // namespace vidmap::sfm
