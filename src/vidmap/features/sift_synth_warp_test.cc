// SIFT and matching under the foundation's known 2D warps (synth/warp2d.h) of its textured
// scene (synth/scene2d.h): a point u of the first frame is at exactly A u + t in the second.
#include <gtest/gtest.h>

#include <cstdio>

#include "vidmap/features/matcher.h"
#include "vidmap/features/sift.h"
#include "vidmap/features/testing/metrics.h"
#include "vidmap/synth/scene2d.h"
#include "vidmap/synth/warp2d.h"

namespace vidmap::features {
namespace {

std::array<double, 9> homography(const synth::Warp2d& w) {
  return {w.a11, w.a12, w.tx, w.a21, w.a22, w.ty, 0, 0, 1};
}

struct WarpCase {
  const char* name;
  synth::Warp2d warp;
  double minRepeatability, minPrecision;
  size_t minMatches;
};

TEST(SiftSynthWarp, TexturedSceneUnderTheFoundationWarps) {
  synth::TexturedSceneOptions so;
  so.width = 400;
  so.height = 300;
  GrayImage a = synth::makeTexturedScene(so);
  // The scene's fine checker (period 11 px) peaks in scale below octave 0's first searched DoG
  // level, so octave 0 alone finds only ~160 points here; the upsampled octave finds them.
  SiftOptions o;
  o.backend = Backend::kCpu;
  o.firstOctave = -1;
  o.maxFeatures = 0;  // all: a cap would pick different subsets of the many equal blobs
  Sift sift(o);
  MatchOptions mo;
  mo.backend = Backend::kCpu;
  Matcher matcher(mo);
  const Features fa = sift.extract(a).features;
  ASSERT_GT(fa.size(), 300u);
  synth::Warp2d combo = synth::rotationAboutCentre(20, 400, 300);
  const synth::Warp2d s = synth::scaleAboutCentre(0.85, 400, 300);
  // combo = s after rotation, then a shift.
  synth::Warp2d c;
  c.a11 = s.a11 * combo.a11 + s.a12 * combo.a21;
  c.a12 = s.a11 * combo.a12 + s.a12 * combo.a22;
  c.a21 = s.a21 * combo.a11 + s.a22 * combo.a21;
  c.a22 = s.a21 * combo.a12 + s.a22 * combo.a22;
  c.tx = s.a11 * combo.tx + s.a12 * combo.ty + s.tx + 6.5;
  c.ty = s.a21 * combo.tx + s.a22 * combo.ty + s.ty - 3.25;
  synth::Warp2d bright = synth::translation(4.6, -2.3);
  bright.gain = 0.8;
  bright.offset = 0.1;
  // Gain 0.8 lowers every DoG value by 0.8 against a fixed threshold: points near it are lost.
  for (const WarpCase& k :
       {WarpCase{"translation", synth::translation(17.3, -9.6), 0.9, 0.97, 1500},
        WarpCase{"rotation 30", synth::rotationAboutCentre(30, 400, 300), 0.9, 0.97, 1500},
        WarpCase{"scale 0.75", synth::scaleAboutCentre(0.75, 400, 300), 0.85, 0.97, 1500},
        WarpCase{"scale 1.3", synth::scaleAboutCentre(1.3, 400, 300), 0.85, 0.94, 1000},
        WarpCase{"rotation+scale+shift", c, 0.9, 0.97, 1500},
        WarpCase{"gain 0.8 offset 0.1 + shift", bright, 0.6, 0.97, 1200}}) {
    GrayImage b = synth::warpImage(a, k.warp);
    const Features fb = sift.extract(b).features;
    const auto H = homography(k.warp);
    const auto rep = testing::repeatability(fa, fb, H);
    const auto m = matcher.match(fa, fb);
    const double prec = testing::matchPrecision(m, fa, fb, H, 2.0);
    std::printf(
        "[ synth %s ] features %zu/%zu repeatability %.3f (median %.3f px) matches %zu "
        "precision %.3f\n",
        k.name, fa.size(), fb.size(), rep.rate, rep.medianErrorPx, m.size(), prec);
    EXPECT_GE(rep.rate, k.minRepeatability) << k.name;
    EXPECT_GE(prec, k.minPrecision) << k.name;
    EXPECT_GE(m.size(), k.minMatches) << k.name;
  }
}

}  // namespace
}  // namespace vidmap::features
