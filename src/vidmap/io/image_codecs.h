// Internal to io: the decoders and encoders behind image_file.h. Each decoder turns the bytes
// of a whole file into raw samples; image_file.cc converts those to gray and RGB8.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/core/parallel.h"

namespace vidmap::io::detail {

// Row loops of the pixel conversions: threads only for large images, where they pay for
// their start-up (a busy 2-core machine pays milliseconds per parallel region).
template <class F>
void forRows(std::int64_t rows, std::int64_t pixels, F&& f) {
  if (pixels >= (1 << 18)) {
    parallelFor(rows, f);
  } else {
    for (std::int64_t y = 0; y < rows; ++y) f(y);
  }
}

// Decoders and the video path write RGB rows straight into RgbImage memory.
static_assert(sizeof(Rgb8) == 3 && alignof(Rgb8) == 1, "Rgb8 must be three packed bytes");

struct RawImage {
  int width = 0, height = 0;
  int nativeWidth = 0, nativeHeight = 0;  // the file's size (JPEG may decode smaller)
  int channels = 1;                       // 1 (gray) or 3 (RGB), interleaved, alpha removed
  int maxval = 255;                       // samples lie in [0, maxval]
  int fileBitDepth = 8;
  // The samples, in one of three places: 8-bit colour is decoded straight into `rgb8` (the
  // final RGB image, no copy); other 8-bit data into `bytes`; deeper samples into `samples`.
  RgbImage rgb8;
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint16_t> samples;
};

// Largest image accepted: bounds memory before any allocation for a corrupt header.
inline constexpr long kMaxSide = 1 << 16;
inline constexpr long kMaxPixels = 1L << 28;

// Most pixels a byte of each format can encode, from how the format compresses: PNG's
// deflate expands a byte to at most 1032 bytes (zlib's limit) of rows holding at least 1 bit
// a pixel plus a filter byte; every 8x8 block of a Huffman-coded JPEG costs at least one
// bit (its DC code), 512 pixels a byte, taken twice for margin; a PNM sample takes at least
// one byte (binary) or two characters (plain). Arithmetic-coded JPEG has no such bound.
inline constexpr double kPngMaxPixelsPerByte = 1032.0 * 8;
inline constexpr double kJpegMaxPixelsPerByte = 1024;

// Before any allocation: a size outside the budget (kMaxSide a side, kMaxPixels in all) or
// one the file's bytes cannot hold (a damaged or hostile header) is a vidmap::Error naming
// the file, its claimed size and its real size. maxPixelsPerByte <= 0: no size-ratio bound.
void checkClaimedSize(const std::string& name, long width, long height, std::size_t fileBytes,
                      double maxPixelsPerByte);

// `name` is the file name used in error messages.
RawImage decodePng(const std::vector<std::uint8_t>& bytes, const std::string& name);
// JPEG decodes at 1/2, 1/4 or 1/8 of its size (libjpeg's DCT scaling: the cheap way to a
// small frame from a large photo) when that still covers minWidth x minHeight; 0: full size.
RawImage decodeJpeg(const std::vector<std::uint8_t>& bytes, const std::string& name,
                    int minWidth = 0, int minHeight = 0);
// The size in a JPEG's frame header (a cheap read: no decoding); false with the reason when the
// bytes end before it or are not a JPEG.
bool jpegHeader(const std::uint8_t* data, size_t size, long* width, long* height, bool* arith,
                std::string* error);
RawImage decodePnm(const std::vector<std::uint8_t>& bytes, const std::string& name);

// Encodes samples laid out as PNG rows (channels 1 or 3, interleaved; 16-bit samples
// big-endian) to the bytes of a PNG file.
std::vector<std::uint8_t> encodePng(int width, int height, int channels, int bitDepth,
                                    const std::vector<std::uint8_t>& rows, const std::string& name);

// Whole file into memory; errors for a missing, unreadable or empty file.
std::vector<std::uint8_t> readFileBytes(const std::string& path, const char* what);

}  // namespace vidmap::io::detail
