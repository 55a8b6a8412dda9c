// Camera paths through the preset scenes, with exact poses (the truth of a sequence).
//
//   orbit     the eye circles the preset's orbitCenter on an arc (with a gentle +-0.15 m rise
//             and fall) looking at orbitTarget: translation and rotation together.
//   sideways  the eye moves along a straight line, the view direction fixed (pure
//             translation across the view: strong parallax).
//   forward   the eye moves along a straight line in its viewing direction (pitched down a
//             little): expansion about the focus of expansion.
//   pan       the eye turns +-panHalfDeg about the vertical while moving panBaseline metres
//             sideways: rotation-heavy, with a small baseline.
//
// The shape of each path is fixed by the scene; `frames` samples it evenly (frame i at path
// parameter i / (frames - 1)), so more frames give smaller steps. Frame i has timestamp
// i / fps seconds.
#pragma once

#include <string>
#include <vector>

#include "vidmap/synth/camera.h"
#include "vidmap/synth/scene3d.h"

namespace vidmap::synth {

enum class PathKind { Orbit, Sideways, Forward, Pan };

// "orbit", "sideways", "forward", "pan"; parsePathKind throws vidmap::Error listing them.
PathKind parsePathKind(const std::string& name);
std::string pathKindName(PathKind kind);
std::vector<std::string> pathKindNames();

struct PathOptions {
  PathKind kind = PathKind::Orbit;
  int frames = 60;
  double fps = 30;
  void check() const;  // frames in [1, 100000], fps in [0.001, 1000]
};

struct CameraFrame {
  int index = 0;
  double timestamp = 0;  // seconds
  Pose pose;             // camera-to-world
};

std::vector<CameraFrame> makeCameraPath(const Scene& scene, const PathOptions& options);

}  // namespace vidmap::synth
