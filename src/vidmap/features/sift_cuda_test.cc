// The CUDA SIFT backend against the CPU oracle (label gpu; skipped without a device).
// Tolerances: the scale space and the detection run the same float operations on both
// backends, so built with -DVIDMAP_CUDA_NO_FMA=ON the Gaussian levels and keypoint positions
// agree exactly; with FMA (the default) the levels agree to 1e-5 and positions to 0.01 px.
// The orientation histogram and the descriptor are summed by 32 lanes on the GPU (another
// order of float additions), so in both builds >= 99% of keypoints must have a counterpart
// (same octave, position as above, scale within 1e-3 relative, orientation within 1e-3 rad)
// and matched descriptors differ by < 1e-4 (median) and < 0.02 (99th percentile) in L2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "vidmap/features/sift.h"
#include "vidmap/features/sift_cpu.h"
#if VIDMAP_HAVE_CUDA
#include "vidmap/features/sift_cuda.h"
#endif
#include "vidmap/features/testing/blob_scene.h"
#include "vidmap/features/testing/load_image.h"
#include "vidmap/gpu/device_buffer.h"
#include "vidmap/gpu/runtime.h"
#include "vidmap/io/color.h"

namespace vidmap::features {
namespace {

#if VIDMAP_CUDA_NO_FMA
constexpr bool kExact = true;
#else
constexpr bool kExact = false;
#endif

#define REQUIRE_DEVICE() \
  if (!cudaDeviceAvailable()) GTEST_SKIP() << "no CUDA device"

GrayImage testImage(int w, int h) {
  const std::filesystem::path graf = "/usr/share/doc/opencv-doc/examples/data/graf1.png";
  if (w == 800 && h == 640 && std::filesystem::exists(graf)) return testing::loadGray(graf);
  return testing::renderBlobs(testing::randomBlobScene(w, h, w * h / 300, 1.5, 10, 17), w, h);
}

SiftOptions withBackend(Backend b, SiftOptions o = {}) {
  o.backend = b;
  return o;
}

#if VIDMAP_HAVE_CUDA
TEST(SiftCuda, GaussiansEqualTheCpu) {
  REQUIRE_DEVICE();
  // The first octave from the frame in one piece, and band by band as it arrives (4 bands;
  // bands apply to octave 0 only, -1 is upsampled from the whole frame).
  for (auto [octave, bands] : {std::pair{0, 1}, std::pair{0, 4}, std::pair{-1, 4}}) {
    GrayImage img = testImage(333, 250);
    SiftOptions o;
    o.firstOctave = octave;
    auto cpu = siftCpuGaussians(constView(img.view()), o);
    SiftCuda sc(gpu::Context(0));
    sc.setUploadBands(bands);
    auto gpu = sc.gaussians(constView(img.view()), o);
    ASSERT_EQ(cpu.size(), gpu.size());
    double worst = 0;
    for (size_t i = 0; i < cpu.size(); ++i) {
      ASSERT_EQ(cpu[i].size(), gpu[i].size());
      for (size_t j = 0; j < cpu[i].size(); ++j)
        worst = std::max(worst, static_cast<double>(std::abs(cpu[i][j] - gpu[i][j])));
    }
    std::printf("[ gaussians octave %d, %d bands ] max |cpu - gpu| = %.3g\n", octave, bands, worst);
    if (kExact) {
      EXPECT_EQ(worst, 0.0);
    } else {
      EXPECT_LT(worst, 1e-5);
    }
  }
}
#endif

struct Agreement {
  double cpuFound = 0, gpuFound = 0;  // fractions with a counterpart
  double descMedian = 0, descP99 = 0, descMax = 0;
  size_t cpu = 0, gpu = 0;
};

Agreement compare(const Features& c, const Features& g) {
  Agreement a;
  a.cpu = c.size();
  a.gpu = g.size();
  const float tol = kExact ? 0.0f : 0.01f;
  auto same = [tol](const Keypoint& p, const Keypoint& q) {
    return p.octave == q.octave && std::abs(p.x - q.x) <= tol && std::abs(p.y - q.y) <= tol &&
           std::abs(p.scale - q.scale) <= 1e-3f * p.scale &&
           std::abs(std::remainder(p.orientation - q.orientation, 2 * M_PI)) <= 1e-3;
  };
  // Keypoints sorted by x for a windowed search.
  std::vector<int> gi(g.size());
  for (size_t i = 0; i < gi.size(); ++i) gi[i] = static_cast<int>(i);
  std::sort(gi.begin(), gi.end(),
            [&](int a, int b) { return g.keypoints[a].x < g.keypoints[b].x; });
  std::vector<float> gx;
  for (int i : gi) gx.push_back(g.keypoints[i].x);
  std::vector<double> dd;
  std::vector<char> gUsed(g.size(), 0);
  size_t found = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const auto& p = c.keypoints[i];
    auto lo = std::lower_bound(gx.begin(), gx.end(), p.x - 0.011f) - gx.begin();
    for (size_t k = lo; k < gx.size() && gx[k] <= p.x + 0.011f; ++k) {
      const int j = gi[k];
      if (gUsed[j] || !same(p, g.keypoints[j])) continue;
      gUsed[j] = 1;
      ++found;
      double s = 0;
      for (int d = 0; d < 128; ++d) {
        const double e = c.descriptor(i)[d] - g.descriptor(j)[d];
        s += e * e;
      }
      dd.push_back(std::sqrt(s));
      break;
    }
  }
  a.cpuFound = c.empty() ? 1 : double(found) / c.size();
  a.gpuFound = g.empty() ? 1 : double(found) / g.size();
  std::sort(dd.begin(), dd.end());
  if (!dd.empty()) {
    a.descMedian = dd[dd.size() / 2];
    a.descP99 = dd[std::min(dd.size() - 1, dd.size() * 99 / 100)];
    a.descMax = dd.back();
  }
  return a;
}

void expectAgreement(const Features& c, const Features& g, const char* name) {
  const Agreement a = compare(c, g);
  std::printf(
      "[ %s ] cpu %zu gpu %zu: matched %.4f / %.4f, descriptor L2 median %.3g p99 %.3g "
      "max %.3g\n",
      name, a.cpu, a.gpu, a.cpuFound, a.gpuFound, a.descMedian, a.descP99, a.descMax);
  EXPECT_GE(a.cpuFound, 0.99);
  EXPECT_GE(a.gpuFound, 0.99);
  EXPECT_LT(a.descMedian, 1e-4);
  EXPECT_LT(a.descP99, 0.02);
}

TEST(SiftCuda, KeypointsAndDescriptorsAgreeWithTheCpu) {
  REQUIRE_DEVICE();
  struct Case {
    int w, h, firstOctave, maxFeatures;
    bool upright;
    DescriptorNormalization norm;
    const char* name;
  };
  for (const Case& k :
       {Case{800, 640, 0, 4096, false, DescriptorNormalization::kL1Root, "graf1 default"},
        Case{800, 640, -1, 8192, false, DescriptorNormalization::kL2, "graf1 octave -1 L2"},
        Case{1280, 720, 0, 4096, false, DescriptorNormalization::kL1Root, "blobs 1280x720"},
        Case{641, 359, 0, 0, true, DescriptorNormalization::kL1Root, "blobs upright all"}}) {
    GrayImage img = testImage(k.w, k.h);
    SiftOptions o;
    o.firstOctave = k.firstOctave;
    o.maxFeatures = k.maxFeatures;
    o.upright = k.upright;
    o.normalization = k.norm;
    auto c = Sift(withBackend(Backend::kCpu, o)).extract(img).features;
    auto g = Sift(withBackend(Backend::kCuda, o)).extract(img).features;
    ASSERT_GT(c.size(), 100u) << k.name;
    expectAgreement(c, g, k.name);
  }
}

// A periodic image of identical elongated blobs: their extrema have equal |D| (the same float
// operations on the same pixels), so the strongest-N cut falls inside a run of ties that only
// the order of sift_select.h (octave, level, y, x) decides. The device ranks by a radix sort
// of |D| and orders ties itself; it must keep the CPU's points in the CPU's order.
TEST(SiftCuda, TiesAtTheCutGoAsOnTheCpu) {
  GrayImage img(512, 384);
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const float dx = static_cast<float>(x % 32 - 16), dy = static_cast<float>(y % 32 - 16);
      img(x, y) = 0.2f + 0.6f * std::exp(-(dx * dx / 32.0f + dy * dy / 8.0f));
    }
  SiftOptions o;
  o.upright = true;
  o.maxFeatures = 0;
  const auto all = Sift(withBackend(Backend::kCpu, o)).extract(img).features;
  o.maxFeatures = 40;
  ASSERT_GT(all.size(), 60u);
  // The premise: the 40th and the 41st strongest tie.
  ASSERT_EQ(all.keypoints[39].response, all.keypoints[40].response);
  int tied = 0;
  for (const auto& k : all.keypoints) tied += k.response == all.keypoints[39].response;
  std::printf("[ ties ] %zu points, %d share the 40th's response\n", all.size(), tied);
  REQUIRE_DEVICE();
  const auto c = Sift(withBackend(Backend::kCpu, o)).extract(img).features;
  const auto g = Sift(withBackend(Backend::kCuda, o)).extract(img).features;
  ASSERT_EQ(c.size(), 40u);
  ASSERT_EQ(g.size(), 40u);
  if (kExact) {
    for (int i = 0; i < 40; ++i) {
      const Keypoint &p = c.keypoints[i], &q = g.keypoints[i];
      EXPECT_EQ(p.octave, q.octave) << i;
      EXPECT_EQ(p.x, q.x) << i;
      EXPECT_EQ(p.y, q.y) << i;
      EXPECT_EQ(p.response, q.response) << i;
      EXPECT_NEAR(p.scale, q.scale, 1e-6f * p.scale) << i;
    }
  } else {
    expectAgreement(c, g, "ties");
  }
}

