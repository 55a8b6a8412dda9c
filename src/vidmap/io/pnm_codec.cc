// Netpbm gray and colour maps: P2/P3 (plain text) and P5/P6 (binary, 16-bit samples are
// big-endian when maxval > 255), after the format descriptions of netpbm's pgm(5) and ppm(5).
#include <cstring>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/io/image_codecs.h"

namespace vidmap::io::detail {
namespace {

class PnmParser {
 public:
  PnmParser(const std::vector<std::uint8_t>& b, const std::string& name) : b_(b), name_(name) {}

  // Skips whitespace and '#' comments, then reads an unsigned decimal number.
  long number(const char* what) {
    skipSpace();
    if (pos_ >= b_.size()) throw Error(name_ + ": truncated PNM file (no " + what + ")");
    if (b_[pos_] < '0' || b_[pos_] > '9') {
      throw Error(name_ + ": corrupt PNM file (" + what + " is not a number)");
    }
    long v = 0;
    while (pos_ < b_.size() && b_[pos_] >= '0' && b_[pos_] <= '9') {
      v = v * 10 + (b_[pos_++] - '0');
      if (v > (1L << 30)) throw Error(name_ + ": corrupt PNM file (" + what + " is too large)");
    }
    return v;
  }

  void skipSpace() {
    while (pos_ < b_.size()) {
      std::uint8_t c = b_[pos_];
      if (c == '#') {
        while (pos_ < b_.size() && b_[pos_] != '\n' && b_[pos_] != '\r') ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        ++pos_;
      } else {
        return;
      }
    }
  }

  size_t& pos() { return pos_; }

 private:
  const std::vector<std::uint8_t>& b_;
  const std::string& name_;
  size_t pos_ = 2;  // after the magic number
};

}  // namespace

RawImage decodePnm(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  if (bytes.size() < 2 || bytes[0] != 'P') throw Error(name + ": not a PNM file");
  char kind = static_cast<char>(bytes[1]);
  if (kind != '2' && kind != '3' && kind != '5' && kind != '6') {
    throw Error(name + ": unsupported PNM type P" + std::string(1, kind) +
                " (only P2, P3, P5 and P6 are read)");
  }
  bool plain = kind == '2' || kind == '3';
  int channels = (kind == '3' || kind == '6') ? 3 : 1;
  PnmParser p(bytes, name);
  long w = p.number("width"), h = p.number("height"), maxval = p.number("maxval");
  if (w == 0 || h == 0) {
    throw Error(name + ": zero-size image (" + std::to_string(w) + "x" + std::to_string(h) + ")");
  }
  // A sample takes at least a byte (binary) or a digit and a separator (plain).
  checkClaimedSize(name, w, h, bytes.size(), plain ? 0.5 / channels : 1.0 / channels);
  if (maxval < 1 || maxval > 65535) {
    throw Error(name + ": corrupt PNM file (maxval " + std::to_string(maxval) +
                " is outside [1, 65535])");
  }
  RawImage raw;
  raw.width = static_cast<int>(w);
  raw.height = static_cast<int>(h);
  raw.channels = channels;
  raw.maxval = static_cast<int>(maxval);
  raw.fileBitDepth = maxval > 255 ? 16 : 8;
  size_t n = static_cast<size_t>(w) * h * channels;
  bool bytes8 = maxval == 255;
  if (bytes8) {
    raw.bytes.resize(n);
  } else {
    raw.samples.resize(n);
  }
  auto put = [&](size_t i, long v) {
    if (v > maxval) throw Error(name + ": corrupt PNM file (sample above maxval)");
    if (bytes8) {
      raw.bytes[i] = static_cast<std::uint8_t>(v);
    } else {
      raw.samples[i] = static_cast<std::uint16_t>(v);
    }
  };
  if (plain) {
    for (size_t i = 0; i < n; ++i) put(i, p.number("sample"));
    if (bytes8 && channels == 3) {
      raw.rgb8.resize(raw.width, raw.height);
      std::memcpy(raw.rgb8.data(), raw.bytes.data(), n);
      raw.bytes.clear();
    }
    return raw;
  }
  // Binary: exactly one whitespace character separates maxval from the samples.
  size_t pos = p.pos() + 1;
  size_t bps = maxval > 255 ? 2 : 1;
  size_t need = n * bps;
  if (p.pos() >= bytes.size() || bytes.size() - pos < need) {
    size_t have = bytes.size() > pos ? bytes.size() - pos : 0;
    throw Error(name + ": truncated PNM file (" + std::to_string(have) + " of " +
                std::to_string(need) + " sample bytes)");
  }
  const std::uint8_t* d = bytes.data() + pos;
  if (bytes8 && channels == 3) {  // every byte is <= 255
    raw.bytes.clear();
    raw.rgb8.resize(raw.width, raw.height);
    std::memcpy(raw.rgb8.data(), d, n);
    return raw;
  }
  if (bytes8) {
    raw.bytes.assign(d, d + n);
    return raw;
  }
  for (size_t i = 0; i < n; ++i) put(i, bps == 1 ? d[i] : (d[2 * i] << 8) | d[2 * i + 1]);
  return raw;
}

}  // namespace vidmap::io::detail
