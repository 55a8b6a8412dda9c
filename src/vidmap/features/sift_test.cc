// SIFT on images with known truth: single blobs (position, scale), an independent Gaussian
// convolution (the scale space), descriptor normalisation and the options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <utility>

#include "vidmap/features/sift.h"
#include "vidmap/features/sift_cpu.h"
#include "vidmap/features/sift_kernels.h"
#include "vidmap/features/sift_plan.h"
#include "vidmap/features/testing/blob_scene.h"
#include "vidmap/io/color.h"

namespace vidmap::features {
namespace {

using testing::Blob;
using testing::BlobScene;
using testing::renderBlobs;

SiftOptions cpuOptions() {
  SiftOptions o;
  o.backend = Backend::kCpu;
  return o;
}

BlobScene singleBlob(double x, double y, double sigma, double amplitude) {
  BlobScene s;
  s.background = 0.5;
  s.blobs.push_back({x, y, 1 / (sigma * sigma), 0, 1 / (sigma * sigma), amplitude, 5 * sigma});
  return s;
}

// The strongest keypoint of an isotropic blob sits at its centre with the blob's scale: the
// scale-normalised Laplacian of a Gaussian of sigma b peaks at sigma = b (Lindeberg), and the
// DoG levels approximate it.
TEST(Sift, IsotropicBlobGivesPositionAndScale) {
  for (double sigma : {2.5, 4.0, 7.0}) {
    for (double amp : {0.3, -0.3}) {
      const double cx = 80.37, cy = 71.81;
      GrayImage img = renderBlobs(singleBlob(cx, cy, sigma, amp), 160, 150);
      Sift sift(cpuOptions());
      auto r = sift.extract(img.view());
      ASSERT_FALSE(r.features.empty()) << "sigma " << sigma;
      const Keypoint& k = r.features.keypoints[0];  // strongest first
      EXPECT_NEAR(k.x, cx, 0.05) << "sigma " << sigma << " amp " << amp;
      EXPECT_NEAR(k.y, cy, 0.05) << "sigma " << sigma << " amp " << amp;
      EXPECT_GT(k.scale / sigma, 0.8) << "sigma " << sigma;
      EXPECT_LT(k.scale / sigma, 1.25) << "sigma " << sigma;
      EXPECT_GT(k.response, SiftOptions().peakThreshold);
    }
  }
}

// The upsampled first octave reaches blobs smaller than octave 0's first DoG level.
TEST(Sift, FirstOctaveMinusOneFindsSmallBlobs) {
  const double cx = 40.3, cy = 41.6, sigma = 1.2;
  GrayImage img = renderBlobs(singleBlob(cx, cy, sigma, 0.5), 80, 80);
  auto o = cpuOptions();
  o.firstOctave = -1;
  auto r = Sift(o).extract(img.view());
  ASSERT_FALSE(r.features.empty());
  const Keypoint& k = r.features.keypoints[0];
  EXPECT_EQ(k.octave, -1);
  EXPECT_NEAR(k.x, cx, 0.1);
  EXPECT_NEAR(k.y, cy, 0.1);
  EXPECT_NEAR(k.scale / sigma, 1.0, 0.25);
}

// Level 0 of octave 0 equals a direct 2D Gaussian convolution (double, clamped border) of
// blur sqrt(1.6^2 - 0.5^2); level 3 of octave 0 the convolution of blur sqrt(3.2^2 - 0.5^2).
TEST(Sift, ScaleSpaceMatchesDirectConvolution) {
  auto scene = testing::randomBlobScene(64, 48, 40, 1.5, 5, 7);
  GrayImage img = renderBlobs(scene, 64, 48);
  auto o = cpuOptions();
  auto levels = siftCpuGaussians(constView(img.view()), o);
  ASSERT_GE(levels.size(), 1u);
  for (int level : {0, 3}) {
    const double total = 1.6 * std::pow(2.0, level / 3.0);
    const double s = std::sqrt(total * total - 0.25);
    const int r = static_cast<int>(std::ceil(4 * s));
    // Incremental blurs with clamped borders equal one blur only away from the border.
    const int margin = level == 0 ? 0 : static_cast<int>(std::ceil(4 * total));
    double maxErr = 0;
    for (int y = margin; y < 48 - margin; ++y)
      for (int x = margin; x < 64 - margin; ++x) {
        double acc = 0, wsum = 0;
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) {
            const double w = std::exp(-(dx * dx + dy * dy) / (2 * s * s));
            acc += w * img(std::clamp(x + dx, 0, 63), std::clamp(y + dy, 0, 47));
            wsum += w;
          }
        maxErr = std::max(maxErr, std::abs(acc / wsum - levels[0][level * 64 * 48 + y * 64 + x]));
      }
    // Level 3 is reached by three incremental blurs, each truncated at 4 sigma.
    EXPECT_LT(maxErr, level == 0 ? 1e-6 : 2e-4) << "level " << level;
  }
}

// The CPU backend's vectorised blur gives, at every pixel, the bits of the shared per-pixel
// functions blurRowAt and blurColAt (which the CUDA kernels call).
TEST(Sift, CpuBlurEqualsTheSharedFunctions) {
  auto scene = testing::randomBlobScene(97, 61, 40, 1.5, 5, 8);
  GrayImage img = renderBlobs(scene, 97, 61);
  SiftOptions o;
  auto levels = siftCpuGaussians(constView(img.view()), o);
  const auto plan = planScaleSpace(97, 61, o);
  for (int level = 1; level < plan.levels(); ++level) {
    const ImageView<const float> prev{levels[0].data() + (level - 1) * 97 * 61, 97, 61, 97};
    std::vector<float> rows(97 * 61);
    for (int y = 0; y < 61; ++y)
      for (int x = 0; x < 97; ++x) rows[y * 97 + x] = blurRowAt(prev, x, y, plan.step[level]);
    const ImageView<const float> rv{rows.data(), 97, 61, 97};
    for (int y = 0; y < 61; ++y)
      for (int x = 0; x < 97; ++x)
        ASSERT_EQ(blurColAt(rv, x, y, plan.step[level]), levels[0][(level * 61 + y) * 97 + x])
            << "level " << level << " at " << x << ", " << y;
  }
}

// The gradients of a 120 x 100 scene of random blobs, the input of the descriptor tests.
struct BlobGradients {
  std::vector<Gradient> grad;
  BlobGradients() : grad(120 * 100) {
    const GrayImage img = renderBlobs(testing::randomBlobScene(120, 100, 80, 1.5, 6, 12), 120, 100);
    for (int y = 0; y < 100; ++y)
      for (int x = 0; x < 120; ++x) grad[y * 120 + x] = gradientAt(constView(img.view()), x, y);
  }
  GradientLevel level() const { return {grad.data(), 120, 100, 120}; }
};

// The row spans of the descriptor window only skip pixels that add nothing: the descriptor
// equals the one summed over the full square window.
// The extrema scan's filter (extremaInRow) against isExtremum at every pixel: random DoG levels
// quantised to a few values (many exact ties with neighbours, which the strict test refuses),
// plateaus, NaN and values on the prefilter's edge; widths of every remainder of eight.
TEST(Sift, ExtremaInRowEqualsIsExtremumAtEveryPixel) {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> level(-6, 6);
  int found = 0;
  for (int w : {3, 8, 9, 16, 21, 64, 103}) {
    const int h = 7, L = 5;
    std::vector<float> data(static_cast<size_t>(L) * w * h);
    for (float& v : data) v = 0.01f * level(rng);
    data[static_cast<size_t>(w) * h + w + 1] = std::nanf("");
    for (int x = 0; x < std::min(w, 6); ++x) data[2 * w * h + 3 * w + x] = 0.05f;  // plateau
    // A strict minimum of value 0 (an extremum only at prefilter 0, by the test for v <= 0).
    for (int ds = 1; ds <= 3; ++ds)
      for (int dy = 1; dy <= 3; ++dy)
        for (int dx = w - 3; dx < w; ++dx)
          data[(static_cast<size_t>(ds) * h + dy) * w + dx] = 0.02f;
    data[(2 * static_cast<size_t>(h) + 2) * w + w - 2] = 0;
    const DogOctave dog{data.data(), w, h, w, L};
    for (float prefilter : {0.0f, 0.03f, 0.06f}) {
      for (int s = 1; s < L - 1; ++s)
        for (int y = 1; y < h - 1; ++y) {
          std::vector<int> xs, ref;
          extremaInRow(dog, s, y, 1, w - 1, prefilter, &xs);
          for (int x = 1; x < w - 1; ++x)
            if (isExtremum(dog, s, x, y, prefilter)) ref.push_back(x);
          ASSERT_EQ(xs, ref) << "w " << w << " s " << s << " y " << y << " pre " << prefilter;
          found += static_cast<int>(ref.size());
        }
    }
  }
  EXPECT_GT(found, 50);  // the comparisons are not all of empty lists
}

TEST(Sift, DescriptorRowSpansDropNoPixel) {
  const BlobGradients blobs;
  const GradientLevel gl = blobs.level();
  for (int k = 0; k < 200; ++k) {
    const float angle = 6.2831853f * k / 200, sigma = 1.6f + 0.01f * k;
    const float ct = std::cos(angle), st = std::sin(angle), x = 60.3f + 0.01f * k, y = 49.7f;
    float spans[128], full[128] = {};
    describeKeypoint(gl, x, y, sigma, angle, ct, st, spans);
    const DescriptorWindow w = descriptorWindow(x, y, sigma, angle, ct, st);
    for (int dy = -w.W; dy <= w.W; ++dy)
      for (int dx = -w.W; dx <= w.W; ++dx) descriptorPixel(gl, w, dx, dy, full);
    for (int i = 0; i < 128; ++i) ASSERT_EQ(spans[i], full[i]) << "angle " << angle << " bin " << i;
  }
}

// The CPU's two-pass descriptor (the row's arithmetic first, eight pixels at a time on AVX2,
// then the bin adds in order) against the shared kernel the CUDA backend runs: equal bit for
// bit, for windows inside the image, across its borders and at every angle.
TEST(Sift, CpuDescriptorRowsEqualTheSharedKernel) {
  const BlobGradients blobs;
  const GradientLevel gl = blobs.level();
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(0, 1);
  int nonzero = 0;
  for (int k = 0; k < 400; ++k) {
    const float angle = 6.2831853f * u(rng), sigma = 1.2f + 4.0f * u(rng);
    const float ct = std::cos(angle), st = std::sin(angle);
    const float x = -5 + 130 * u(rng), y = -5 + 110 * u(rng);  // some windows cross the border
    float shared[128], cpu[128];
    describeKeypoint(gl, x, y, sigma, angle, ct, st, shared);
    describeKeypointCpu(gl, x, y, sigma, angle, ct, st, cpu);
    ASSERT_EQ(0, std::memcmp(shared, cpu, sizeof cpu)) << "point " << k;
    nonzero += std::any_of(cpu, cpu + 128, [](float v) { return v != 0; });
  }
  EXPECT_GT(nonzero, 300);
}

TEST(Sift, DescriptorsHaveUnitNormAndRootSiftIsNonNegative) {
  auto scene = testing::randomBlobScene(200, 160, 120, 2, 8, 3);
  GrayImage img = renderBlobs(scene, 200, 160);
  for (auto norm : {DescriptorNormalization::kL1Root, DescriptorNormalization::kL2}) {
    auto o = cpuOptions();
    o.normalization = norm;
    auto r = Sift(o).extract(img.view());
    ASSERT_GT(r.features.size(), 20u);
    for (size_t i = 0; i < r.features.size(); ++i) {
      const float* d = r.features.descriptor(i);
      double n2 = 0;
      for (int j = 0; j < 128; ++j) {
        EXPECT_GE(d[j], 0.0f);
        n2 += d[j] * d[j];
      }
      EXPECT_NEAR(n2, 1.0, 1e-4);
    }
  }
}

// RootSIFT is the square root of the L1-normalised L2 descriptor.
TEST(Sift, RootSiftIsSqrtOfL1NormalisedL2) {
  auto scene = testing::randomBlobScene(200, 160, 120, 2, 8, 4);
  GrayImage img = renderBlobs(scene, 200, 160);
  auto o = cpuOptions();
  o.normalization = DescriptorNormalization::kL2;
  auto l2 = Sift(o).extract(img.view()).features;
  o.normalization = DescriptorNormalization::kL1Root;
  auto root = Sift(o).extract(img.view()).features;
  ASSERT_EQ(l2.size(), root.size());
  for (size_t i = 0; i < l2.size(); ++i) {
    double l1 = 0;
    for (int j = 0; j < 128; ++j) l1 += l2.descriptor(i)[j];
    for (int j = 0; j < 128; ++j)
      ASSERT_NEAR(root.descriptor(i)[j], std::sqrt(l2.descriptor(i)[j] / l1), 1e-5);
  }
}

TEST(Sift, MaxFeaturesKeepsTheStrongest) {
  auto scene = testing::randomBlobScene(320, 240, 400, 1.5, 8, 5);
  GrayImage img = renderBlobs(scene, 320, 240);
  auto o = cpuOptions();
  o.maxFeatures = 0;
  auto all = Sift(o).extract(img.view()).features;
  ASSERT_GT(all.size(), 150u);
  o.maxFeatures = 100;
  auto top = Sift(o).extract(img.view()).features;
  ASSERT_EQ(top.size(), 100u);
  for (size_t i = 0; i < top.size(); ++i) {
    EXPECT_EQ(top.keypoints[i].x, all.keypoints[i].x);
    EXPECT_EQ(top.keypoints[i].y, all.keypoints[i].y);
    EXPECT_EQ(top.keypoints[i].orientation, all.keypoints[i].orientation);
    if (i > 0) {
      EXPECT_GE(top.keypoints[i - 1].response, top.keypoints[i].response);
    }
  }
  EXPECT_TRUE(std::equal(top.descriptors.begin(), top.descriptors.end(), all.descriptors.begin()));
}

TEST(Sift, AtMostTwoOrientationsAndUprightGivesZero) {
  auto scene = testing::randomBlobScene(320, 240, 400, 1.5, 8, 6);
  GrayImage img = renderBlobs(scene, 320, 240);
  auto o = cpuOptions();
  o.maxFeatures = 0;
  auto r = Sift(o).extract(img.view());
  // Points with the same position are the orientations of one extremum.
  std::map<std::pair<float, float>, int> perPoint;
  for (const auto& k : r.features.keypoints) ++perPoint[{k.x, k.y}];
  int twos = 0;
  for (auto& [p, n] : perPoint) {
    EXPECT_LE(n, 2);
    twos += n == 2;
  }
  EXPECT_GT(twos, 0);
  EXPECT_EQ(r.stats.oriented, static_cast<int>(r.features.size()));
  o.upright = true;
  auto up = Sift(o).extract(img.view());
  EXPECT_EQ(up.features.size(), perPoint.size());
  for (const auto& k : up.features.keypoints) EXPECT_EQ(k.orientation, 0.0f);
}

// The orientation of an elongated blob is perpendicular to its long axis (the gradient of a
// ridge points across it); rotating the blob rotates the orientation.
TEST(Sift, OrientationFollowsTheGradient) {
  for (double deg : {0.0, 35.0, 110.0}) {
    BlobScene s;
    const double t = deg * M_PI / 180, c = std::cos(t), sn = std::sin(t);
    const double s1 = 6, s2 = 2.5;  // long axis along (c, sn)
    const double l1 = 1 / (s1 * s1), l2 = 1 / (s2 * s2);
    // A bright ridge with a dark flank on one side gives one dominant gradient direction.
    s.blobs.push_back({60, 60, c * c * l1 + sn * sn * l2, c * sn * (l1 - l2),
                       sn * sn * l1 + c * c * l2, 0.3, 30});
    s.blobs.push_back({60 - 5 * sn, 60 + 5 * c, c * c * l1 + sn * sn * l2, c * sn * (l1 - l2),
                       sn * sn * l1 + c * c * l2, -0.3, 30});
    GrayImage img = renderBlobs(s, 120, 120);
    auto r = Sift(cpuOptions()).extract(img.view());
    ASSERT_FALSE(r.features.empty());
    // Orientations must rotate with the scene: compare with the unrotated case below.
    static float base = -1;
    const float o = r.features.keypoints[0].orientation;
    if (deg == 0) {
      base = o;
      continue;
    }
    double diff = std::remainder(o - base - t, 2 * M_PI);
    EXPECT_LT(std::abs(diff), 0.05) << "rotation " << deg;
  }
}

TEST(Sift, KeepGrayGivesTheInput) {
  auto scene = testing::randomBlobScene(64, 48, 20, 2, 5, 1);
  GrayImage img = renderBlobs(scene, 64, 48);
  auto o = cpuOptions();
  o.keepGray = true;
  o.clahe = true;
  auto r = Sift(o).extract(img.view());
  ASSERT_EQ(r.gray.width(), 64);
  ASSERT_EQ(r.gray.height(), 48);
  EXPECT_TRUE(std::equal(img.vec().begin(), img.vec().end(), r.gray.vec().begin()));
  // From RGB: the gray is the Rec. 601 conversion.
  RgbImage rgb(3, 2, Rgb8{200, 100, 50});
  o.clahe = false;
  auto rr = Sift(o).extract(rgb.view());
  EXPECT_NEAR(rr.gray(1, 1), (0.299 * 200 + 0.587 * 100 + 0.114 * 50) / 255, 1e-6);
  EXPECT_EQ(rr.gray(1, 1), io::lumaRec601(std::uint8_t{200}, std::uint8_t{100},
                                          std::uint8_t{50}));  // the gray of io's frames
  // With the luma the caller has: the features of that luma (the CPU works on it).
  rgb = RgbImage(64, 48);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) {
      const auto v = static_cast<std::uint8_t>(std::lround(std::clamp(img(x, y), 0.f, 1.f) * 255));
      rgb(x, y) = {v, static_cast<std::uint8_t>(255 - v), static_cast<std::uint8_t>(v / 2)};
    }
  const GrayImage luma = toGray(std::as_const(rgb).view());
  const SiftResult withLuma = Sift(o).extract(std::as_const(rgb).view(), luma.view());
  const SiftResult alone = Sift(o).extract(luma);
  EXPECT_EQ(withLuma.features.descriptors, alone.features.descriptors);
  EXPECT_EQ(withLuma.features.size(), alone.features.size());
  EXPECT_EQ(withLuma.gray.vec(), luma.vec());
  o.keepGray = false;
  EXPECT_TRUE(Sift(o).extract(img.view()).gray.empty());
}

