// The renderer against the truth, checked independently of its own code paths: 3D points
// are picked on faces from the scene description, projected with the ground-truth poses by
// the test's own pinhole arithmetic, and the rendered pixels are compared with a reference
// that the test computes itself (8x8 point samples of the face texture through its own
// ray-plane intersections), across frames (patch NCC) and against occluders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "vidmap/synth/camera_path.h"
#include "vidmap/synth/render3d.h"
#include "vidmap/synth/scene3d.h"

namespace vidmap::synth {
namespace {

using V3 = Eigen::Vector3d;

// The test's own projection: x_cam = R^T (X - C), u = fx x / z + cx.
bool projectPoint(const PinholeCamera& cam, const Pose& pose, const V3& X, double* u, double* v,
                  double* z) {
  Eigen::Matrix3d R = pose.q.toRotationMatrix();
  V3 xc = R.transpose() * (X - pose.t);
  *z = xc.z();
  if (xc.z() <= 1e-6) return false;
  *u = cam.fx * xc.x() / xc.z() + cam.cx;
  *v = cam.fy * xc.y() / xc.z() + cam.cy;
  return true;
}

V3 rayDir(const PinholeCamera& cam, const Pose& pose, double u, double v) {
  return pose.q.toRotationMatrix() * V3((u - cam.cx) / cam.fx, (v - cam.cy) / cam.fy, 1.0);
}

// The face's plane and rectangle from the scene description (RectDesc / BoxDesc), not from
// the renderer's Face structs.
struct TestFace {
  V3 origin, eS, eT;  // unit edges
  double lenS, lenT;
  V3 normal() const { return eS.cross(eT); }
};

TestFace describeFace(const Scene& scene, int face) {
  const SceneDesc& d = scene.desc();
  TestFace f;
  if (face < static_cast<int>(d.rects.size())) {
    const RectDesc& r = d.rects[face];
    f.origin = r.origin;
    f.lenS = r.edgeS.norm();
    f.lenT = r.edgeT.norm();
    f.eS = r.edgeS / f.lenS;
    f.eT = r.edgeT / f.lenT;
    return f;
  }
  int b = (face - static_cast<int>(d.rects.size())) / 6, side = (face - d.rects.size()) % 6;
  const BoxDesc& box = d.boxes[b];
  V3 ex(std::cos(box.yawRad), std::sin(box.yawRad), 0), ey(-ex.y(), ex.x(), 0), ez(0, 0, 1);
  V3 h = box.halfSize, c = box.center;
  // The documented side order -x, +x, -y, +y, -z, +z with outward normals; texture axes as
  // scene3d.cc documents them: the test derives the corner from the axes.
  V3 n = (side == 0   ? -ex
          : side == 1 ? ex
          : side == 2 ? -ey
          : side == 3 ? ey
          : side == 4 ? -ez
                      : ez);
  const Face& rf = scene.faces()[face];
  f.eS = V3(rf.axisS.x, rf.axisS.y, rf.axisS.z);
  f.eT = V3(rf.axisT.x, rf.axisT.y, rf.axisT.z);
  // Check the axes against the box (they must span the side, orthogonal to n).
  EXPECT_NEAR(f.eS.cross(f.eT).dot(n), 1.0, 1e-12) << "face " << face;
  auto extent = [&](const V3& a) {
    return 2 * (std::abs(a.dot(ex)) * h.x() + std::abs(a.dot(ey)) * h.y() +
                std::abs(a.dot(ez)) * h.z());
  };
  f.lenS = extent(f.eS);
  f.lenT = extent(f.eT);
  V3 centerOfSide =
      c +
      (std::abs(n.dot(ex)) * h.x() + std::abs(n.dot(ey)) * h.y() + std::abs(n.dot(ez)) * h.z()) * n;
  f.origin = centerOfSide - 0.5 * f.lenS * f.eS - 0.5 * f.lenT * f.eT;
  return f;
}

double luma(const V3& c) { return 0.299 * c.x() + 0.587 * c.y() + 0.114 * c.z(); }
double luma(const Rgb8& c) { return (0.299 * c.r + 0.587 * c.g + 0.114 * c.b) / 255.0; }

// The reference colour of pixel (px, py): the mean of 8x8 point samples of the texture of
// `face` over the pixel area; false when a sample leaves the face (an edge pixel).
bool referencePixel(const Scene& scene, const TestFace& f, int face, const PinholeCamera& cam,
                    const Pose& pose, int px, int py, V3* out) {
  V3 sum = V3::Zero();
  const int n = 8;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      double u = px - 0.5 + (i + 0.5) / n, v = py - 0.5 + (j + 0.5) / n;
      V3 d = rayDir(cam, pose, u, v);
      double t = f.normal().dot(f.origin - pose.t) / f.normal().dot(d);
      if (!(t > 0)) return false;
      V3 q = pose.t + t * d - f.origin;
      double s = q.dot(f.eS), w = q.dot(f.eT);
      if (s < 0 || s > f.lenS || w < 0 || w > f.lenT) return false;
      auto hit = scene.intersect(pose.t, d);
      if (!hit || hit->face != face) return false;  // occluded by something else
      sum += scene.albedo(face, s, w);
    }
  }
  *out = sum / (n * n);
  return true;
}

