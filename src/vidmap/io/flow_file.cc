#include "vidmap/io/flow_file.h"

#include <cstdint>
#include <cstring>
#include <fstream>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/image_codecs.h"

namespace vidmap::io {

namespace fs = std::filesystem;

namespace {

constexpr float kTag = 202021.25f;

// The file is little-endian; assemble values byte by byte so any host reads it.
std::uint32_t le32(const std::uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
float leFloat(const std::uint8_t* p) {
  std::uint32_t bits = le32(p);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
void putLe32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void putFloat(std::vector<std::uint8_t>& out, float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  putLe32(out, bits);
}

}  // namespace

FlowField readFlo(const fs::path& path) {
  std::string name = path.string();
  auto bytes = detail::readFileBytes(name, "flow file");
  if (bytes.size() < 12) throw Error(name + ": truncated .flo file (no header)");
  if (leFloat(bytes.data()) != kTag) {
    throw Error(name + ": not a Middlebury .flo file (the tag is not PIEH / 202021.25)");
  }
  auto w = static_cast<std::int32_t>(le32(bytes.data() + 4));
  auto h = static_cast<std::int32_t>(le32(bytes.data() + 8));
  if (w <= 0 || h <= 0 || w > detail::kMaxSide || h > detail::kMaxSide) {
    throw Error(name + ": bad .flo size " + std::to_string(w) + "x" + std::to_string(h));
  }
  size_t need = 12 + static_cast<size_t>(w) * h * 8;
  if (bytes.size() < need) {
    throw Error(name + ": truncated .flo file (" + std::to_string(bytes.size()) + " of " +
                std::to_string(need) + " bytes)");
  }
  FlowField flow;
  flow.u.resize(w, h);
  flow.v.resize(w, h);
  const std::uint8_t* p = bytes.data() + 12;
  for (long i = 0; i < static_cast<long>(w) * h; ++i, p += 8) {
    flow.u.data()[i] = leFloat(p);
    flow.v.data()[i] = leFloat(p + 4);
  }
  return flow;
}

void writeFlo(const fs::path& path, const FlowField& flow) {
  int w = flow.u.width(), h = flow.u.height();
  if (w <= 0 || h <= 0 || flow.v.width() != w || flow.v.height() != h) {
    throw Error(path.string() + ": cannot write flow: u and v must have the same non-zero size");
  }
  std::vector<std::uint8_t> out;
  out.reserve(12 + static_cast<size_t>(w) * h * 8);
  putFloat(out, kTag);
  putLe32(out, static_cast<std::uint32_t>(w));
  putLe32(out, static_cast<std::uint32_t>(h));
  for (long i = 0; i < static_cast<long>(w) * h; ++i) {
    putFloat(out, flow.u.data()[i]);
    putFloat(out, flow.v.data()[i]);
  }
  writeAtomically(path, [&](const fs::path& tmp) {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw Error("cannot write " + tmp.string());
    f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
    f.close();
    if (!f) throw Error("write failed: " + tmp.string());
  });
}

}  // namespace vidmap::io