#if VIDMAP_HAVE_CUDA
// A frame with more extrema than the device's first list holds is redone with room for them;
// the claim map is left clear, so the next frame (a replay of the graph) finds the same points.
TEST(SiftCuda, MoreExtremaThanRoomAreRedone) {
  REQUIRE_DEVICE();
  const GrayImage img = testImage(640, 480);
  SiftOptions o;
  o.maxFeatures = 0;
  SiftStats cs{}, gs1{}, gs2{};
  const auto c = siftCpu(constView(img.view()), o, &cs);
  // Profiler off: the frames go through the CUDA graph (captured, recaptured with room, replayed).
  gpu::Context ctx(0);
  ctx.profiler().setEnabled(false);
  SiftCuda gpu{ctx};
  gpu.setInitialExtremaCapacity(64);
  const auto g1 = gpu.extract(constView(img.view()), o, &gs1);
  const auto g2 = gpu.extract(constView(img.view()), o, &gs2);
  std::printf("[ overflow ] extrema cpu %d gpu %d, %d\n", cs.extrema, gs1.extrema, gs2.extrema);
  ASSERT_GT(cs.extrema, 256);  // the premise: several times the first list's room
  EXPECT_EQ(gs1.extrema, cs.extrema);
  EXPECT_EQ(gs2.extrema, cs.extrema);
  expectAgreement(c, g1, "overflow");
  ASSERT_EQ(g1.size(), g2.size());
  for (size_t i = 0; i < g1.size(); ++i) {
    EXPECT_EQ(g1.keypoints[i].x, g2.keypoints[i].x) << i;
    EXPECT_EQ(g1.keypoints[i].y, g2.keypoints[i].y) << i;
  }
  EXPECT_EQ(g1.descriptors, g2.descriptors);
}
#endif

