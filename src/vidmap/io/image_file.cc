#include "vidmap/io/image_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/color.h"
#include "vidmap/io/image_codecs.h"

namespace vidmap::io {

namespace fs = std::filesystem;

namespace detail {

std::vector<std::uint8_t> readFileBytes(const std::string& path, const char* what) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw Error(std::string(what) + " does not exist: " + path);
  if (fs::is_directory(status)) throw Error(std::string(what) + " is a folder: " + path);
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw Error("cannot open " + std::string(what) + ": " + path);
  auto size = static_cast<std::streamoff>(f.tellg());
  if (size <= 0) throw Error(std::string(what) + " is an empty file (0 bytes): " + path);
  std::vector<std::uint8_t> bytes(static_cast<size_t>(size));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(bytes.data()), size);
  if (f.gcount() != size) throw Error("cannot read " + std::string(what) + ": " + path);
  return bytes;
}

void checkClaimedSize(const std::string& name, long width, long height, std::size_t fileBytes,
                      double maxPixelsPerByte) {
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (width <= 0 || height <= 0) throw Error(name + ": zero-size image (" + size + ")");
  if (width > kMaxSide || height > kMaxSide || width * height > kMaxPixels)
    throw Error(name + ": image of " + size + " pixels is above the budget of " +
                std::to_string(kMaxPixels) + " pixels and " + std::to_string(kMaxSide) + " a side");
  if (maxPixelsPerByte > 0 &&
      static_cast<double>(width) * height > maxPixelsPerByte * static_cast<double>(fileBytes))
    throw Error(name + ": the header claims " + size + " pixels, which a file of " +
                std::to_string(fileBytes) + " bytes cannot hold (damaged or truncated)");
}

}  // namespace detail

namespace {

detail::RawImage decodeFile(const fs::path& path, ImageFormat* format, int minWidth = 0,
                            int minHeight = 0) {
  std::string name = path.string();
  auto bytes = detail::readFileBytes(name, "image file");
  const auto* b = bytes.data();
  if (bytes.size() >= 8 && b[0] == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G') {
    *format = ImageFormat::kPng;
    return detail::decodePng(bytes, name);
  }
  if (bytes.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) {
    *format = ImageFormat::kJpeg;
    return detail::decodeJpeg(bytes, name, minWidth, minHeight);
  }
  if (bytes.size() >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7') {
    *format = ImageFormat::kPnm;
    return detail::decodePnm(bytes, name);
  }
  throw Error(name + ": unknown image format (not PNG, JPEG, PGM or PPM)");
}

template <class T>
void toGray(const detail::RawImage& raw, const T* s, GrayImage& gray) {
  std::vector<float> lut(raw.maxval + 1);  // sample -> [0, 1], one correctly rounded division
  for (int v = 0; v <= raw.maxval; ++v) lut[v] = static_cast<float>(v) / raw.maxval;
  gray.resize(raw.width, raw.height);
  const long w = raw.width;
  const bool colour = raw.channels == 3;
  const float* unit = lut.data();
  float* g = gray.data();
  detail::forRows(raw.height, w * raw.height, [=](std::int64_t y) {
    float* out = g + y * w;
    if (colour) {
      const T* in = s + 3 * y * w;
      for (long x = 0; x < w; ++x) {
        out[x] = lumaRec601(unit[in[3 * x]], unit[in[3 * x + 1]], unit[in[3 * x + 2]]);
      }
    } else {
      const T* in = s + y * w;
      for (long x = 0; x < w; ++x) out[x] = unit[in[x]];
    }
  });
}

template <class T>
void toRgb(const detail::RawImage& raw, const T* s, RgbImage& rgb) {
  rgb.resize(raw.width, raw.height);
  std::vector<std::uint8_t> to8(raw.maxval + 1);
  for (long v = 0; v <= raw.maxval; ++v) to8[v] = (v * 255 + raw.maxval / 2) / raw.maxval;
  Rgb8* c = rgb.data();
  detail::forRows(raw.height, static_cast<long>(raw.width) * raw.height, [&](std::int64_t y) {
    long i0 = y * raw.width;
    for (long i = i0; i < i0 + raw.width; ++i) {
      if (raw.channels == 1) {
        std::uint8_t v = to8[s[i]];
        c[i] = {v, v, v};
      } else {
        c[i] = {to8[s[3 * i]], to8[s[3 * i + 1]], to8[s[3 * i + 2]]};
      }
    }
  });
}

void toGray(const detail::RawImage& raw, GrayImage& gray) {
  if (!raw.rgb8.empty()) {
    toGray(raw, reinterpret_cast<const std::uint8_t*>(raw.rgb8.data()), gray);
  } else if (!raw.bytes.empty()) {
    toGray(raw, raw.bytes.data(), gray);
  } else {
    toGray(raw, raw.samples.data(), gray);
  }
}

void toRgb(detail::RawImage&& raw, RgbImage& rgb) {
  if (!raw.rgb8.empty()) {
    rgb = std::move(raw.rgb8);
  } else if (!raw.bytes.empty()) {
    toRgb(raw, raw.bytes.data(), rgb);
  } else {
    toRgb(raw, raw.samples.data(), rgb);
  }
}

void writeBytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  writeAtomically(path, [&](const fs::path& tmp) {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw Error("cannot write " + tmp.string());
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) throw Error("write failed: " + tmp.string());
  });
}