struct PointSample {
  int face;
  V3 X;
};

// Random points on the faces that face the camera, uniform in each face's area.
std::vector<PointSample> samplePoints(const Scene& scene, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<PointSample> out;
  std::uniform_real_distribution<double> uni(0, 1);
  int faces = static_cast<int>(scene.faces().size());
  while (static_cast<int>(out.size()) < count) {
    int f = std::uniform_int_distribution<int>(0, faces - 1)(rng);
    TestFace tf = describeFace(scene, f);
    V3 X = tf.origin + uni(rng) * tf.lenS * tf.eS + uni(rng) * tf.lenT * tf.eT;
    out.push_back({f, X});
  }
  return out;
}

struct Errors {
  std::vector<double> diff;  // |rendered - reference| luma in 8-bit levels
  double quantile(double q) {
    std::sort(diff.begin(), diff.end());
    return diff.empty() ? 0 : diff[static_cast<size_t>(q * (diff.size() - 1))];
  }
};

// Compares rendered pixels at the projections of scene points (shifted by `shift` pixels in
// x to show that the test can fail) with the reference.
Errors compareAtProjections(const Scene& scene, const PinholeCamera& cam, const Pose& pose,
                            const RgbImage& img, const std::vector<PointSample>& pts, int shift) {
  Errors e;
  for (const PointSample& p : pts) {
    double u, v, z;
    if (!projectPoint(cam, pose, p.X, &u, &v, &z)) continue;
    int px = static_cast<int>(std::lround(u)), py = static_cast<int>(std::lround(v));
    if (px < 2 || py < 2 || px >= cam.width - 2 || py >= cam.height - 2) continue;
    V3 ref;
    if (!referencePixel(scene, describeFace(scene, p.face), p.face, cam, pose, px, py, &ref))
      continue;
    e.diff.push_back(std::abs(luma(img(px + shift, py)) - luma(ref)) * 255.0);
  }
  return e;
}

TEST(Render3d, PixelsAtProjectedSurfacePointsMatchTheirTexture) {
  for (const char* name : {"facade", "room"}) {
    Scene scene = makeScene(name, 7);
    PathOptions po;
    po.kind = PathKind::Orbit;
    po.frames = 5;
    auto frames = makeCameraPath(scene, po);
    PinholeCamera cam = PinholeCamera::fromHfov(160, 120, 60);
    auto pts = samplePoints(scene, 4000, 3);
    for (int fi : {0, 4}) {
      RgbImage img = renderImage(scene, cam, frames[fi].pose);
      Errors truth = compareAtProjections(scene, cam, frames[fi].pose, img, pts, 0);
      Errors shifted = compareAtProjections(scene, cam, frames[fi].pose, img, pts, 1);
      ASSERT_GT(truth.diff.size(), 100u) << name << " frame " << fi;
      double med = truth.quantile(0.5), q90 = truth.quantile(0.9);
      double medShift = shifted.quantile(0.5);
      // Measured: median 0.8, 90% 2.8-4.3 levels; one pixel off: 3.4-8.3 and 20-26.
      EXPECT_LT(med, 1.5) << name << " frame " << fi;
      EXPECT_LT(q90, 6.0) << name << " frame " << fi;
      // One pixel off gives clearly larger errors: the comparison can fail.
      EXPECT_GT(medShift, 3 * med) << name << " frame " << fi;
      EXPECT_GT(shifted.quantile(0.9), 3 * q90) << name << " frame " << fi;
    }
  }
}