#if VIDMAP_HAVE_CUDA
// An 8-bit frame converted on the device gives the features of its float image (v / 255 on
// the host, as io/frame_source.cc makes it), bit for bit: through the CUDA graph (profiler off)
// and launch by launch (profiler on), so the forked streams of both paths agree too. Its
// device gray is that float image.
TEST(SiftCuda, ByteFramesGiveTheFeaturesOfTheirFloatImage) {
  REQUIRE_DEVICE();
  const GrayImage blobs = testImage(640, 480);
  const int w = blobs.width(), h = blobs.height();
  // A stride wider than the row, to check the byte rows are copied as rows.
  const int stride = w + 7;
  std::vector<std::uint8_t> bytes(static_cast<size_t>(stride) * h, 0);
  GrayImage img(w, h, 0.0f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float v = std::clamp(blobs(x, y), 0.0f, 1.0f);
      const auto b = static_cast<std::uint8_t>(std::lround(v * 255));
      bytes[static_cast<size_t>(y) * stride + x] = b;
      img(x, y) = static_cast<float>(b) / 255;
    }
  const ImageView<const std::uint8_t> view8{bytes.data(), w, h, stride};
  SiftOptions o;
  gpu::Context ctx(0);
  SiftCuda gpu{ctx};
  SiftStats fs{}, bs{};
  const auto f = gpu.extract(constView(img.view()), o, &fs);
  for (bool profiled : {true, false, false}) {
    ctx.profiler().setEnabled(profiled);
    const auto b = gpu.extract(view8, o, &bs);
    std::printf("[ bytes ] %zu features (float image %zu), profiled %d\n", b.size(), f.size(),
                profiled);
    ASSERT_GT(f.size(), 200u);
    EXPECT_EQ(bs.extrema, fs.extrema);
    EXPECT_EQ(bs.oriented, fs.oriented);
    ASSERT_EQ(b.size(), f.size());
    for (size_t i = 0; i < f.size(); ++i) {
      const Keypoint &p = f.keypoints[i], &q = b.keypoints[i];
      ASSERT_TRUE(p.x == q.x && p.y == q.y && p.scale == q.scale &&
                  p.orientation == q.orientation && p.response == q.response &&
                  p.octave == q.octave)
          << i;
    }
    EXPECT_EQ(b.descriptors, f.descriptors);
  }
  const auto g = gpu.deviceGray();
  ASSERT_EQ(g.width, w);
  std::vector<float> back(static_cast<size_t>(w) * h);
  gpu::rt::copyToHost(back.data(), g.data, back.size() * sizeof(float), ctx.stream().handle());
  ctx.synchronize();
  EXPECT_TRUE(std::equal(back.begin(), back.end(), img.vec().begin()));
}