void requireNonEmpty(const fs::path& path, long w, long h) {
  if (w <= 0 || h <= 0) throw Error(path.string() + ": cannot write a zero-size image");
}

}  // namespace

ImageHeader readImageHeader(const fs::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw Error("image file does not exist: " + name);
  if (fs::is_directory(status)) throw Error("image file is a folder: " + name);
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw Error("cannot read image file " + name + ": " + ec.message());
  if (size == 0) throw Error("image file is an empty file (0 bytes): " + name);
  // The first 64 KiB hold the header of nearly every file (a JPEG's EXIF may push it further).
  std::vector<std::uint8_t> head(static_cast<size_t>(std::min<std::uintmax_t>(size, 1 << 16)));
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  if (!f || f.gcount() != static_cast<std::streamsize>(head.size()))
    throw Error("cannot read image file " + name);
  const auto* b = head.data();
  ImageHeader h;
  auto be32 = [&](size_t i) {
    return (static_cast<long>(b[i]) << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3];
  };
  if (head.size() >= 8 && b[0] == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G') {
    if (head.size() < 24 || std::memcmp(b + 12, "IHDR", 4) != 0)
      throw Error(name + ": corrupt PNG (no image header)");
    h.format = ImageFormat::kPng;
    const long w = be32(16), hh = be32(20);
    detail::checkClaimedSize(name, w, hh, size, detail::kPngMaxPixelsPerByte);
    h.width = static_cast<int>(w);
    h.height = static_cast<int>(hh);
    return h;
  }
  if (head.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) {
    h.format = ImageFormat::kJpeg;
    long w = 0, hh = 0;
    bool arith = false;
    std::string why;
    bool ok = detail::jpegHeader(b, head.size(), &w, &hh, &arith, &why);
    if (!ok && head.size() < size) {
      const auto all = detail::readFileBytes(name, "image file");
      ok = detail::jpegHeader(all.data(), all.size(), &w, &hh, &arith, &why);
    }
    if (!ok) throw Error(name + ": corrupt JPEG (" + why + ")");
    detail::checkClaimedSize(name, w, hh, size, arith ? 0.0 : detail::kJpegMaxPixelsPerByte);
    h.width = static_cast<int>(w);
    h.height = static_cast<int>(hh);
    return h;
  }
  if (head.size() >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7') {
    const ImageData d = readImage(path);
    h.format = ImageFormat::kPnm;
    h.width = d.nativeWidth;
    h.height = d.nativeHeight;
    return h;
  }
  throw Error(name + ": unknown image format (not PNG, JPEG, PGM or PPM)");
}

