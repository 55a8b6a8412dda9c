#include "vidmap/io/image_file.h"

#include <gtest/gtest.h>
#include <png.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>

#include "vidmap/core/data_dir.h"
#include "vidmap/io/io_test_util.h"

#if defined(VIDMAP_HAVE_OPENCV)
#include <opencv2/imgcodecs.hpp>
#endif

namespace vidmap::io {
namespace {

namespace fs = std::filesystem;
using testing::expectError;
using testing::freshDir;
using testing::writeBytes;
using testing::writeJpeg;
using testing::writeText;

// An independent PNG writer for the test inputs: libpng's write API with any colour type,
// bit depth, palette and interlacing. `rows` holds the PNG row bytes.
void writeRawPng(const fs::path& path, int w, int h, int colorType, int bitDepth,
                 const std::vector<unsigned char>& rows, const std::vector<png_color>& palette = {},
                 bool interlace = false) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  ASSERT_EQ(setjmp(png_jmpbuf(png)), 0);
  png_init_io(png, f);
  png_set_IHDR(png, info, w, h, bitDepth, colorType,
               interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!palette.empty()) png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
  png_write_info(png, info);
  size_t rowBytes = rows.size() / h;
  std::vector<png_bytep> ptrs(h);
  for (int y = 0; y < h; ++y) ptrs[y] = const_cast<png_bytep>(rows.data()) + y * rowBytes;
  png_write_image(png, ptrs.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(f);
}

// A smooth colour pattern (JPEG-friendly) with distinct values per pixel.
std::vector<unsigned char> pattern(int w, int h, int comps) {
  std::vector<unsigned char> px(static_cast<size_t>(w) * h * comps);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < comps; ++c) {
        double v = 127.5 + 100 * std::sin(0.11 * x + 0.07 * y + 2.0 * c);
        px[(static_cast<size_t>(y) * w + x) * comps + c] =
            static_cast<unsigned char>(std::lround(v));
      }
    }
  }
  return px;
}

float luma255(double r, double g, double b) {
  return static_cast<float>((0.299 * r + 0.587 * g + 0.114 * b) / 255.0);
}

TEST(ImageFile, LumaOfKnownColoursIsRec601) {
  auto d = freshDir("luma");
  // P6 with red, green, blue, white, black, gray 128, (10, 200, 30).
  std::vector<std::array<int, 3>> colours = {{255, 0, 0},     {0, 255, 0}, {0, 0, 255},
                                             {255, 255, 255}, {0, 0, 0},   {128, 128, 128},
                                             {10, 200, 30}};
  std::string header = "P6\n7 1\n255\n";
  std::vector<unsigned char> bytes(header.begin(), header.end());
  for (auto& c : colours)
    bytes.insert(bytes.end(), {(unsigned char)c[0], (unsigned char)c[1], (unsigned char)c[2]});
  writeBytes(d / "c.ppm", bytes);
  ImageData img = readImage(d / "c.ppm");
  ASSERT_EQ(img.gray.width(), 7);
  EXPECT_EQ(img.format, ImageFormat::kPnm);
  EXPECT_EQ(img.channels, 3);
  EXPECT_NEAR(img.gray(0, 0), 0.299f, 1e-6);
  EXPECT_NEAR(img.gray(1, 0), 0.587f, 1e-6);
  EXPECT_NEAR(img.gray(2, 0), 0.114f, 1e-6);
  EXPECT_EQ(img.gray(3, 0), 1.0f);
  EXPECT_EQ(img.gray(4, 0), 0.0f);
  EXPECT_NEAR(img.gray(5, 0), 128.0f / 255, 1e-6);
  EXPECT_NEAR(img.gray(6, 0), luma255(10, 200, 30), 1e-6);
  EXPECT_EQ(img.rgb(6, 0).r, 10);
  EXPECT_EQ(img.rgb(6, 0).g, 200);
  EXPECT_EQ(img.rgb(6, 0).b, 30);
}

TEST(ImageFile, PngGray8RoundTrip) {
  auto d = freshDir("g8");
  GrayImage g(37, 23);
  for (int y = 0; y < 23; ++y)
    for (int x = 0; x < 37; ++x) g(x, y) = static_cast<float>((x * 7 + y * 13) % 256) / 255;
  writePng(d / "g.png", g, 8);
  ImageData r = readImage(d / "g.png");
  EXPECT_EQ(r.bitDepth, 8);
  EXPECT_EQ(r.channels, 1);
  ASSERT_EQ(r.gray.width(), 37);
  ASSERT_EQ(r.gray.height(), 23);
  for (long i = 0; i < g.pixels(); ++i) {
    ASSERT_EQ(r.gray.data()[i], g.data()[i]);
    ASSERT_EQ(r.rgb.data()[i].g, std::lround(g.data()[i] * 255));
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);  // no temp
}