// Bilinear gray at (u, v).
double sampleGray(const RgbImage& img, double u, double v) {
  int x0 = static_cast<int>(std::floor(u)), y0 = static_cast<int>(std::floor(v));
  double fx = u - x0, fy = v - y0;
  auto g = [&](int x, int y) { return luma(img(x, y)); };
  return (1 - fy) * ((1 - fx) * g(x0, y0) + fx * g(x0 + 1, y0)) +
         fy * ((1 - fx) * g(x0, y0 + 1) + fx * g(x0 + 1, y0 + 1));
}

// NCC of 9x9 patches of surface points around X (a grid on the face) seen in two frames.
double patchNcc(const Scene& scene, const PinholeCamera& cam, const PointSample& p, const Pose& a,
                const RgbImage& ia, const Pose& b, const RgbImage& ib, double shiftB, bool* ok) {
  TestFace f = describeFace(scene, p.face);
  // The grid spacing: about one pixel in frame a.
  double u, v, z;
  *ok = projectPoint(cam, a, p.X, &u, &v, &z);
  if (!*ok) return 0;
  double step = z / cam.fx;
  std::vector<double> va, vb;
  for (int j = -4; j <= 4; ++j) {
    for (int i = -4; i <= 4; ++i) {
      V3 X = p.X + i * step * f.eS + j * step * f.eT;
      V3 q = X - f.origin;
      double s = q.dot(f.eS), w = q.dot(f.eT);
      if (s < 0 || s > f.lenS || w < 0 || w > f.lenT) return *ok = false, 0;
      for (int k = 0; k < 2; ++k) {
        const Pose& pose = k == 0 ? a : b;
        double pu, pv, pz;
        if (!projectPoint(cam, pose, X, &pu, &pv, &pz)) return *ok = false, 0;
        if (k == 1) pu += shiftB;
        // Seen obliquely, a patch shrinks to a line: require a view within 65 degrees of
        // the normal in both frames.
        if (i == 0 && j == 0) {
          V3 view = (pose.t - X).normalized();
          if (std::abs(view.dot(f.normal())) < 0.42) return *ok = false, 0;
        }
        if (pu < 1 || pv < 1 || pu > cam.width - 2 || pv > cam.height - 2) return *ok = false, 0;
        auto hit = scene.intersect(pose.t, X - pose.t);
        if (!hit || hit->face != p.face || std::abs(hit->t - 1) > 1e-9) return *ok = false, 0;
        (k == 0 ? va : vb).push_back(sampleGray(k == 0 ? ia : ib, pu, pv));
      }
    }
  }
  double ma = 0, mb = 0;
  for (size_t i = 0; i < va.size(); ++i) ma += va[i], mb += vb[i];
  ma /= va.size();
  mb /= vb.size();
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    sab += (va[i] - ma) * (vb[i] - mb);
    saa += (va[i] - ma) * (va[i] - ma);
    sbb += (vb[i] - mb) * (vb[i] - mb);
  }
  if (saa < 1e-6 || sbb < 1e-6) return *ok = false, 0;
  return sab / std::sqrt(saa * sbb);
}

TEST(Render3d, SurfacePatchesCorrelateAcrossFramesUnderTheTruePoses) {
  Scene scene = makeScene("facade", 11);
  PathOptions po;
  po.kind = PathKind::Sideways;
  po.frames = 11;
  auto frames = makeCameraPath(scene, po);
  PinholeCamera cam = PinholeCamera::fromHfov(320, 240, 60);
  RgbImage a = renderImage(scene, cam, frames[0].pose);
  RgbImage b = renderImage(scene, cam, frames[2].pose);  // 1.2 m sideways
  auto pts = samplePoints(scene, 20000, 5);
  std::vector<double> truth, shifted;
  for (const PointSample& p : pts) {
    bool ok1, ok2;
    double n1 = patchNcc(scene, cam, p, frames[0].pose, a, frames[2].pose, b, 0.0, &ok1);
    double n2 = patchNcc(scene, cam, p, frames[0].pose, a, frames[2].pose, b, 2.0, &ok2);
    if (ok1 && ok2) {
      truth.push_back(n1);
      shifted.push_back(n2);
    }
  }
  ASSERT_GT(truth.size(), 100u);
  std::sort(truth.begin(), truth.end());
  std::sort(shifted.begin(), shifted.end());
  // Measured: 601 patches, median 0.997, 10% quantile 0.979; 2 px off: median 0.56.
  EXPECT_GT(truth[truth.size() / 2], 0.99);
  EXPECT_GT(truth[truth.size() / 10], 0.95);
  EXPECT_LT(shifted[shifted.size() / 2], 0.8);  // 2 px off: the patches no longer agree
}

