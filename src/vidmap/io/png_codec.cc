// PNG through libpng. libpng reports errors by longjmp; each setjmp lives in a small function
// whose own locals are never changed after it, and every C++ object that must survive the jump
// lives in the caller (see the C++ rule on setjmp/longjmp and non-trivial destructors).
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "vidmap/core/error.h"
#include "vidmap/io/image_codecs.h"

namespace vidmap::io::detail {
namespace {

struct PngIo {
  const std::uint8_t* data = nullptr;
  size_t size = 0, pos = 0;
  std::vector<std::uint8_t>* out = nullptr;
  char message[512] = {0};
  char warning[256] = {0};
};

void onError(png_structp png, png_const_charp msg) {
  auto* io = static_cast<PngIo*>(png_get_error_ptr(png));
  // libpng often explains an error in the warning just before it ("Image width is zero in
  // IHDR" before "Invalid IHDR data"): keep both.
  if (io->warning[0]) {
    std::snprintf(io->message, sizeof(io->message), "%s: %s", msg ? msg : "error", io->warning);
  } else {
    std::snprintf(io->message, sizeof(io->message), "%s", msg ? msg : "unknown error");
  }
  png_longjmp(png, 1);
}

// Warnings alone (damaged ancillary chunks) do not fail a read; the last one is kept for an
// error that may follow.
void onWarning(png_structp png, png_const_charp msg) {
  auto* io = static_cast<PngIo*>(png_get_error_ptr(png));
  std::snprintf(io->warning, sizeof(io->warning), "%s", msg ? msg : "");
}

void onRead(png_structp png, png_bytep out, size_t n) {
  auto* io = static_cast<PngIo*>(png_get_io_ptr(png));
  if (io->size - io->pos < n) png_error(png, "file is truncated");
  std::memcpy(out, io->data + io->pos, n);
  io->pos += n;
}

void onWrite(png_structp png, png_bytep data, size_t n) {
  auto* io = static_cast<PngIo*>(png_get_io_ptr(png));
  bool ok = true;
  try {
    io->out->insert(io->out->end(), data, data + n);
  } catch (...) {  // no exception may cross libpng's C frames
    ok = false;
  }
  if (!ok) png_error(png, "out of memory");
}

void onFlush(png_structp) {}

struct ReadState {
  PngIo io;
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~ReadState() {
    if (png) png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
  }
};

struct Header {
  png_uint_32 width = 0, height = 0;
  int fileBitDepth = 0, fileChannels = 0, bitDepth = 0, channels = 0;
  size_t rowBytes = 0;
};

// Reads the header and sets the transforms: palette -> RGB, low-bit gray -> 8 bit, no alpha.
bool readHeader(ReadState* s, Header* h) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_set_read_fn(s->png, &s->io, onRead);
  png_set_user_limits(s->png, kMaxSide, kMaxSide);
  png_read_info(s->png, s->info);
  int colorType = png_get_color_type(s->png, s->info);
  h->fileBitDepth = png_get_bit_depth(s->png, s->info);
  h->fileChannels = (colorType & PNG_COLOR_MASK_COLOR) ? 3 : 1;
  if (colorType == PNG_COLOR_TYPE_PALETTE) {
    png_set_palette_to_rgb(s->png);
    h->fileBitDepth = 8;  // palette entries are 8-bit colours
  }
  if (colorType == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(s->png, s->info) < 8) {
    png_set_expand_gray_1_2_4_to_8(s->png);
  }
  if (colorType & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(s->png);
  png_set_interlace_handling(s->png);
  png_read_update_info(s->png, s->info);
  h->width = png_get_image_width(s->png, s->info);
  h->height = png_get_image_height(s->png, s->info);
  h->bitDepth = png_get_bit_depth(s->png, s->info);
  h->channels = png_get_channels(s->png, s->info);
  h->rowBytes = png_get_rowbytes(s->png, s->info);
  return true;
}

bool readRows(ReadState* s, png_bytep* rows) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_read_image(s->png, rows);
  png_read_end(s->png, nullptr);
  return true;
}

struct WriteState {
  PngIo io;
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~WriteState() {
    if (png) png_destroy_write_struct(&png, info ? &info : nullptr);
  }
};

bool writeAll(WriteState* s, png_uint_32 w, png_uint_32 h, int colorType, int bitDepth,
              png_bytep* rows) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_set_write_fn(s->png, &s->io, onWrite, onFlush);
  png_set_IHDR(s->png, s->info, w, h, bitDepth, colorType, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(s->png, 3);  // fast; PNG sizes barely shrink above this
  png_write_info(s->png, s->info);
  png_write_image(s->png, rows);
  png_write_end(s->png, nullptr);
  return true;
}

}  // namespace