TEST(ImageFile, PngGray16RoundTripKeepsFullPrecision) {
  auto d = freshDir("g16");
  GrayImage g(19, 11);
  for (long i = 0; i < g.pixels(); ++i) g.data()[i] = static_cast<float>(i * 331 % 65536) / 65535;
  writePng(d / "g.png", g, 16);
  ImageData r = readImage(d / "g.png");
  EXPECT_EQ(r.bitDepth, 16);
  for (long i = 0; i < g.pixels(); ++i) ASSERT_EQ(r.gray.data()[i], g.data()[i]) << i;
  // Raw samples, and their 8-bit rounding.
  auto raw = readGray16(d / "g.png");
  for (long i = 0; i < g.pixels(); ++i) {
    long v = i * 331 % 65536;
    ASSERT_EQ(raw.data()[i], v);
    ASSERT_EQ(r.rgb.data()[i].r, (v * 255 + 32767) / 65535);
  }
  Image<std::uint16_t> depth(4, 3, 12345);
  writePng(d / "d.png", depth);
  EXPECT_EQ(readGray16(d / "d.png")(3, 2), 12345);
  expectError([&] { readGray16(d / "missing.png"); }, {"missing.png", "does not exist"});
}

TEST(ImageFile, PngRgbRoundTrip) {
  auto d = freshDir("rgb");
  RgbImage c(31, 17);
  for (long i = 0; i < c.pixels(); ++i) {
    c.data()[i] = {static_cast<uint8_t>(i * 3), static_cast<uint8_t>(i * 5 + 7),
                   static_cast<uint8_t>(255 - i)};
  }
  writePng(d / "c.png", c);
  ImageData r = readImage(d / "c.png");
  EXPECT_EQ(r.channels, 3);
  for (long i = 0; i < c.pixels(); ++i) {
    const Rgb8 a = c.data()[i], b = r.rgb.data()[i];
    ASSERT_TRUE(a.r == b.r && a.g == b.g && a.b == b.b) << i;
    ASSERT_NEAR(r.gray.data()[i], luma255(a.r, a.g, a.b), 1e-6);
  }
  expectError([&] { readGray16(d / "c.png"); }, {"c.png", "16-bit"});
}