ImageData readImage(const fs::path& path, int minWidth, int minHeight) {
  ImageData out;
  auto raw = decodeFile(path, &out.format, minWidth, minHeight);
  out.nativeWidth = raw.nativeWidth > 0 ? raw.nativeWidth : raw.width;
  out.nativeHeight = raw.nativeHeight > 0 ? raw.nativeHeight : raw.height;
  toGray(raw, out.gray);
  out.bitDepth = raw.fileBitDepth;
  // 8-bit samples: toGray's luma of v / 255 is lumaRec601 of the RGB8 pixel (of a gray file's
  // (v, v, v) too: the luma of a gray pixel is exactly its value).
  out.grayIsLumaOfRgb = raw.maxval == 255;
  out.channels = raw.channels;
  toRgb(std::move(raw), out.rgb);
  return out;
}

GrayImage readGray(const fs::path& path) {
  ImageFormat format;
  GrayImage gray;
  toGray(decodeFile(path, &format), gray);
  return gray;
}

RgbImage readRgb(const fs::path& path) {
  ImageFormat format;
  RgbImage rgb;
  toRgb(decodeFile(path, &format), rgb);
  return rgb;
}

Image<std::uint16_t> readGray16(const fs::path& path) {
  ImageFormat format;
  auto raw = decodeFile(path, &format);
  if (raw.channels != 1 || raw.maxval != 65535) {
    throw Error(path.string() + ": expected a one-channel 16-bit image (got " +
                std::to_string(raw.channels) + " channel(s), maxval " + std::to_string(raw.maxval) +
                ")");
  }
  Image<std::uint16_t> out(raw.width, raw.height);
  std::copy(raw.samples.begin(), raw.samples.end(), out.data());
  return out;
}

void writePng(const fs::path& path, const GrayImage& gray, int bitDepth) {
  if (bitDepth != 8 && bitDepth != 16) {
    throw Error(path.string() + ": PNG bit depth must be 8 or 16, not " + std::to_string(bitDepth));
  }
  requireNonEmpty(path, gray.width(), gray.height());
  const float scale = bitDepth == 8 ? 255.f : 65535.f;
  size_t n = static_cast<size_t>(gray.pixels());
  std::vector<std::uint8_t> rows(n * (bitDepth / 8));
  for (size_t i = 0; i < n; ++i) {
    float g = gray.data()[i];
    g = std::isnan(g) ? 0.f : std::clamp(g, 0.f, 1.f);
    auto v = static_cast<unsigned>(std::lround(g * scale));
    if (bitDepth == 8) {
      rows[i] = static_cast<std::uint8_t>(v);
    } else {
      rows[2 * i] = static_cast<std::uint8_t>(v >> 8);
      rows[2 * i + 1] = static_cast<std::uint8_t>(v & 255);
    }
  }
  writeBytes(path,
             detail::encodePng(gray.width(), gray.height(), 1, bitDepth, rows, path.string()));
}

void writePng(const fs::path& path, const RgbImage& rgb) {
  requireNonEmpty(path, rgb.width(), rgb.height());
  size_t n = static_cast<size_t>(rgb.pixels());
  std::vector<std::uint8_t> rows(3 * n);
  for (size_t i = 0; i < n; ++i) {
    rows[3 * i] = rgb.data()[i].r;
    rows[3 * i + 1] = rgb.data()[i].g;
    rows[3 * i + 2] = rgb.data()[i].b;
  }
  writeBytes(path, detail::encodePng(rgb.width(), rgb.height(), 3, 8, rows, path.string()));
}

void writePng(const fs::path& path, const Image<std::uint16_t>& gray16) {
  requireNonEmpty(path, gray16.width(), gray16.height());
  size_t n = static_cast<size_t>(gray16.pixels());
  std::vector<std::uint8_t> rows(2 * n);
  for (size_t i = 0; i < n; ++i) {
    rows[2 * i] = static_cast<std::uint8_t>(gray16.data()[i] >> 8);
    rows[2 * i + 1] = static_cast<std::uint8_t>(gray16.data()[i] & 255);
  }
  writeBytes(path, detail::encodePng(gray16.width(), gray16.height(), 1, 16, rows, path.string()));
}

}  // namespace vidmap::io