TEST(Render3d, ABoxHidesTheWallBehindIt) {
  Scene scene = makeScene("facade", 3);
  PathOptions po;
  po.kind = PathKind::Forward;
  po.frames = 2;
  Pose pose = makeCameraPath(scene, po)[0].pose;
  PinholeCamera cam = PinholeCamera::fromHfov(160, 120, 60);
  RgbImage img = renderImage(scene, cam, pose);
  Image<float> depth = renderDepth(scene, cam, pose);
  const SceneDesc& d = scene.desc();
  int checked = 0;
  for (int b = 0; b < static_cast<int>(d.boxes.size()); ++b) {
    // The ray through the box centre meets the facade plane y = 6 behind it.
    V3 c = d.boxes[b].center;
    if (c.y() > 5.5) continue;  // pillars and ledges touch the wall
    double u, v, z;
    if (!projectPoint(cam, pose, c, &u, &v, &z)) continue;
    int px = static_cast<int>(std::lround(u)), py = static_cast<int>(std::lround(v));
    if (px < 1 || py < 1 || px >= cam.width - 1 || py >= cam.height - 1) continue;
    V3 dir = rayDir(cam, pose, px, py);
    double tWall = (6.0 - pose.t.y()) / dir.y();
    V3 wallPoint = pose.t + tWall * dir;
    if (std::abs(wallPoint.x()) > 15 || wallPoint.z() < 0 || wallPoint.z() > 7) continue;
    auto hit = scene.intersect(pose.t, dir);
    ASSERT_TRUE(hit);
    EXPECT_EQ(scene.boxOfFace(hit->face), b);
    EXPECT_LT(hit->t, tWall);
    // The depth image says the box, not the wall.
    EXPECT_NEAR(depth(px, py), hit->t, 1e-4 * hit->t);
    // The pixel shows the box's texture, not the wall's.
    V3 refBox, refWall;
    ASSERT_TRUE(referencePixel(scene, describeFace(scene, hit->face), hit->face, cam, pose, px, py,
                               &refBox));
    V3 q = wallPoint - d.rects[1].origin;
    refWall =
        scene.albedo(1, q.dot(d.rects[1].edgeS.normalized()), q.dot(d.rects[1].edgeT.normalized()));
    double got = luma(img(px, py));
    EXPECT_LT(std::abs(got - luma(refBox)) * 255, 6.0) << "box " << b;
    if (std::abs(luma(refWall) - luma(refBox)) > 0.1) {
      EXPECT_GT(std::abs(got - luma(refWall)), 0.05) << "box " << b;
    }
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

TEST(Render3d, DepthEqualsTheCameraZOfTheSurfacePoint) {
  Scene scene = makeScene("room", 1);
  PathOptions po;
  po.kind = PathKind::Pan;
  po.frames = 3;
  Pose pose = makeCameraPath(scene, po)[1].pose;
  PinholeCamera cam = PinholeCamera::fromHfov(160, 120, 70);
  Image<float> depth = renderDepth(scene, cam, pose);
  int n = 0;
  for (int y = 3; y < cam.height; y += 7) {
    for (int x = 5; x < cam.width; x += 9) {
      auto hit = scene.intersect(pose.t, rayDir(cam, pose, x, y));
      ASSERT_TRUE(hit);  // a closed room: every ray meets a surface
      double u, v, z;
      ASSERT_TRUE(projectPoint(cam, pose, hit->point, &u, &v, &z));
      EXPECT_NEAR(u, x, 1e-6);
      EXPECT_NEAR(v, y, 1e-6);
      EXPECT_NEAR(depth(x, y), z, 1e-5 * z);
      // The point lies on the face it names.
      TestFace f = describeFace(scene, hit->face);
      EXPECT_NEAR((hit->point - f.origin).dot(f.normal()), 0.0, 1e-9);
      ++n;
    }
  }
  EXPECT_GT(n, 200);
}

// A reference anti-aliased image: 4x4 point-sampled sub-pixels per pixel, from a camera
// with 4x the resolution (pixel centre convention: cx' = 4 cx + 1.5).
Image<Vec3> supersampledReference(const Scene& scene, const PinholeCamera& cam, const Pose& pose) {
  PinholeCamera hi = cam;
  hi.width = cam.width * 4;
  hi.height = cam.height * 4;
  hi.fx = cam.fx * 4;
  hi.fy = cam.fy * 4;
  hi.cx = cam.cx * 4 + 1.5;
  hi.cy = cam.cy * 4 + 1.5;
  RenderOptions point;
  point.antialias = false;
  Image<Vec3> big = renderLinear(scene, hi, pose, point);
  Image<Vec3> out(cam.width, cam.height);
  for (int y = 0; y < cam.height; ++y)
    for (int x = 0; x < cam.width; ++x) {
      Vec3 s;
      for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 4; ++i) s = s + big(4 * x + i, 4 * y + j);
      out(x, y) = s * (1.0 / 16);
    }
  return out;
}

double meanAbsLumaDiff(const Image<Vec3>& a, const Image<Vec3>& b) {
  double sum = 0;
  for (long i = 0; i < a.pixels(); ++i) {
    Vec3 p = a.data()[i], q = b.data()[i];
    sum += std::abs(luma(V3(p.x, p.y, p.z)) - luma(V3(q.x, q.y, q.z)));
  }
  return sum / a.pixels();
}

TEST(Render3d, AntialiasingIsCloserToTheSupersampledImageThanOneRay) {
  Scene scene = makeScene("facade", 2);
  PathOptions po;
  po.kind = PathKind::Forward;
  po.frames = 2;
  Pose pose = makeCameraPath(scene, po)[0].pose;
  PinholeCamera cam = PinholeCamera::fromHfov(160, 120, 60);
  Image<Vec3> ref = supersampledReference(scene, cam, pose);
  RenderOptions aa, plain;
  plain.antialias = false;
  double eAa = meanAbsLumaDiff(renderLinear(scene, cam, pose, aa), ref);
  double ePlain = meanAbsLumaDiff(renderLinear(scene, cam, pose, plain), ref);
  EXPECT_LT(eAa, 0.6 * ePlain) << "aa " << eAa << " plain " << ePlain;
  EXPECT_LT(eAa * 255, 4.0);
}

TEST(Render3d, DeterministicBySeedAndThreads) {
  Scene s1 = makeScene("room", 5), s1b = makeScene("room", 5), s2 = makeScene("room", 6);
  PathOptions po;
  po.frames = 3;
  Pose pose = makeCameraPath(s1, po)[1].pose;
  PinholeCamera cam = PinholeCamera::fromHfov(96, 64, 60);
  RenderOptions serial;
  serial.parallel = false;
  RgbImage a = renderImage(s1, cam, pose), b = renderImage(s1b, cam, pose, serial),
           c = renderImage(s2, cam, pose);
  ASSERT_EQ(a.vec().size(), b.vec().size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.vec().size() * sizeof(Rgb8)));
  long differ = 0;
  for (long i = 0; i < a.pixels(); ++i)
    differ += (a.data()[i].r != c.data()[i].r || a.data()[i].g != c.data()[i].g);
  EXPECT_GT(differ, a.pixels() / 2);
}