TEST(ImageFile, PngColourTypesAndDepths) {
  auto d = freshDir("types");
  const int w = 5, h = 3;
  // 16-bit RGB: gray from the full 16-bit samples.
  std::vector<unsigned char> rgb16;
  std::vector<std::array<int, 3>> s16;
  for (int i = 0; i < w * h; ++i) {
    std::array<int, 3> s = {i * 4001 % 65536, i * 2999 % 65536, 65535 - i * 1000};
    s16.push_back(s);
    for (int v : s) rgb16.insert(rgb16.end(), {(unsigned char)(v >> 8), (unsigned char)(v & 255)});
  }
  writeRawPng(d / "rgb16.png", w, h, PNG_COLOR_TYPE_RGB, 16, rgb16);
  ImageData r = readImage(d / "rgb16.png");
  EXPECT_EQ(r.bitDepth, 16);
  for (int i = 0; i < w * h; ++i) {
    double want = (0.299 * s16[i][0] + 0.587 * s16[i][1] + 0.114 * s16[i][2]) / 65535;
    ASSERT_NEAR(r.gray.data()[i], want, 1e-6);
    ASSERT_EQ(r.rgb.data()[i].r, (s16[i][0] * 255 + 32767) / 65535);
  }
  // RGBA and gray+alpha: alpha is ignored.
  std::vector<unsigned char> rgba, ga;
  for (int i = 0; i < w * h; ++i) {
    rgba.insert(rgba.end(), {(unsigned char)(10 * i), 20, 30, (unsigned char)(i * 17)});
    ga.insert(ga.end(), {(unsigned char)(12 * i), (unsigned char)(255 - i)});
  }
  writeRawPng(d / "rgba.png", w, h, PNG_COLOR_TYPE_RGBA, 8, rgba);
  writeRawPng(d / "ga.png", w, h, PNG_COLOR_TYPE_GRAY_ALPHA, 8, ga);
  r = readImage(d / "rgba.png");
  EXPECT_EQ(r.channels, 3);
  EXPECT_EQ(r.rgb(2, 1).r, 10 * 7);
  EXPECT_NEAR(r.gray(2, 1), luma255(70, 20, 30), 1e-6);
  r = readImage(d / "ga.png");
  EXPECT_EQ(r.channels, 1);
  EXPECT_NEAR(r.gray(4, 2), 12 * 14 / 255.0, 1e-6);
  // Palette (4 bit) with 3 colours, and 1-bit gray, interlaced.
  std::vector<png_color> pal = {{255, 0, 0}, {0, 0, 255}, {9, 99, 199}};
  std::vector<unsigned char> idx;  // 4-bit indices, two per byte; rows of 3 bytes (5 px)
  for (int y = 0; y < h; ++y) {
    int v[6] = {0, 1, 2, 0, 1, 0};
    for (int k = 0; k < 3; ++k)
      idx.push_back(static_cast<unsigned char>((v[2 * k] << 4) | v[2 * k + 1]));
  }
  writeRawPng(d / "pal.png", w, h, PNG_COLOR_TYPE_PALETTE, 4, idx, pal, true);
  r = readImage(d / "pal.png");
  EXPECT_EQ(r.bitDepth, 8);
  EXPECT_EQ(r.channels, 3);
  EXPECT_EQ(r.rgb(2, 1).g, 99);
  EXPECT_NEAR(r.gray(0, 2), 0.299f, 1e-6);
  EXPECT_NEAR(r.gray(1, 0), 0.114f, 1e-6);
  std::vector<unsigned char> bits(h, 0xA8);  // 1 0 1 0 1 (then padding)
  writeRawPng(d / "bits.png", w, h, PNG_COLOR_TYPE_GRAY, 1, bits, {}, true);
  r = readImage(d / "bits.png");
  EXPECT_EQ(r.bitDepth, 1);
  EXPECT_EQ(r.gray(0, 0), 1.0f);
  EXPECT_EQ(r.gray(1, 0), 0.0f);
  EXPECT_EQ(r.gray(4, 2), 1.0f);
  EXPECT_EQ(r.rgb(4, 2).b, 255);
}

// A JPEG read for a smaller size decodes at 1/2, 1/4 or 1/8 (DCT scaling): the smallest that
// still covers the request, reporting the file's size, and its pixels are the d x d block means
// of the full decode (the reference: the full image averaged here, not by io's resize).
TEST(ImageFile, JpegDecodesAtTheSmallestScaleThatCoversTheRequest) {
  auto d = freshDir("jpeg_scaled");
  const int w = 1280, h = 960;
  writeJpeg(d / "big.jpg", w, h, 3, pattern(w, h, 3));
  const ImageData full = readImage(d / "big.jpg");
  EXPECT_EQ(full.rgb.width(), w);
  EXPECT_EQ(full.nativeWidth, w);
  struct Case {
    int minW, minH, expectW;
  };
  for (const Case c :
       {Case{160, 120, 160}, Case{161, 100, 320}, Case{320, 240, 320}, Case{321, 240, 640},
        Case{640, 480, 640}, Case{640, 481, 1280}, Case{1280, 960, 1280}}) {
    const ImageData r = readImage(d / "big.jpg", c.minW, c.minH);
    const int k = w / c.expectW;
    ASSERT_EQ(r.rgb.width(), c.expectW) << c.minW << "x" << c.minH;
    ASSERT_EQ(r.rgb.height(), h / k);
    ASSERT_EQ(r.gray.width(), c.expectW);
    EXPECT_EQ(r.nativeWidth, w);
    EXPECT_EQ(r.nativeHeight, h);
    double sum = 0, worst = 0;
    for (int y = 0; y < h / k; ++y)
      for (int x = 0; x < w / k; ++x) {
        double mean = 0;
        for (int j = 0; j < k; ++j)
          for (int i = 0; i < k; ++i) mean += full.gray(k * x + i, k * y + j);
        const double e = std::abs(r.gray(x, y) - mean / (k * k)) * 255;
        sum += e;
        worst = std::max(worst, e);
      }
    EXPECT_LT(sum / ((w / k) * (h / k)), 1.5) << "scale 1/" << k;
    EXPECT_LT(worst, 8.0) << "scale 1/" << k;
  }
  // PNG has no scaled decoding: the full size whatever the request.
  writePng(d / "big.png", full.rgb);
  const ImageData png = readImage(d / "big.png", 320, 240);
  EXPECT_EQ(png.rgb.width(), w);
  EXPECT_EQ(png.nativeWidth, w);
}

