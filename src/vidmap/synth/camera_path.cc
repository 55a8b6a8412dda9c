#include "vidmap/synth/camera_path.h"

#include <cmath>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"

namespace vidmap::synth {

namespace {

using V = Eigen::Vector3d;

double deg(double d) { return d * M_PI / 180.0; }

// The horizontal part of dir, turned down by pitchDeg (negative pitch looks down).
V pitched(const V& dir, double pitchDeg) {
  V h(dir.x(), dir.y(), 0);
  require(h.norm() > 1e-9, "camera path: the view direction is vertical");
  h.normalize();
  return std::cos(deg(pitchDeg)) * h + std::sin(deg(pitchDeg)) * V::UnitZ();
}

V yawed(const V& dir, double yawRad) { return Eigen::AngleAxisd(yawRad, V::UnitZ()) * dir; }

Pose poseAt(const PathAnchors& a, PathKind kind, double s) {
  switch (kind) {
    case PathKind::Orbit: {
      double th = deg(a.orbitStartDeg + s * (a.orbitEndDeg - a.orbitStartDeg));
      V eye = a.orbitCenter + a.orbitRadius * V(std::cos(th), std::sin(th), 0) +
              V(0, 0, a.orbitHeight + 0.15 * std::sin(2 * M_PI * s));
      return Pose::lookAt(eye, a.orbitTarget);
    }
    case PathKind::Sideways: {
      V eye = a.sidewaysStart + s * (a.sidewaysEnd - a.sidewaysStart);
      return Pose::lookAt(eye, eye + pitched(a.viewDir, a.pitchDeg));
    }
    case PathKind::Forward: {
      V eye = a.forwardStart + s * (a.forwardEnd - a.forwardStart);
      return Pose::lookAt(eye, eye + pitched(a.forwardEnd - a.forwardStart, a.pitchDeg));
    }
    case PathKind::Pan: {
      V dir = pitched(a.viewDir, a.pitchDeg);
      V right = dir.cross(V::UnitZ()).normalized();
      V eye = a.panCenter + (s - 0.5) * a.panBaseline * right;
      // Turn from left (+yaw) to right (-yaw) while moving right.
      double yaw = deg(a.panHalfDeg) * (1 - 2 * s);
      return Pose::lookAt(eye, eye + yawed(dir, yaw));
    }
  }
  throw Error("camera path: unknown path kind");
}

}  // namespace

PathKind parsePathKind(const std::string& name) {
  if (name == "orbit") return PathKind::Orbit;
  if (name == "sideways") return PathKind::Sideways;
  if (name == "forward") return PathKind::Forward;
  if (name == "pan") return PathKind::Pan;
  throw Error("unknown camera path '" + name + "' (known: orbit, sideways, forward, pan)");
}

std::string pathKindName(PathKind kind) {
  switch (kind) {
    case PathKind::Orbit:
      return "orbit";
    case PathKind::Sideways:
      return "sideways";
    case PathKind::Forward:
      return "forward";
    case PathKind::Pan:
      return "pan";
  }
  return "?";
}

std::vector<std::string> pathKindNames() { return {"orbit", "sideways", "forward", "pan"}; }

void PathOptions::check() const {
  checkRange("frames", frames, 1, 100000);
  checkRange("fps", fps, 0.001, 1000.0);
}

std::vector<CameraFrame> makeCameraPath(const Scene& scene, const PathOptions& options) {
  options.check();
  std::vector<CameraFrame> out(options.frames);
  for (int i = 0; i < options.frames; ++i) {
    double s = options.frames > 1 ? static_cast<double>(i) / (options.frames - 1) : 0.0;
    out[i].index = i;
    out[i].timestamp = i / options.fps;
    out[i].pose = poseAt(scene.desc().anchors, options.kind, s);
  }
  return out;
}

}  // namespace vidmap::synth
