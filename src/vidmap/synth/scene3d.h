// Synthetic 3D scenes with known truth: textured rectangles (floor, walls) and boxes, each
// face painted with its own seeded procedural texture (surface_texture.h). The description
// is plain geometry, so tests and the mapper's evaluation can reason about the scene without
// the renderer (points on faces, occlusion, distance to the surfaces).
//
// World: right-handed, z up, metres; the floor is z = 0.
//
// Presets (makeScene):
//   "room"   the inside of a 10 x 8 x 3 m room with boxes standing on the floor.
//   "facade" a 32 m wide, 7 m tall wall at y = 6 seen from the front, over a ground plane,
//            with boxes and pillars before it (good for forward and sideways motion).
// Each preset also names where its camera paths go (PathAnchors; camera_path.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "vidmap/synth/raycast.h"

namespace vidmap::synth {

// A rectangle origin + s * edgeS + t * edgeT, s, t in [0, 1] (edges orthogonal). Its
// normal is edgeS x edgeT; both sides are visible.
struct RectDesc {
  Eigen::Vector3d origin;
  Eigen::Vector3d edgeS;
  Eigen::Vector3d edgeT;
};

// A solid box with its own axes turned by yawRad about world z.
struct BoxDesc {
  Eigen::Vector3d center;
  Eigen::Vector3d halfSize;
  double yawRad = 0;
};

// Where a preset's camera paths go (see camera_path.h for how each path uses them).
struct PathAnchors {
  Eigen::Vector3d orbitCenter;  // on the floor; the orbit circles it
  double orbitRadius = 3;
  double orbitHeight = 1.6;
  double orbitStartDeg = 0, orbitEndDeg = 90;  // angles of the eye about orbitCenter
  Eigen::Vector3d orbitTarget;                 // the point the orbit looks at
  Eigen::Vector3d sidewaysStart, sidewaysEnd;  // eye line; looking along viewDir
  Eigen::Vector3d forwardStart, forwardEnd;    // eye line; looking along it
  Eigen::Vector3d viewDir;                     // sideways and pan look this way at the start
  Eigen::Vector3d panCenter;                   // the eye of the pan
  double panHalfDeg = 35;                      // the yaw sweep is +-panHalfDeg
  double panBaseline = 0.3;                    // metres of sideways travel during the pan
  double pitchDeg = -8;                        // forward/sideways/pan look this much down
};

struct SceneDesc {
  std::string name;
  std::vector<RectDesc> rects;
  std::vector<BoxDesc> boxes;
  PathAnchors anchors;
  Eigen::Vector3d lightDir = Eigen::Vector3d(0.3, -0.5, 0.8);  // fixes each face's shade
  Eigen::Vector3d skyHorizon = Eigen::Vector3d(0.78, 0.84, 0.9);
  Eigen::Vector3d skyZenith = Eigen::Vector3d(0.42, 0.58, 0.82);
};

// A surface point found by intersect().
struct SurfaceHit {
  double t = 0;   // ray parameter (the depth when the ray has camera-z component 1)
  int face = -1;  // index into Scene::faces()
  Eigen::Vector3d point;
  double s = 0, u = 0;  // the face's texture coordinates (metres)
};

class Scene {
 public:
  // Validates the description (finite, positive sizes, orthogonal edges) and paints every
  // face with a texture drawn from seed; throws vidmap::Error naming what is wrong.
  Scene(SceneDesc desc, std::uint32_t seed);

  const SceneDesc& desc() const { return desc_; }
  const std::string& name() const { return desc_.name; }
  std::uint32_t seed() const { return seed_; }

  // Faces [0, rects) are desc().rects in order; box b owns faces rects + 6 b + k, k = 0..5
  // for its -x, +x, -y, +y, -z (bottom), +z (top) sides in the box frame, normals outward.
  const std::vector<Face>& faces() const { return faces_; }
  int faceOfBox(int box, int side) const { return numRects() + 6 * box + side; }
  int numRects() const { return static_cast<int>(desc_.rects.size()); }
  // The box a face belongs to, or -1 for a free rectangle.
  int boxOfFace(int face) const { return face < numRects() ? -1 : (face - numRects()) / 6; }

  // The 3D point at texture coordinates (s, u) of a face (metres from its origin corner).
  Eigen::Vector3d facePoint(int face, double s, double u) const;
  // The unfiltered albedo (RGB in [0, 1]) of a face at texture coordinates (s, u).
  Eigen::Vector3d albedo(int face, double s, double u) const;

  // The nearest surface along origin + t * dir, t > 0, or nothing (the sky).
  std::optional<SurfaceHit> intersect(const Eigen::Vector3d& origin,
                                      const Eigen::Vector3d& dir) const;
  // The Euclidean distance from p to the nearest surface point of the scene.
  double distanceToSurface(const Eigen::Vector3d& p) const;
  // True when p lies inside a solid box (cameras must not).
  bool insideBox(const Eigen::Vector3d& p) const;

  // The view the per-pixel kernels use; valid while the Scene lives.
  SceneView view() const;

 private:
  SceneDesc desc_;
  std::uint32_t seed_;
  std::vector<Face> faces_;
  std::vector<BoxPrimitive> boxes_;
};

// The names makeScene accepts.
std::vector<std::string> scenePresets();
// A preset scene; throws vidmap::Error for an unknown name (the message lists the names).
Scene makeScene(const std::string& preset, std::uint32_t seed);

}  // namespace vidmap::synth