TEST(ImageFile, JpegGrayAndColourMatchTheEncodedPixels) {
  auto d = freshDir("jpeg");
  const int w = 48, h = 40;
  auto px = pattern(w, h, 3);
  writeJpeg(d / "c.jpg", w, h, 3, px);
  ImageData r = readImage(d / "c.jpg");
  EXPECT_EQ(r.format, ImageFormat::kJpeg);
  ASSERT_EQ(r.rgb.width(), w);
  ASSERT_EQ(r.rgb.height(), h);
  int maxErr = 0;
  for (int i = 0; i < w * h; ++i) {
    const Rgb8 c = r.rgb.data()[i];
    maxErr = std::max({maxErr, std::abs(c.r - px[3 * i]), std::abs(c.g - px[3 * i + 1]),
                       std::abs(c.b - px[3 * i + 2])});
    ASSERT_NEAR(r.gray.data()[i], luma255(c.r, c.g, c.b), 1e-6);
  }
  EXPECT_LE(maxErr, 5);  // quality 100, 4:4:4: YCbCr rounding and quantisation
  auto g = pattern(w, h, 1);
  writeJpeg(d / "g.jpg", w, h, 1, g);
  r = readImage(d / "g.jpg");
  EXPECT_EQ(r.channels, 1);
  maxErr = 0;
  for (int i = 0; i < w * h; ++i)
    maxErr =
        std::max(maxErr, static_cast<int>(std::abs(std::lround(r.gray.data()[i] * 255) - g[i])));
  EXPECT_LE(maxErr, 2);
#if defined(VIDMAP_HAVE_OPENCV)
  // The same decoder as OpenCV's imread (libjpeg-turbo, islow IDCT): equal pixels.
  cv::Mat ref = cv::imread((d / "c.jpg").string(), cv::IMREAD_COLOR);
  ASSERT_FALSE(ref.empty());
  r = readImage(d / "c.jpg");
  int maxCv = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      auto bgr = ref.at<cv::Vec3b>(y, x);
      maxCv = std::max({maxCv, std::abs(bgr[2] - r.rgb(x, y).r), std::abs(bgr[1] - r.rgb(x, y).g),
                        std::abs(bgr[0] - r.rgb(x, y).b)});
    }
  EXPECT_EQ(maxCv, 0);
#endif
}

TEST(ImageFile, PnmPlainAndBinary8And16Bit) {
  auto d = freshDir("pnm");
  writeText(d / "p2.pgm", "P2\n# a comment\n3 2\n# another\n10\n0 5 10\n 1 2 3\n");
  ImageData r = readImage(d / "p2.pgm");
  EXPECT_EQ(r.channels, 1);
  EXPECT_FLOAT_EQ(r.gray(1, 0), 0.5f);
  EXPECT_FLOAT_EQ(r.gray(2, 0), 1.0f);
  EXPECT_EQ(r.rgb(1, 0).r, 128);  // round(5 * 255 / 10) = 127.5 -> 128
  EXPECT_FLOAT_EQ(r.gray(2, 1), 0.3f);
  writeText(d / "p3.ppm", "P3 2 1 255 255 0 0  0 0 255");
  r = readImage(d / "p3.ppm");
  EXPECT_NEAR(r.gray(0, 0), 0.299f, 1e-6);
  EXPECT_NEAR(r.gray(1, 0), 0.114f, 1e-6);
  // P5 16-bit big-endian, P6 16-bit.
  std::string h5 = "P5\n2 2\n65535\n";
  std::vector<unsigned char> b5(h5.begin(), h5.end());
  for (int v : {0, 1000, 65535, 0x1234})
    b5.insert(b5.end(), {(unsigned char)(v >> 8), (unsigned char)(v & 255)});
  writeBytes(d / "p5.pgm", b5);
  r = readImage(d / "p5.pgm");
  EXPECT_EQ(r.bitDepth, 16);
  EXPECT_FLOAT_EQ(r.gray(1, 0), 1000.f / 65535);
  EXPECT_EQ(r.rgb(1, 0).r, 4);
  EXPECT_EQ(readGray16(d / "p5.pgm")(1, 1), 0x1234);
  std::string h6 = "P6 1 1 1023\n";
  std::vector<unsigned char> b6(h6.begin(), h6.end());
  for (int v : {1023, 512, 0})
    b6.insert(b6.end(), {(unsigned char)(v >> 8), (unsigned char)(v & 255)});
  writeBytes(d / "p6.ppm", b6);
  r = readImage(d / "p6.ppm");
  EXPECT_NEAR(r.gray(0, 0), 0.299 + 0.587 * 512 / 1023.0, 1e-6);
  EXPECT_EQ(r.rgb(0, 0).g, 128);
  // 8-bit P5 through readGray/readRgb.
  std::string h8 = "P5 2 1 255\n";
  std::vector<unsigned char> b8(h8.begin(), h8.end());
  b8.insert(b8.end(), {51, 204});
  writeBytes(d / "p5_8.pgm", b8);
  EXPECT_FLOAT_EQ(readGray(d / "p5_8.pgm")(1, 0), 0.8f);
  EXPECT_EQ(readRgb(d / "p5_8.pgm")(0, 0).b, 51);
}