// Rich texture for KLT: the smaller eigenvalue of the 2x2 structure tensor over 8x8 blocks.
TEST(Render3d, FramesAreTexturedEverywhereForCornerTrackers) {
  for (const char* name : {"room", "facade"}) {
    for (const std::string& path : pathKindNames()) {
      Scene scene = makeScene(name, 1);
      PathOptions po;
      po.kind = parsePathKind(path);
      po.frames = 3;
      Pose pose = makeCameraPath(scene, po)[1].pose;
      PinholeCamera cam = PinholeCamera::fromHfov(160, 120, 60);
      RgbImage img = renderImage(scene, cam, pose);
      int blocks = 0, textured = 0;
      for (int by = 0; by + 8 <= cam.height; by += 8) {
        for (int bx = 0; bx + 8 <= cam.width; bx += 8) {
          double gxx = 0, gyy = 0, gxy = 0;
          for (int y = by + 1; y < by + 7; ++y)
            for (int x = bx + 1; x < bx + 7; ++x) {
              double gx = 0.5 * (luma(img(x + 1, y)) - luma(img(x - 1, y)));
              double gy = 0.5 * (luma(img(x, y + 1)) - luma(img(x, y - 1)));
              gxx += gx * gx, gyy += gy * gy, gxy += gx * gy;
            }
          double tr = gxx + gyy, det = gxx * gyy - gxy * gxy;
          double minEig = 0.5 * (tr - std::sqrt(std::max(0.0, tr * tr - 4 * det)));
          ++blocks;
          textured += minEig / 36 > 1e-4;  // mean gradient energy (about 2.5 levels per px)
        }
      }
      EXPECT_GT(textured, 0.8 * blocks) << name << " " << path;
    }
  }
}

}  // namespace
}  // namespace vidmap::synth
