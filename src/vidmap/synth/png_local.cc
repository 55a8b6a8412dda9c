#include "vidmap/synth/png_local.h"

#include <png.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "vidmap/core/error.h"

namespace vidmap::synth {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// rows[y] points at the bytes of row y (already in PNG byte order).
void writePng(const std::filesystem::path& path, int width, int height, int bitDepth, int colorType,
              const std::vector<const std::uint8_t*>& rows) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  if (!file) throw Error("cannot open " + path.string() + " for writing");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) throw Error("libpng: out of memory writing " + path.string());
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    throw Error("libpng: out of memory writing " + path.string());
  }
  // libpng reports errors by longjmp; no C++ objects with destructors live in this frame
  // between setjmp and the calls below except `file`, closed by its owner after the jump.
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error("libpng failed writing " + path.string());
  }
  png_init_io(png, file.get());
  png_set_compression_level(png, 3);
  png_set_IHDR(png, info, width, height, bitDepth, colorType, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) png_write_row(png, const_cast<png_bytep>(rows[y]));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::FILE* f = file.release();
  if (std::fflush(f) != 0 || std::ferror(f)) {
    std::fclose(f);
    throw Error("write failed: " + path.string());
  }
  if (std::fclose(f) != 0) throw Error("write failed: " + path.string());
}

}  // namespace

void writePngRgb8(const std::filesystem::path& path, const RgbImage& image) {
  require(!image.empty(), "cannot write an empty image to " + path.string());
  static_assert(sizeof(Rgb8) == 3, "Rgb8 must be packed");
  std::vector<const std::uint8_t*> rows(image.height());
  for (int y = 0; y < image.height(); ++y)
    rows[y] = reinterpret_cast<const std::uint8_t*>(&image(0, y));
  writePng(path, image.width(), image.height(), 8, PNG_COLOR_TYPE_RGB, rows);
}

void writePngGray16(const std::filesystem::path& path, const Image<std::uint16_t>& image) {
  require(!image.empty(), "cannot write an empty image to " + path.string());
  // PNG stores 16-bit samples big-endian.
  std::vector<std::uint8_t> bytes(static_cast<size_t>(image.pixels()) * 2);
  for (long i = 0; i < image.pixels(); ++i) {
    bytes[2 * i] = static_cast<std::uint8_t>(image.data()[i] >> 8);
    bytes[2 * i + 1] = static_cast<std::uint8_t>(image.data()[i] & 0xff);
  }
  std::vector<const std::uint8_t*> rows(image.height());
  for (int y = 0; y < image.height(); ++y) rows[y] = bytes.data() + 2L * y * image.width();
  writePng(path, image.width(), image.height(), 16, PNG_COLOR_TYPE_GRAY, rows);
}

}  // namespace vidmap::synth
