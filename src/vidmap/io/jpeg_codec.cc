// JPEG decoding through libjpeg(-turbo). libjpeg reports errors through error_exit, which
// must not return: it longjmps back to the small function that set the jump, and the caller
// turns the failure into a vidmap::Error after the C library has been left.
#include <cstddef>
#include <cstdio>
// clang-format off: jpeglib.h needs <cstdio> first
#include <jerror.h>
#include <jpeglib.h>
// clang-format on

#include <csetjmp>
#include <cstring>

#include "vidmap/core/error.h"
#include "vidmap/io/image_codecs.h"

namespace vidmap::io::detail {
namespace {

struct JpegErrors {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {0};
  char corruption[JMSG_LENGTH_MAX] = {0};  // first warning that means damaged data
};

void onErrorExit(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegErrors*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

// Warnings (level -1) are data problems libjpeg papers over (it pads a truncated file with
// gray); the ones below mean the pixels are not the file's, so they become errors.
void onEmitMessage(j_common_ptr c, int level) {
  if (level >= 0) return;  // trace messages
  auto* e = reinterpret_cast<JpegErrors*>(c->err);
  int code = c->err->msg_code;
  bool damaged = code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE ||
                 code == JWRN_MUST_RESYNC;
  if (damaged && e->corruption[0] == 0) (*c->err->format_message)(c, e->corruption);
  c->err->num_warnings++;
}

void onOutputMessage(j_common_ptr) {}  // nothing goes to stderr

struct JpegState {
  jpeg_decompress_struct cinfo;
  JpegErrors err;
  JpegState() {
    std::memset(&cinfo, 0, sizeof(cinfo));
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = onErrorExit;
    err.pub.emit_message = onEmitMessage;
    err.pub.output_message = onOutputMessage;
  }
  ~JpegState() { jpeg_destroy_decompress(&cinfo); }  // safe on a zeroed or failed struct
};

bool readHeader(JpegState* s, const std::uint8_t* data, size_t size, int minWidth, int minHeight) {
  if (setjmp(s->err.jump)) return false;
  jpeg_create_decompress(&s->cinfo);
  jpeg_mem_src(&s->cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&s->cinfo, TRUE);
  s->cinfo.out_color_space = s->cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  // The smallest power-of-two reduction that still covers the requested size (libjpeg rounds
  // the scaled size up).
  if (minWidth > 0 && minHeight > 0) {
    const long w = s->cinfo.image_width, h = s->cinfo.image_height;
    for (int d = 8; d >= 2; d /= 2)
      if ((w + d - 1) / d >= minWidth && (h + d - 1) / d >= minHeight) {
        s->cinfo.scale_num = 1;
        s->cinfo.scale_denom = d;
        break;
      }
  }
  jpeg_start_decompress(&s->cinfo);
  return true;
}

bool readRows(JpegState* s, std::uint8_t* out, size_t rowBytes) {
  if (setjmp(s->err.jump)) return false;
  while (s->cinfo.output_scanline < s->cinfo.output_height) {
    JSAMPROW row = out + s->cinfo.output_scanline * rowBytes;
    jpeg_read_scanlines(&s->cinfo, &row, 1);
  }
  jpeg_finish_decompress(&s->cinfo);
  return true;
}

bool readHeaderOnly(JpegState* s, const std::uint8_t* data, size_t size) {
  if (setjmp(s->err.jump)) return false;
  jpeg_create_decompress(&s->cinfo);
  jpeg_mem_src(&s->cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&s->cinfo, TRUE);
  return true;
}

}  // namespace

bool jpegHeader(const std::uint8_t* data, size_t size, long* width, long* height, bool* arith,
                std::string* error) {
  JpegState s;
  if (!readHeaderOnly(&s, data, size) || s.err.corruption[0]) {
    *error = s.err.message[0] ? s.err.message : s.err.corruption;
    return false;
  }
  *width = s.cinfo.image_width;
  *height = s.cinfo.image_height;
  *arith = s.cinfo.arith_code;
  return true;
}

RawImage decodeJpeg(const std::vector<std::uint8_t>& bytes, const std::string& name, int minWidth,
                    int minHeight) {
  JpegState s;
  if (!readHeader(&s, bytes.data(), bytes.size(), minWidth, minHeight)) {
    throw Error(name + ": corrupt JPEG (" + s.err.message + ")");
  }
  long w = s.cinfo.output_width, h = s.cinfo.output_height;
  int channels = s.cinfo.output_components;
  checkClaimedSize(name, static_cast<long>(s.cinfo.image_width),
                   static_cast<long>(s.cinfo.image_height), bytes.size(),
                   s.cinfo.arith_code ? 0.0 : kJpegMaxPixelsPerByte);
  if (channels != 1 && channels != 3) throw Error(name + ": unsupported JPEG colour layout");
  RawImage raw;
  raw.width = static_cast<int>(w);
  raw.height = static_cast<int>(h);
  raw.nativeWidth = static_cast<int>(s.cinfo.image_width);
  raw.nativeHeight = static_cast<int>(s.cinfo.image_height);
  raw.channels = channels;
  raw.maxval = 255;
  raw.fileBitDepth = 8;
  std::uint8_t* dst;  // rows go straight to their final place
  if (channels == 3) {
    raw.rgb8.resize(raw.width, raw.height);
    dst = reinterpret_cast<std::uint8_t*>(raw.rgb8.data());
  } else {
    raw.bytes.resize(static_cast<size_t>(w) * h);
    dst = raw.bytes.data();
  }
  if (!readRows(&s, dst, static_cast<size_t>(w) * channels)) {
    throw Error(name + ": corrupt JPEG (" + s.err.message + ")");
  }
  if (s.err.corruption[0]) throw Error(name + ": corrupt JPEG (" + s.err.corruption + ")");
  return raw;
}

}  // namespace vidmap::io::detail