TEST(Sift, OptionsNameTheBadField) {
  auto expectField = [](SiftOptions o, const char* field) {
    try {
      Sift s(o);
      FAIL() << "expected an error for " << field;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  SiftOptions o;
  o.firstOctave = -2;
  expectField(o, "sift.firstOctave");
  o = {};
  o.maxOrientations = 0;
  expectField(o, "sift.maxOrientations");
  o = {};
  o.peakThreshold = std::nanf("");
  expectField(o, "sift.peakThreshold");
  o = {};
  o.scalesPerOctave = 0;
  expectField(o, "sift.scalesPerOctave");
}

// Every option at the ends of its range runs (no kernel radius overflow, no crash) and keeps
// its contract.
TEST(Sift, OptionRangeEndsRun) {
  auto scene = testing::randomBlobScene(160, 120, 60, 1.5, 8, 13);
  GrayImage img = renderBlobs(scene, 160, 120);
  for (int S : {1, 8})
    for (float sigma : {0.8f, 4.0f})
      for (int oct : {-1, 0})
        for (float input : {0.0f, 2.0f}) {
          auto o = cpuOptions();
          o.scalesPerOctave = S;
          o.sigma = sigma;
          o.firstOctave = oct;
          o.inputSigma = input;
          o.maxOrientations = 4;
          o.numOctaves = 16;
          auto r = Sift(o).extract(img);
          for (const auto& k : r.features.keypoints) {
            ASSERT_TRUE(std::isfinite(k.x) && std::isfinite(k.scale) && k.scale > 0);
            ASSERT_GE(k.x, 0);
            ASSERT_LT(k.x, 160);
          }
        }
}

TEST(Sift, PlanFollowsTheImageSize) {
  SiftOptions o;
  auto p = planScaleSpace(1280, 720, o);
  ASSERT_FALSE(p.octaves.empty());
  EXPECT_EQ(p.octaves[0].width, 1280);
  EXPECT_EQ(p.octaves[1].width, 640);
  EXPECT_GE(std::min(p.octaves.back().width, p.octaves.back().height), kMinOctaveSide);
  o.firstOctave = -1;
  o.numOctaves = 4;
  p = planScaleSpace(1280, 720, o);
  ASSERT_EQ(p.octaves.size(), 4u);
  EXPECT_EQ(p.octaves[0].octave, -1);
  EXPECT_EQ(p.octaves[0].width, 2560);
  EXPECT_TRUE(planScaleSpace(10, 10, SiftOptions{}).octaves.empty());
}

}  // namespace
}  // namespace vidmap::features