RawImage decodePng(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  ReadState s;
  s.io.data = bytes.data();
  s.io.size = bytes.size();
  s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s.io, onError, onWarning);
  if (s.png) s.info = png_create_info_struct(s.png);
  if (!s.png || !s.info) throw Error(name + ": out of memory creating the PNG reader");
  Header h;
  if (!readHeader(&s, &h)) throw Error(name + ": corrupt PNG (" + s.io.message + ")");
  checkClaimedSize(name, h.width, h.height, bytes.size(), kPngMaxPixelsPerByte);
  if ((h.channels != 1 && h.channels != 3) || (h.bitDepth != 8 && h.bitDepth != 16)) {
    throw Error(name + ": unsupported PNG layout");
  }
  RawImage raw;
  raw.width = static_cast<int>(h.width);
  raw.height = static_cast<int>(h.height);
  raw.channels = h.channels;
  raw.fileBitDepth = h.fileBitDepth;
  raw.maxval = h.bitDepth == 16 ? 65535 : 255;
  // Rows go straight to their final place for 8-bit data (rows of width * channels bytes).
  std::uint8_t* dst = nullptr;
  std::vector<std::uint8_t> buffer;
  if (h.bitDepth == 8 && h.channels == 3) {
    raw.rgb8.resize(raw.width, raw.height);
    dst = reinterpret_cast<std::uint8_t*>(raw.rgb8.data());
  } else if (h.bitDepth == 8) {
    raw.bytes.resize(h.rowBytes * h.height);
    dst = raw.bytes.data();
  } else {
    buffer.resize(h.rowBytes * h.height);
    dst = buffer.data();
  }
  std::vector<png_bytep> rows(h.height);
  for (png_uint_32 y = 0; y < h.height; ++y) rows[y] = dst + y * h.rowBytes;
  if (!readRows(&s, rows.data())) throw Error(name + ": corrupt PNG (" + s.io.message + ")");
  if (h.bitDepth == 16) {
    size_t n = static_cast<size_t>(raw.width) * raw.height * raw.channels;
    raw.samples.resize(n);
    for (size_t i = 0; i < n; ++i) raw.samples[i] = (buffer[2 * i] << 8) | buffer[2 * i + 1];
  }
  return raw;
}

std::vector<std::uint8_t> encodePng(int width, int height, int channels, int bitDepth,
                                    const std::vector<std::uint8_t>& rows,
                                    const std::string& name) {
  if (width <= 0 || height <= 0) throw Error(name + ": cannot write a zero-size image");
  std::vector<std::uint8_t> out;
  WriteState s;
  s.io.out = &out;
  s.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s.io, onError, onWarning);
  if (s.png) s.info = png_create_info_struct(s.png);
  if (!s.png || !s.info) throw Error(name + ": out of memory creating the PNG writer");
  size_t rowBytes = static_cast<size_t>(width) * channels * (bitDepth / 8);
  std::vector<png_bytep> rowPtrs(height);
  for (int y = 0; y < height; ++y) {
    rowPtrs[y] = const_cast<png_bytep>(rows.data()) + y * rowBytes;  // libpng only reads
  }
  int colorType = channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB;
  if (!writeAll(&s, width, height, colorType, bitDepth, rowPtrs.data())) {
    throw Error(name + ": cannot encode PNG (" + s.io.message + ")");
  }
  return out;
}

}  // namespace vidmap::io::detail