// Every field of every keypoint and every descriptor value equal.
void expectSameFeatures(const Features& f, const Features& g, const char* what) {
  ASSERT_EQ(g.size(), f.size()) << what;
  for (size_t i = 0; i < f.size(); ++i) {
    const Keypoint &p = f.keypoints[i], &q = g.keypoints[i];
    ASSERT_TRUE(p.x == q.x && p.y == q.y && p.scale == q.scale && p.orientation == q.orientation &&
                p.response == q.response && p.octave == q.octave)
        << what << ", keypoint " << i;
  }
  EXPECT_EQ(g.descriptors, f.descriptors) << what;
}

TEST(SiftCuda, RgbFramesGiveTheFeaturesOfTheirHostLuma) {
  REQUIRE_DEVICE();
  // A colour frame whose channels differ (so that every term of the luma counts, and the
  // roundings of a contracted a * b + c would show), in rows wider than the image.
  const GrayImage blobs = testImage(640, 480);
  const int w = blobs.width(), h = blobs.height(), stride = w + 5;
  std::vector<Rgb8> pixels(static_cast<size_t>(stride) * h);
  GrayImage luma(w, h, 0.0f);
  auto byte = [](float v) {
    return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.f, 1.f) * 255));
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float v = blobs(x, y);
      const Rgb8 p{byte(v), byte(0.15f + 0.7f * v * v), byte(1.0f - 0.8f * v)};
      pixels[static_cast<size_t>(y) * stride + x] = p;
      luma(x, y) = io::lumaRec601(p.r, p.g, p.b);  // the host's gray, as io::Frame::gray
    }
  const ImageView<const Rgb8> rgb{pixels.data(), w, h, stride};
  SiftOptions o;
  gpu::Context ctx(0);
  SiftCuda gpu{ctx};
  SiftStats fs{}, rs{};
  const auto f = gpu.extract(constView(luma.view()), o, &fs);
  ASSERT_GT(f.size(), 200u);
  for (bool profiled : {true, false, false}) {  // launch by launch, then the graph twice
    ctx.profiler().setEnabled(profiled);
    const auto r = gpu.extract(rgb, o, &rs);
    std::printf("[ rgb ] %zu features (host luma %zu), profiled %d\n", r.size(), f.size(),
                profiled);
    EXPECT_EQ(rs.extrema, fs.extrema);
    EXPECT_EQ(rs.oriented, fs.oriented);
    expectSameFeatures(f, r, profiled ? "rgb, profiled" : "rgb, graph");
  }
  // The device's luma is the host's, pixel for pixel (and what deviceGray hands the KLT).
  const auto g = gpu.deviceGray();
  ASSERT_EQ(g.width, w);
  ASSERT_EQ(g.height, h);
  std::vector<float> back(static_cast<size_t>(w) * h);
  gpu::rt::copyToHost(back.data(), g.data, back.size() * sizeof(float), ctx.stream().handle());
  ctx.synchronize();
  EXPECT_TRUE(std::equal(back.begin(), back.end(), luma.vec().begin()));

  // Through features::Sift: the colour frame with its luma, and alone; keepGray gives the luma.
  SiftOptions ko = withBackend(Backend::kCuda);
  ko.keepGray = true;
  Sift sift(ko);
  ASSERT_TRUE(sift.lumaOnDevice());
  const SiftResult a = sift.extract(rgb, constView(luma.view()));
  expectSameFeatures(f, a.features, "Sift, rgb with its luma");
  EXPECT_EQ(a.gray.vec(), luma.vec());
  const SiftResult b = sift.extract(rgb);
  expectSameFeatures(f, b.features, "Sift, rgb alone");
  EXPECT_EQ(b.gray.vec(), luma.vec());
  const ImageView<const float> narrower{luma.data(), w - 1, h, w};
  EXPECT_THROW(sift.extract(rgb, narrower), Error);
}
#endif

