// The fast forms on the host give the same bits as the plain definitions: the vector window
// sums against the generic loops (the device's), the template and target windows against a
// per-pixel sampling with bilinearTap, and the CPU pyramid (two passes, unclamped interior)
// against pyrDownPixel and scharrPixel at every pixel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "vidmap/klt/cpu_backend.h"
#include "vidmap/klt/kernels.h"
#include "vidmap/synth/scene2d.h"

namespace vidmap::klt {
namespace {

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The definition of the template window: every pixel by bilinearTap, masked where the pixel
// lies outside the level.
void referenceTemplate(const LevelView& lv, float cx, float cy, int hw, TemplateWindow* w) {
  const int size = 2 * hw + 1;
  const Bilinear b = bilinearAt(cx, cy);
  w->allValid = true;
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < size; ++i) {
      const int k = j * size + i;
      const float x = cx + static_cast<float>(i - hw), y = cy + static_cast<float>(j - hw);
      if (x >= 0.0f && y >= 0.0f && x <= float(lv.width - 1) && y <= float(lv.height - 1)) {
        w->t[k] = bilinearTap(lv.gray, lv.width, lv.height, b, i - hw, j - hw);
        bilinearTapGrad(lv.grad, lv.width, lv.height, b, i - hw, j - hw, &w->gx[k], &w->gy[k]);
        w->m[k] = 1.0f;
      } else {
        w->t[k] = w->gx[k] = w->gy[k] = w->m[k] = 0.0f;
        w->allValid = false;
      }
    }
}

struct Level {
  std::vector<float> gray, grad;
  LevelView view;
};

Level makeLevel(int w, int h, std::uint64_t seed) {
  synth::TexturedSceneOptions o;
  o.width = w;
  o.height = h;
  o.seed = seed;
  o.gaussians = 60;
  const GrayImage img = synth::makeTexturedScene(o);
  Level l;
  l.gray = img.vec();
  l.grad.resize(2 * l.gray.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      scharrPixel(l.gray.data(), w, h, x, y, &l.grad[2 * (y * w + x)],
                  &l.grad[2 * (y * w + x) + 1]);
  l.view = {l.gray.data(), l.grad.data(), w, h};
  return l;
}

TEST(FastPaths, TemplateWindowEqualsPerPixelSampling) {
  const Level lv = makeLevel(41, 23, 4);  // the size of a coarse level: windows cross borders
  synth::Rng rng(9);
  for (int hw : {7, 10}) {
    const int n = (2 * hw + 1) * (2 * hw + 1);
    for (int trial = 0; trial < 400; ++trial) {
      // Points inside, near and beyond the borders, with fractions near 0 and 1 as well.
      float cx = static_cast<float>(rng.uniform(-3, 44)),
            cy = static_cast<float>(rng.uniform(-3, 26));
      if (trial % 5 == 0) cx = std::floor(cx) + 1e-7f * float(trial % 3);
      if (trial % 7 == 0) cy = std::nextafter(std::floor(cy) + 1.0f, 0.0f);
      static TemplateWindow fast, ref;
      for (int photometric : {0, 2}) {
        const TemplateSums s = sampleTemplate(lv.view, cx, cy, hw, photometric, 1e-6f, &fast);
        referenceTemplate(lv.view, cx, cy, hw, &ref);
        ASSERT_EQ(fast.allValid, ref.allValid);
        for (int k = 0; k < n; ++k) {
          ASSERT_TRUE(sameBits(fast.t[k], ref.t[k])) << cx << ", " << cy << " k " << k;
          ASSERT_TRUE(sameBits(fast.gx[k], ref.gx[k]));
          ASSERT_TRUE(sameBits(fast.gy[k], ref.gy[k]));
          ASSERT_TRUE(sameBits(fast.m[k], ref.m[k]));
        }
        TemplateSums g;
        g.n = s.n;
        templateWindowSumsGeneric(ref, n, photometric, &g);
        finishTemplateSums(&g, 1e-6f);
        ASSERT_EQ(std::memcmp(&g, &s, sizeof g), 0) << cx << ", " << cy;
      }
    }
  }
}

TEST(FastPaths, TargetWindowAndSumsEqualTheDefinitions) {
  const Level lv = makeLevel(64, 40, 5);
  synth::Rng rng(10);
  static TemplateWindow win;
  static float jw[kMaxWindowPixels];
  for (int hw : {7, 10, 15}) {
    const int size = 2 * hw + 1, n = size * size;
    for (int trial = 0; trial < 200; ++trial) {
      const float px = static_cast<float>(rng.uniform(-20, 84)),
                  py = static_cast<float>(rng.uniform(-20, 60));
      sampleTargetWindow(lv.view, px, py, hw, jw);
      const Bilinear b = bilinearAt(px, py);
      for (int j = 0; j < size; ++j)
        for (int i = 0; i < size; ++i)
          ASSERT_TRUE(
              sameBits(jw[j * size + i], bilinearTap(lv.gray.data(), 64, 40, b, i - hw, j - hw)));
      // Sums over a window with and without masked pixels.
      sampleTemplate(lv.view, static_cast<float>(rng.uniform(-5, 69)),
                     static_cast<float>(rng.uniform(-5, 45)), hw, 2, 1e-6f, &win);
      const TargetSums a = targetSums(jw, win, n), g = targetSumsGeneric(jw, win, n);
      ASSERT_EQ(std::memcmp(&a, &g, sizeof a), 0);
    }
  }
}

// Both row paths of the CPU backend (Options::cpuAvx2: the AVX2 copy where the CPU has it, and
// the baseline code).
TEST(FastPaths, CpuPyramidEqualsThePerPixelFunctions) {
  for (bool avx2 : {true, false})
    for (auto [w, h] : {std::pair{641, 361}, std::pair{640, 360}, std::pair{37, 21}}) {
      synth::TexturedSceneOptions o;
      o.width = w;
      o.height = h;
      const GrayImage img = synth::makeTexturedScene(o);
      Options opt;
      opt.levels = 5;
      opt.halfWindow = 7;
      opt.cpuAvx2 = avx2;
      CpuBackend b(w, h, opt);
      b.uploadGray(0, img.view());
      b.buildPyramid(0);
      const Layout& l = b.layout();
      std::vector<float> prev = img.vec();
      for (int lev = 0; lev < l.levels; ++lev) {
        const int lw = l.width[lev], lh = l.height[lev];
        std::vector<float> gray(lw * lh), grad(2 * lw * lh);
        b.readLevel(0, lev, gray.data(), grad.data());
        for (int y = 0; y < lh; ++y)
          for (int x = 0; x < lw; ++x) {
            if (lev > 0) {
              const float ref =
                  pyrDownPixel(prev.data(), l.width[lev - 1], l.height[lev - 1], x, y);
              ASSERT_TRUE(sameBits(gray[y * lw + x], ref))
                  << "level " << lev << " " << x << "," << y;
            }
            float gx, gy;
            scharrPixel(gray.data(), lw, lh, x, y, &gx, &gy);
            ASSERT_TRUE(sameBits(grad[2 * (y * lw + x)], gx));
            ASSERT_TRUE(sameBits(grad[2 * (y * lw + x) + 1], gy));
          }
        prev = gray;
      }
    }
}

}  // namespace
}  // namespace vidmap::klt
