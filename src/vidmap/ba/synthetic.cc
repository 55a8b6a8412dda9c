#include "vidmap/ba/synthetic.h"

#include <Eigen/Geometry>
#include <cmath>
#include <random>

#include "vidmap/core/error.h"

namespace vidmap::ba {

namespace {

// Pixel of a camera-frame point for each model, looking down +z (BAL: -z); false when behind.
bool projectTruth(CameraModel m, const double* k, const Eigen::Vector3d& pc, double* px) {
  if (m == CameraModel::kBal) {
    if (pc.z() >= -1e-9) return false;
    const double u = -pc.x() / pc.z(), v = -pc.y() / pc.z();
    const double r2 = u * u + v * v;
    const double d = 1.0 + k[1] * r2 + k[2] * r2 * r2;
    px[0] = k[0] * d * u;
    px[1] = k[0] * d * v;
    return true;
  }
  if (pc.z() <= 1e-9) return false;
  const double u = pc.x() / pc.z(), v = pc.y() / pc.z();
  const double r2 = u * u + v * v;
  switch (m) {
    case CameraModel::kSimplePinhole:
      px[0] = k[0] * u + k[1], px[1] = k[0] * v + k[2];
      break;
    case CameraModel::kPinhole:
      px[0] = k[0] * u + k[2], px[1] = k[1] * v + k[3];
      break;
    case CameraModel::kSimpleRadial:
      px[0] = k[0] * u * (1 + k[3] * r2) + k[1], px[1] = k[0] * v * (1 + k[3] * r2) + k[2];
      break;
    case CameraModel::kRadial: {
      const double d = 1 + k[3] * r2 + k[4] * r2 * r2;
      px[0] = k[0] * u * d + k[1], px[1] = k[0] * v * d + k[2];
      break;
    }
    default:
      return false;
  }
  return true;
}

void setRotation(ImagePose& im, RotationType r, const Eigen::Matrix3d& R) {
  if (r == RotationType::kAngleAxis) {
    Eigen::AngleAxisd aa(R);
    Eigen::Vector3d w = aa.axis() * aa.angle();
    for (int k = 0; k < 3; ++k) im.rotation[k] = w[k];
    im.rotation[3] = 0.0;
  } else {
    Eigen::Quaterniond q(R);
    im.rotation = {q.w(), q.x(), q.y(), q.z()};
  }
}

Eigen::Matrix3d getRotation(const ImagePose& im, RotationType r) {
  if (r == RotationType::kAngleAxis) {
    Eigen::Vector3d w(im.rotation[0], im.rotation[1], im.rotation[2]);
    const double a = w.norm();
    return a > 0 ? Eigen::AngleAxisd(a, w / a).toRotationMatrix() : Eigen::Matrix3d::Identity();
  }
  return Eigen::Quaterniond(im.rotation[0], im.rotation[1], im.rotation[2], im.rotation[3])
      .normalized()
      .toRotationMatrix();
}

}  // namespace

SyntheticScene makeSyntheticScene(const SyntheticOptions& o) {
  if (o.numImages < 2 || o.numPoints < 1) throw Error("synthetic scene: need 2 images and a point");
  std::mt19937 rng(o.seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  const int K = numIntrinsics(o.model);
  const bool bal = o.model == CameraModel::kBal;

  Problem p;
  p.model = o.model;
  p.rotation = o.rotation;
  const int numCams = o.sharedIntrinsics ? 1 : o.numImages;
  for (int c = 0; c < numCams; ++c) {
    CameraIntrinsics cam;
    const double f = o.focal * (1.0 + 0.02 * (c % 3));
    const double cx = o.width / 2.0 + 3.0, cy = o.height / 2.0 - 2.0;
    switch (o.model) {
      case CameraModel::kSimplePinhole:
        cam.params = {f, cx, cy};
        break;
      case CameraModel::kPinhole:
        cam.params = {f, f * 1.01, cx, cy};
        break;
      case CameraModel::kSimpleRadial:
        cam.params = {f, cx, cy, -0.08};
        break;
      case CameraModel::kRadial:
        cam.params = {f, cx, cy, -0.08, 0.02};
        break;
      case CameraModel::kBal:
        cam.params = {f, -0.08, 0.02};
        break;
      case CameraModel::kOpenCV:
      case CameraModel::kFullOpenCV:
        throw Error(std::string("synthetic scene: the adjuster does not refine camera model ") +
                    modelName(o.model));
    }
    p.cameras.push_back(cam);
  }
  const bool corridor = o.layout == SyntheticLayout::kCorridor;
  const double spacing = 0.5, length = spacing * (o.numImages - 1);
  // Points in a box around the origin, or in a wall 4 to 8 in front of the corridor.
  for (int j = 0; j < o.numPoints; ++j) {
    Point3 pt;
    if (corridor)
      pt.xyz = {length / 2 * uni(rng) * 1.1, 1.5 * uni(rng), 6.0 + 2.0 * uni(rng)};
    else
      pt.xyz = {1.5 * uni(rng), 1.0 * uni(rng), 1.5 * uni(rng)};
    p.points.push_back(pt);
  }
  // Cameras on an arc of radius 6 in the x-z plane, looking at the origin.
  for (int i = 0; i < o.numImages; ++i) {
    const double a = -0.6 + 1.2 * i / (o.numImages - 1);
    const Eigen::Vector3d centre =
        corridor ? Eigen::Vector3d(-length / 2 + spacing * i, 0.2 * uni(rng), 0.2 * uni(rng))
                 : Eigen::Vector3d(6.0 * std::sin(a), 0.3 * uni(rng), -6.0 * std::cos(a));
    const Eigen::Vector3d target =
        corridor ? Eigen::Vector3d(centre.x() + 0.3 * uni(rng), 0.3 * uni(rng), 6.0)
                 : Eigen::Vector3d::Zero();
    const Eigen::Vector3d z = (target - centre).normalized();
    const Eigen::Vector3d x = Eigen::Vector3d::UnitY().cross(z).normalized();
    const Eigen::Vector3d y = z.cross(x);
    Eigen::Matrix3d R;
    R.row(0) = x.transpose(), R.row(1) = y.transpose(), R.row(2) = z.transpose();
    if (bal) R = Eigen::AngleAxisd(M_PI, Eigen::Vector3d::UnitX()).toRotationMatrix() * R;
    const Eigen::Vector3d t = -R * centre;
    ImagePose im;
    setRotation(im, o.rotation, R);
    for (int k = 0; k < 3; ++k) im.translation[k] = t[k];
    im.camera = o.sharedIntrinsics ? 0 : i;
    p.images.push_back(im);
  }
  // Observations: visible projections, image by image.
  const double halfW = o.width / 2.0, halfH = o.height / 2.0;
  for (int i = 0; i < o.numImages; ++i) {
    const Eigen::Matrix3d R = getRotation(p.images[i], o.rotation);
    const Eigen::Vector3d t(p.images[i].translation.data());
    const double* k = p.cameras[p.images[i].camera].params.data();
    for (int j = 0; j < o.numPoints; ++j) {
      const Eigen::Vector3d pc = R * Eigen::Vector3d(p.points[j].xyz.data()) + t;
      double px[2];
      if (!projectTruth(o.model, k, pc, px)) continue;
      const bool inside = bal ? (std::fabs(px[0]) < halfW && std::fabs(px[1]) < halfH)
                              : (px[0] >= 0 && px[0] < o.width && px[1] >= 0 && px[1] < o.height);
      if (!inside) continue;
      p.observations.push_back({i, j, px[0], px[1]});
    }
  }
  SyntheticScene s;
  s.truth = p;
  s.noisy = p;
  s.outlier.assign(p.observations.size(), false);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (size_t n = 0; n < p.observations.size(); ++n) {
    auto& ob = s.noisy.observations[n];
    ob.x += o.noiseSigma * gauss(rng);
    ob.y += o.noiseSigma * gauss(rng);
    if (unit(rng) < o.outlierFraction) {
      const double ang = 2 * M_PI * unit(rng);
      ob.x += o.outlierPixels * std::cos(ang);
      ob.y += o.outlierPixels * std::sin(ang);
      s.outlier[n] = true;
    }
  }
  s.initial = s.noisy;
  for (auto& im : s.initial.images) {
    Eigen::Matrix3d R = getRotation(im, o.rotation);
    Eigen::Vector3d w(gauss(rng), gauss(rng), gauss(rng));
    w *= o.rotationPerturbation;
    R = Eigen::AngleAxisd(w.norm(), w.normalized()).toRotationMatrix() * R;
    setRotation(im, o.rotation, R);
    for (int k = 0; k < 3; ++k) im.translation[k] += o.translationPerturbation * gauss(rng);
  }
  for (auto& pt : s.initial.points)
    for (int k = 0; k < 3; ++k) pt.xyz[k] += o.pointPerturbation * gauss(rng);
  for (auto& cam : s.initial.cameras) {
    cam.params[0] *= 1.0 + o.intrinsicsPerturbation * gauss(rng);
    if (o.model == CameraModel::kPinhole)
      cam.params[1] *= 1.0 + o.intrinsicsPerturbation * gauss(rng);
    const int firstDistortion = o.model == CameraModel::kBal ? 1 : 3;
    for (int k = firstDistortion;
         k < K && o.model != CameraModel::kSimplePinhole && o.model != CameraModel::kPinhole; ++k)
      cam.params[k] += o.intrinsicsPerturbation * gauss(rng) * 0.5;
  }
  return s;
}

}  // namespace vidmap::ba
