// The preset scenes of scene3d.h. The layouts are fixed (the seed changes only the textures),
// so the camera paths of each preset are known to stay clear of every surface
// (camera_path_test.cc checks it).
#include <cmath>

#include "vidmap/core/error.h"
#include "vidmap/synth/scene3d.h"

namespace vidmap::synth {

namespace {

using V = Eigen::Vector3d;

double deg(double d) { return d * M_PI / 180.0; }

// A box standing on z = base with the given footprint half sizes and height.
BoxDesc standing(double x, double y, double hx, double hy, double height, double yawDeg,
                 double base = 0) {
  return {V(x, y, base + 0.5 * height), V(hx, hy, 0.5 * height), deg(yawDeg)};
}

SceneDesc room() {
  SceneDesc d;
  d.name = "room";
  const double X = 5, Y = 4, Z = 3;  // the room is [-X, X] x [-Y, Y] x [0, Z]
  // Normals point into the room.
  d.rects = {
      {V(-X, -Y, 0), V(2 * X, 0, 0), V(0, 2 * Y, 0)},  // floor
      {V(-X, -Y, Z), V(0, 2 * Y, 0), V(2 * X, 0, 0)},  // ceiling
      {V(-X, -Y, 0), V(0, 2 * Y, 0), V(0, 0, Z)},      // wall x = -X
      {V(X, Y, 0), V(0, -2 * Y, 0), V(0, 0, Z)},       // wall x = +X
      {V(X, -Y, 0), V(-2 * X, 0, 0), V(0, 0, Z)},      // wall y = -Y
      {V(-X, Y, 0), V(2 * X, 0, 0), V(0, 0, Z)},       // wall y = +Y
  };
  d.boxes = {
      standing(0, 0, 0.6, 0.4, 0.75, 10),               // a table
      standing(0.15, 0.05, 0.15, 0.15, 0.3, 35, 0.75),  // a small box on the table
      standing(1.3, 1.3, 0.25, 0.25, 1.6, 30),          // a column
      standing(-1.3, 0.9, 0.3, 0.3, 0.6, -20),          // a cube
      standing(-0.9, -1.0, 0.35, 0.25, 0.4, 50),        // a low box in front
      standing(3.8, 2.6, 0.5, 0.5, 1.0, 0),             // along the walls
      standing(-3.6, -2.6, 0.6, 0.4, 0.5, 15),
      standing(-3.5, 2.5, 0.35, 0.6, 1.4, -10),
      standing(3.4, -2.4, 0.4, 0.3, 0.7, 40),
  };
  PathAnchors& a = d.anchors;
  a.orbitCenter = V(0, 0, 0);
  a.orbitRadius = 2.9;
  a.orbitHeight = 1.6;
  a.orbitStartDeg = -150;
  a.orbitEndDeg = -30;
  a.orbitTarget = V(0, 0, 0.6);
  a.sidewaysStart = V(-2, -3.2, 1.5);
  a.sidewaysEnd = V(2, -3.2, 1.5);
  a.forwardStart = V(0.3, -3.4, 1.4);
  a.forwardEnd = V(0.3, -1.4, 1.4);
  a.viewDir = V(0, 1, 0);
  a.panCenter = V(0, -3.0, 1.5);
  a.panHalfDeg = 35;
  a.panBaseline = 0.3;
  a.pitchDeg = -10;
  return d;
}

SceneDesc facade() {
  SceneDesc d;
  d.name = "facade";
  d.rects = {
      {V(-40, -30, 0), V(80, 0, 0), V(0, 36, 0)},  // the ground, up to the wall
      {V(-16, 6, 0), V(32, 0, 0), V(0, 0, 7)},     // the facade at y = 6, facing -y
  };
  d.boxes = {
      standing(-2.0, 4.4, 0.5, 0.5, 1.0, 15),
      standing(1.6, 3.4, 0.4, 0.3, 1.4, -25),
      standing(0.0, 5.4, 1.0, 0.25, 0.6, 0),  // a bench along the wall
      standing(3.8, 4.6, 0.6, 0.6, 1.2, 40),
      standing(-4.5, 3.2, 0.5, 0.35, 0.7, -10),
      standing(-1.0, 2.6, 0.25, 0.25, 0.5, 20),
      standing(-6, 5.7, 0.3, 0.3, 7, 0),  // pillars against the wall
      standing(6, 5.7, 0.3, 0.3, 7, 0),
      standing(-10, 5.7, 0.3, 0.3, 7, 0),
      standing(10, 5.7, 0.3, 0.3, 7, 0),
      standing(2.5, 5.85, 1.2, 0.15, 0.2, 0, 2.4),  // a ledge on the wall
  };
  PathAnchors& a = d.anchors;
  a.orbitCenter = V(0, 4, 0);
  a.orbitRadius = 6.5;
  a.orbitHeight = 1.7;
  a.orbitStartDeg = -125;
  a.orbitEndDeg = -55;
  a.orbitTarget = V(0, 4.2, 1.0);
  a.sidewaysStart = V(-3, -1.0, 1.6);
  a.sidewaysEnd = V(3, -1.0, 1.6);
  a.forwardStart = V(0.3, -3.0, 1.5);
  a.forwardEnd = V(0.3, 1.2, 1.5);
  a.viewDir = V(0, 1, 0);
  a.panCenter = V(0, -1.0, 1.6);
  a.panHalfDeg = 35;
  a.panBaseline = 0.3;
  a.pitchDeg = -8;
  return d;
}

}  // namespace

std::vector<std::string> scenePresets() { return {"room", "facade"}; }

Scene makeScene(const std::string& preset, std::uint32_t seed) {
  if (preset == "room") return Scene(room(), seed);
  if (preset == "facade") return Scene(facade(), seed);
  throw Error("unknown scene '" + preset + "' (known: room, facade)");
}

}  // namespace vidmap::synth