#if VIDMAP_HAVE_CUDA
// The upload in bands, the first octave made band by band as they arrive: the same features
// as the frame in one piece, bit for bit, for every pixel type, launch by launch and through
// the graph, with and without the base blur (level 0 then a copy), bands thinner than the
// blurs' radii and uneven ones; the device gray is the frame's. An upsampled first octave
// ignores the bands.
TEST(SiftCuda, BandedUploadGivesTheSameFeatures) {
  REQUIRE_DEVICE();
  const GrayImage blobs = testImage(517, 389);
  const int w = blobs.width(), h = blobs.height();
  std::vector<std::uint8_t> bytes(static_cast<size_t>(w) * h);
  std::vector<Rgb8> rgb(static_cast<size_t>(w) * h);
  GrayImage fromBytes(w, h, 0.0f), luma(w, h, 0.0f);
  auto byte = [](float v) {
    return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.f, 1.f) * 255));
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float v = blobs(x, y);
      const size_t i = static_cast<size_t>(y) * w + x;
      bytes[i] = byte(v);
      fromBytes(x, y) = static_cast<float>(bytes[i]) / 255;
      rgb[i] = {byte(v), byte(0.15f + 0.7f * v * v), byte(1.0f - 0.8f * v)};
      luma(x, y) = io::lumaRec601(rgb[i].r, rgb[i].g, rgb[i].b);
    }
  const ImageView<const std::uint8_t> v8{bytes.data(), w, h, w};
  const ImageView<const Rgb8> vrgb{rgb.data(), w, h, w};
  gpu::Context ctx(0);
  SiftCuda gpu{ctx};
  auto deviceGray = [&] {
    std::vector<float> back(static_cast<size_t>(w) * h);
    const auto g = gpu.deviceGray();
    gpu::rt::copyToHost(back.data(), g.data, back.size() * sizeof(float), ctx.stream().handle());
    ctx.synchronize();
    return back;
  };
  for (int variant = 0; variant < 3; ++variant) {
    SiftOptions o;
    if (variant == 1) o.inputSigma = o.sigma;  // no base blur: level 0 is the frame
    if (variant == 2) o.firstOctave = -1;
    for (int source = 0; source < 3; ++source) {
      auto run = [&](SiftStats* st) {
        return source == 0   ? gpu.extract(constView(blobs.view()), o, st)
               : source == 1 ? gpu.extract(v8, o, st)
                             : gpu.extract(vrgb, o, st);
      };
      const GrayImage& gray = source == 0 ? blobs : source == 1 ? fromBytes : luma;
      ctx.profiler().setEnabled(true);
      gpu.setUploadBands(1);
      SiftStats fs{};
      const Features f = run(&fs);
      ASSERT_GT(f.size(), 100u);
      for (int bands : {2, 3, 7, 24, 0}) {  // 24: bands of 16 rows (the least), thinner than
                                            // the radii; 0: automatic
        gpu.setUploadBands(bands);
        for (bool profiled : {true, false, false}) {
          ctx.profiler().setEnabled(profiled);
          SiftStats bs{};
          const Features b = run(&bs);
          const std::string what = "variant " + std::to_string(variant) + ", source " +
                                   std::to_string(source) + ", bands " + std::to_string(bands) +
                                   (profiled ? ", profiled" : ", graph");
          EXPECT_EQ(bs.extrema, fs.extrema) << what;
          EXPECT_EQ(bs.oriented, fs.oriented) << what;
          expectSameFeatures(f, b, what.c_str());
          EXPECT_EQ(deviceGray(), gray.vec()) << what;
        }
      }
      std::printf("[ bands ] variant %d, source %d: %zu features\n", variant, source, f.size());
    }
  }
}
#endif