namespace vidmap::features {
namespace {

TEST(SiftMath, ExpNegAndAtan2AreAccurate) {
  double worstExp = 0, worstAtan = 0;
  for (int i = 0; i <= 200000; ++i) {
    const float x = -30.0f * i / 200000;
    worstExp = std::max(worstExp, std::abs(expNeg(x) / std::exp(double(x)) - 1));
  }
  EXPECT_LT(worstExp, 1e-5);
  EXPECT_EQ(expNeg(-1000.0f), 0.0f);
  EXPECT_EQ(expNeg(0.0f), 1.0f);
  for (int i = 0; i < 100000; ++i) {
    const double t = 2 * M_PI * i / 100000;
    for (double r : {1e-3, 1.0, 300.0}) {
      const float y = static_cast<float>(r * std::sin(t)), x = static_cast<float>(r * std::cos(t));
      double want = std::atan2(double(y), double(x));
      if (want < 0) want += 2 * M_PI;
      const double got = atan2Positive(y, x);
      ASSERT_GE(got, 0.0);
      ASSERT_LT(got, 2 * M_PI);
      worstAtan = std::max(worstAtan, std::abs(std::remainder(got - want, 2 * M_PI)));
    }
  }
  EXPECT_LT(worstAtan, 1e-5);
  EXPECT_EQ(atan2Positive(0.0f, 0.0f), 0.0f);
  EXPECT_EQ(atan2Positive(-0.0f, 1.0f), 0.0f);
}

}  // namespace
}  // namespace vidmap::features
