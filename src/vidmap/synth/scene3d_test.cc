// The scene description, ray casting and the procedural texture (scene3d.h,
// surface_texture.h), against geometry worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "vidmap/core/error.h"
#include "vidmap/synth/scene3d.h"

namespace vidmap::synth {
namespace {

using V3 = Eigen::Vector3d;

// One 2 x 2 m floor tile at z = 0 and one box (1 x 0.5 x 0.4 m) turned 90 degrees.
Scene tinyScene(std::uint32_t seed = 1) {
  SceneDesc d;
  d.name = "tiny";
  d.rects = {{V3(-1, -1, 0), V3(2, 0, 0), V3(0, 2, 0)}};
  d.boxes = {{V3(3, 0, 1), V3(0.5, 0.25, 0.2), M_PI / 2}};
  return Scene(d, seed);
}

TEST(Scene3d, PresetsBuildAndUnknownNamesAreRejected) {
  for (const std::string& name : scenePresets()) {
    Scene s = makeScene(name, 1);
    EXPECT_EQ(s.name(), name);
    EXPECT_EQ(s.faces().size(), s.desc().rects.size() + 6 * s.desc().boxes.size());
  }
  try {
    makeScene("castle", 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("castle"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("room"), std::string::npos);
  }
}

TEST(Scene3d, BadDescriptionsAreRejected) {
  SceneDesc d;
  d.name = "bad";
  d.rects = {{V3(0, 0, 0), V3(1, 0, 0), V3(1, 1, 0)}};  // not orthogonal
  EXPECT_THROW(Scene(d, 1), Error);
  d.rects = {{V3(0, 0, 0), V3(0, 0, 0), V3(0, 1, 0)}};  // zero edge
  EXPECT_THROW(Scene(d, 1), Error);
  d.rects = {};
  d.boxes = {{V3(0, 0, 0), V3(1, 0, 1), 0}};  // zero size
  EXPECT_THROW(Scene(d, 1), Error);
  d.boxes = {{V3(NAN, 0, 0), V3(1, 1, 1), 0}};
  EXPECT_THROW(Scene(d, 1), Error);
  d.boxes = {};
  EXPECT_THROW(Scene(d, 1), Error);  // nothing at all
}

TEST(Scene3d, BoxFacesLieOnTheBoxWithOutwardNormals) {
  Scene s = tinyScene();
  // Turned 90 degrees: the box's x axis is world +y, its y axis world -x.
  const V3 c(3, 0, 1);
  const V3 expectedNormal[6] = {V3(0, -1, 0), V3(0, 1, 0),  V3(1, 0, 0),
                                V3(-1, 0, 0), V3(0, 0, -1), V3(0, 0, 1)};
  const double expectedDist[6] = {0.5, 0.5, 0.25, 0.25, 0.2, 0.2};
  for (int side = 0; side < 6; ++side) {
    int f = s.faceOfBox(0, side);
    EXPECT_EQ(s.boxOfFace(f), 0);
    const Face& face = s.faces()[f];
    V3 n(face.normal.x, face.normal.y, face.normal.z);
    EXPECT_NEAR((n - expectedNormal[side]).norm(), 0, 1e-12) << side;
    V3 mid = s.facePoint(f, 0.5 * face.lenS, 0.5 * face.lenT);
    EXPECT_NEAR((mid - c).dot(n), expectedDist[side], 1e-12) << side;
    EXPECT_NEAR((mid - c - expectedDist[side] * n).norm(), 0, 1e-12) << side;
  }
  EXPECT_EQ(s.boxOfFace(0), -1);
}

TEST(Scene3d, RaysHitTheNearestSurfaceAtTheRightDistance) {
  Scene s = tinyScene();
  // From the -x side towards the box centre: the box's world x extent is +-0.25 (turned).
  auto h = s.intersect(V3(0, 0, 1), V3(1, 0, 0));
  ASSERT_TRUE(h);
  EXPECT_NEAR(h->t, 3 - 0.25, 1e-12);
  EXPECT_EQ(h->face, s.faceOfBox(0, 3));  // the box's +y side faces world -x
  EXPECT_NEAR((h->point - V3(2.75, 0, 1)).norm(), 0, 1e-12);
  // Straight down onto the floor tile; the ray's length scales t.
  h = s.intersect(V3(0.5, 0.25, 2), V3(0, 0, -2));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->face, 0);
  EXPECT_NEAR(h->t, 1.0, 1e-12);
  EXPECT_NEAR(h->s, 1.5, 1e-12);
  EXPECT_NEAR(h->u, 1.25, 1e-12);
  // The floor is two-sided; past its edge the ray sees the sky.
  EXPECT_TRUE(s.intersect(V3(0, 0, -1), V3(0, 0, 1)));
  EXPECT_FALSE(s.intersect(V3(1.5, 0, 2), V3(0, 0, -1)));
  EXPECT_FALSE(s.intersect(V3(0, 0, 1), V3(-1, 0, 0)));
  // A ray that passes 2.5 cm above the box's near top edge meets the top at its centre.
  h = s.intersect(V3(0, 0, 1.5), V3(3, 0, -0.3));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->face, s.faceOfBox(0, 5));
  EXPECT_NEAR(h->t, 1.0, 1e-12);
}

TEST(Scene3d, DistanceToSurfaceAndInsideBox) {
  Scene s = tinyScene();
  EXPECT_NEAR(s.distanceToSurface(V3(0, 0, 0.7)), 0.7, 1e-12);  // above the tile
  EXPECT_NEAR(s.distanceToSurface(V3(-2, 0, 0)), 1.0, 1e-12);   // beside its edge
  EXPECT_NEAR(s.distanceToSurface(V3(3, 0, 1.5)), 0.3, 1e-12);  // above the box
  EXPECT_NEAR(s.distanceToSurface(V3(3, 0, 1.1)), 0.1, 1e-12);  // inside: to the top
  EXPECT_NEAR(s.distanceToSurface(V3(4, 1, 1)), std::hypot(0.75, 0.5), 1e-12);  // corner edge
  EXPECT_TRUE(s.insideBox(V3(3, 0.4, 1)));
  EXPECT_FALSE(s.insideBox(V3(3.4, 0, 1)));  // the box is 0.5 wide in world x
}

TEST(SurfaceTexture, DeterministicBySeedAndRichInContrast) {
  Scene a = tinyScene(3), b = tinyScene(3), c = tinyScene(4);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> uni(0, 2);
  double sum = 0, sum2 = 0;
  int differ = 0, n = 2000;
  for (int i = 0; i < n; ++i) {
    double s = uni(rng), u = uni(rng);
    V3 ca = a.albedo(0, s, u), cb = b.albedo(0, s, u), cc = c.albedo(0, s, u);
    EXPECT_EQ(ca, cb);
    differ += (ca - cc).norm() > 1e-3;
    EXPECT_TRUE((ca.array() >= 0).all() && (ca.array() <= 1).all());
    double l = 0.299 * ca.x() + 0.587 * ca.y() + 0.114 * ca.z();
    sum += l;
    sum2 += l * l;
  }
  EXPECT_GT(differ, n * 9 / 10);
  double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_GT(sd, 0.06);  // strong texture (measured 0.077: 20 grey levels)
  // Faces of one scene differ from each other.
  EXPECT_GT((a.albedo(1, 0.1, 0.1) - a.albedo(2, 0.1, 0.1)).norm() +
                (a.albedo(1, 0.3, 0.2) - a.albedo(2, 0.3, 0.2)).norm(),
            1e-3);
}

// The prefiltered texture approximates the mean of point samples over the footprint box,
// much better than a point sample does once the footprint is larger than the detail.
TEST(SurfaceTexture, PrefilterApproximatesTheBoxAverage) {
  Scene sc = tinyScene(9);
  const SurfaceTexture& tx = sc.faces()[0].texture;
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> uni(0, 2);
  for (double w : {0.01, 0.04, 0.15}) {
    double errFiltered = 0, errPoint = 0;
    const int n = 150, k = 24;
    for (int i = 0; i < n; ++i) {
      double s = uni(rng), u = uni(rng);
      double avg = 0;
      for (int y = 0; y < k; ++y)
        for (int x = 0; x < k; ++x) {
          Vec3 c = evalSurfaceTexture(tx, s + w * ((x + 0.5) / k - 0.5),
                                      u + w * ((y + 0.5) / k - 0.5), Footprint{});
          avg += c.y;
        }
      avg /= k * k;
      errFiltered += std::abs(evalSurfaceTexture(tx, s, u, Footprint{w, w}).y - avg);
      errPoint += std::abs(evalSurfaceTexture(tx, s, u, Footprint{}).y - avg);
    }
    errFiltered /= n;
    errPoint /= n;
    EXPECT_LT(errFiltered, 0.6 * errPoint) << "footprint " << w;
    EXPECT_LT(errFiltered, 0.04) << "footprint " << w;
  }
}

TEST(SurfaceTexture, FilteredPrimitivesAreExactBoxFilters) {
  // The square wave's box filter: the mean over the window, computed by sampling.
  for (double x : {-3.3, -0.2, 0.05, 0.9, 1.7, 12.01}) {
    for (double w : {0.1, 0.7, 1.0, 2.5}) {
      double avg = 0;
      const int k = 20000;
      for (int i = 0; i < k; ++i) avg += filteredSquareWave(x + w * ((i + 0.5) / k - 0.5), 0);
      EXPECT_NEAR(filteredSquareWave(x, w), avg / k, 2e-4) << x << " " << w;
    }
  }
  EXPECT_EQ(filteredStep(0.1, 0), 1.0);
  EXPECT_EQ(filteredStep(-0.1, 0), 0.0);
  EXPECT_DOUBLE_EQ(filteredStep(0.0, 0.4), 0.5);
  EXPECT_DOUBLE_EQ(filteredStep(0.1, 0.4), 0.75);
  EXPECT_EQ(floorFast(-0.5), -1.0);
  EXPECT_EQ(floorFast(2.0), 2.0);
  EXPECT_EQ(floorFast(-3.0), -3.0);
}

}  // namespace
}  // namespace vidmap::synth