TEST(SiftCuda, OneObjectServesImagesOfDifferentSizes) {
  REQUIRE_DEVICE();
  Sift gpu(withBackend(Backend::kCuda));
  Sift cpu(withBackend(Backend::kCpu));
  for (auto [w, h] :
       {std::pair{640, 480}, std::pair{1280, 720}, std::pair{320, 200}, std::pair{1920, 1080}}) {
    GrayImage img = testImage(w, h);
    expectAgreement(cpu.extract(img).features, gpu.extract(img).features, "sizes");
  }
}

#if VIDMAP_HAVE_CUDA
TEST(SiftCuda, DeviceGrayIsTheInput) {
  REQUIRE_DEVICE();
  GrayImage img = testImage(211, 157);
  SiftCuda gpu{gpu::Context(0)};
  SiftOptions o;
  gpu.extract(constView(img.view()), o, nullptr);
  const auto g = gpu.deviceGray();
  ASSERT_EQ(g.width, 211);
  ASSERT_EQ(g.height, 157);
  gpu::Context ctx(0);
  std::vector<float> back(211 * 157);
  gpu::DeviceBuffer<float> tmp(ctx, back.size());
  // A device-to-device copy through a buffer of another context on the same device.
  ctx.makeCurrent();
  gpu::rt::copyDeviceToDevice(tmp.data(), g.data, back.size() * sizeof(float),
                              ctx.stream().handle());
  tmp.download(std::span<float>(back));
  EXPECT_TRUE(std::equal(back.begin(), back.end(), img.vec().begin()));
}

// The device copy of the descriptors (for Matcher::keepOnDevice) is the host's, bit for bit, in
// the same order (a 640x480 frame, more than 500 points).
TEST(SiftCuda, DeviceDescriptorsAreTheHostDescriptors) {
  REQUIRE_DEVICE();
  GrayImage img = testImage(640, 480);
  SiftCuda gpu{gpu::Context(0)};
  SiftOptions o;
  const Features f = gpu.extract(constView(img.view()), o, nullptr);
  ASSERT_GT(f.size(), 500u);
  gpu::Context ctx(0);
  std::vector<float> back(f.descriptors.size());
  gpu::DeviceBuffer<float> tmp(ctx, back.size());
  ctx.makeCurrent();
  gpu::rt::copyDeviceToDevice(tmp.data(), gpu.deviceDescriptors(), back.size() * sizeof(float),
                              ctx.stream().handle());
  tmp.download(std::span<float>(back));
  EXPECT_TRUE(std::equal(back.begin(), back.end(), f.descriptors.begin()));
}
#endif

TEST(SiftCuda, BadInputAsOnTheCpu) {
  REQUIRE_DEVICE();
  Sift gpu(withBackend(Backend::kCuda));
  EXPECT_TRUE(gpu.extract(GrayImage(300, 200, 0.5f)).features.empty());
  EXPECT_TRUE(gpu.extract(GrayImage(9, 9, 0.5f)).features.empty());
  GrayImage nan(64, 64, 0.5f);
  nan(3, 3) = std::nanf("");
  EXPECT_THROW(gpu.extract(nan), Error);
  EXPECT_THROW(gpu.extract(GrayImage()), Error);
}

TEST(SiftCuda, AutoPicksTheDeviceAndCudaWithoutOneIsAnError) {
  if (cudaDeviceAvailable()) {
    EXPECT_EQ(Sift(SiftOptions{}).backend(), Backend::kCuda);
  } else {
    EXPECT_EQ(Sift(SiftOptions{}).backend(), Backend::kCpu);
    EXPECT_THROW(Sift(withBackend(Backend::kCuda)), Error);
  }
}

}  // namespace
}  // namespace vidmap::features