TEST(ImageFile, BadFilesAreClearErrors) {
  auto d = freshDir("bad");
  expectError([&] { readImage(d / "nope.png"); }, {"nope.png", "does not exist"});
  expectError([&] { readImage(d); }, {"is a folder"});
  writeText(d / "empty.png", "");
  expectError([&] { readImage(d / "empty.png"); }, {"empty.png", "empty"});
  writeText(d / "text.png", "hello, not an image");
  expectError([&] { readImage(d / "text.png"); }, {"text.png", "unknown image format"});
  // Truncated and corrupted PNG.
  GrayImage g(64, 64);
  for (long i = 0; i < g.pixels(); ++i) g.data()[i] = static_cast<float>(i % 251) / 255;
  writePng(d / "ok.png", g);
  auto bytes = testing::readBytes(d / "ok.png");
  for (size_t keep : {size_t(8), size_t(20), size_t(40), bytes.size() / 2, bytes.size() - 13}) {
    testing::truncateCopy(d / "ok.png", d / "cut.png", keep);
    expectError([&] { readImage(d / "cut.png"); }, {"cut.png", "PNG"});
  }
  auto bad = bytes;
  bad[bad.size() / 2] ^= 0x5A;  // inside IDAT: a CRC (or zlib) error
  writeBytes(d / "crc.png", bad);
  expectError([&] { readImage(d / "crc.png"); }, {"crc.png", "corrupt PNG"});
  // Zero-size images.
  writeText(d / "zero.pgm", "P5 0 0 255\n");
  expectError([&] { readImage(d / "zero.pgm"); }, {"zero.pgm", "zero-size"});
  writeText(d / "zero2.ppm", "P3 4 0 255\n");
  expectError([&] { readImage(d / "zero2.ppm"); }, {"zero2.ppm", "zero-size"});
  auto zeroPng = bytes;
  zeroPng[16] = zeroPng[17] = zeroPng[18] = zeroPng[19] = 0;  // IHDR width = 0, valid CRC
  uLong crc = crc32(0, zeroPng.data() + 12, 17);
  for (int i = 0; i < 4; ++i) zeroPng[29 + i] = static_cast<unsigned char>(crc >> (24 - 8 * i));
  writeBytes(d / "zero.png", zeroPng);
  expectError([&] { readImage(d / "zero.png"); }, {"zero.png", "width is zero"});
  // A small PNG claiming 16000 x 16000 (issue 20: 0.7 GB allocated before failing) is refused
  // from its header against its size, before any allocation; so is a claim above the budget.
  auto claim = [&](std::uint32_t w, std::uint32_t h) {
    auto b = bytes;
    for (int i = 0; i < 4; ++i) {
      b[16 + i] = static_cast<unsigned char>(w >> (24 - 8 * i));
      b[20 + i] = static_cast<unsigned char>(h >> (24 - 8 * i));
    }
    uLong c = crc32(0, b.data() + 12, 17);
    for (int i = 0; i < 4; ++i) b[29 + i] = static_cast<unsigned char>(c >> (24 - 8 * i));
    return b;
  };
  writeBytes(d / "claims.png", claim(16000, 16000));
  expectError([&] { readImage(d / "claims.png"); }, {"claims.png", "16000x16000", "cannot hold"});
  writeBytes(d / "budget.png", claim(60000, 60000));
  expectError([&] { readImage(d / "budget.png"); }, {"budget.png", "budget"});
  // PNM problems.
  writeText(d / "short.pgm", "P5 4 4 255\nabc");
  expectError([&] { readImage(d / "short.pgm"); }, {"short.pgm", "truncated"});
  writeText(d / "short2.pgm", "P2 2 2 255 1 2 3");
  expectError([&] { readImage(d / "short2.pgm"); }, {"short2.pgm", "truncated"});
  writeText(d / "over.pgm", "P2 2 1 9 5 12");
  expectError([&] { readImage(d / "over.pgm"); }, {"over.pgm", "above maxval"});
  writeText(d / "bit.pbm", "P1 2 1 0 1");
  expectError([&] { readImage(d / "bit.pbm"); }, {"bit.pbm", "unsupported PNM type P1"});
  writeText(d / "maxv.pgm", "P5 1 1 70000\n\x01\x02\x03");
  expectError([&] { readImage(d / "maxv.pgm"); }, {"maxv.pgm", "maxval"});
  writeText(d / "huge.pgm", "P5 100000 100000 255\n");
  expectError([&] { readImage(d / "huge.pgm"); }, {"huge.pgm", "budget"});
  // Truncated and garbage JPEG.
  writeJpeg(d / "ok.jpg", 64, 48, 3, pattern(64, 48, 3));
  auto jb = testing::readBytes(d / "ok.jpg");
  for (size_t keep : {size_t(3), size_t(100), jb.size() / 2, jb.size() - 2}) {
    testing::truncateCopy(d / "ok.jpg", d / "cut.jpg", keep);
    expectError([&] { readImage(d / "cut.jpg"); }, {"cut.jpg", "corrupt JPEG"});
  }
  std::vector<unsigned char> junk = {0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  writeBytes(d / "junk.jpg", junk);
  expectError([&] { readImage(d / "junk.jpg"); }, {"junk.jpg", "corrupt JPEG"});
  auto big = jb;  // the frame header (SOF0) claims 16000 x 16000
  for (size_t i = 2; i + 8 < big.size(); ++i)
    if (big[i] == 0xFF && big[i + 1] == 0xC0) {
      big[i + 5] = big[i + 7] = 0x3E;
      big[i + 6] = big[i + 8] = 0x80;
      break;
    }
  writeBytes(d / "big.jpg", big);
  expectError([&] { readImage(d / "big.jpg"); }, {"big.jpg", "16000x16000", "cannot hold"});
}

TEST(ImageFile, WritesAreAtomicAndChecked) {
  auto d = freshDir("write");
  GrayImage g(4, 4, 0.5f);
  expectError([&] { writePng(d / "sub" / "x.png", g); }, {"does not exist"});
  expectError([&] { writePng(d / "x.png", g, 12); }, {"bit depth"});
  expectError([&] { writePng(d / "x.png", GrayImage()); }, {"zero-size"});
  EXPECT_TRUE(fs::is_empty(d));
  GrayImage odd(2, 1);
  odd(0, 0) = -3.f;
  odd(1, 0) = std::nanf("");
  writePng(d / "clamp.png", odd);
  EXPECT_EQ(readGray(d / "clamp.png")(0, 0), 0.f);
  EXPECT_EQ(readGray(d / "clamp.png")(1, 0), 0.f);
}

TEST(ImageFile, MiddleburyFramesReadLikeOpenCv) {
  auto dir = dataPath("middlebury-flow/frames");
  if (!dir) GTEST_SKIP() << "shared data absent";
  struct Case {
    const char* name;
    int w, h;
  };
  for (Case c : {Case{"Dimetrodon", 584, 388}, Case{"Grove2", 640, 480}, Case{"Venus", 420, 380}}) {
    ImageData r = readImage(*dir / c.name / "frame10.png");
    EXPECT_EQ(r.rgb.width(), c.w) << c.name;
    EXPECT_EQ(r.rgb.height(), c.h) << c.name;
#if defined(VIDMAP_HAVE_OPENCV)
    cv::Mat ref = cv::imread((*dir / c.name / "frame10.png").string(), cv::IMREAD_COLOR);
    ASSERT_EQ(ref.cols, c.w);
    long diff = 0;
    for (int y = 0; y < c.h; ++y)
      for (int x = 0; x < c.w; ++x) {
        auto bgr = ref.at<cv::Vec3b>(y, x);
        diff += bgr[2] != r.rgb(x, y).r || bgr[1] != r.rgb(x, y).g || bgr[0] != r.rgb(x, y).b;
      }
    EXPECT_EQ(diff, 0) << c.name;
#endif
  }
}

}  // namespace
}  // namespace vidmap::io
