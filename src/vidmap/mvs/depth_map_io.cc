#include "vidmap/mvs/depth_map_io.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"

namespace vidmap::mvs {

static_assert(std::endian::native == std::endian::little, "dense arrays are little-endian");

void writeDenseArray(const std::filesystem::path& path, const DenseArray& a) {
  const size_t n = static_cast<size_t>(a.width) * a.height * a.channels;
  if (a.width <= 0 || a.height <= 0 || a.channels <= 0 || a.data.size() != n)
    throw Error("mvs: dense array for " + path.string() + " has size " + std::to_string(a.width) +
                "x" + std::to_string(a.height) + "x" + std::to_string(a.channels) + " but " +
                std::to_string(a.data.size()) + " values");
  std::string header = std::to_string(a.width) + "&" + std::to_string(a.height) + "&" +
                       std::to_string(a.channels) + "&";
  std::string bytes(header.size() + n * sizeof(float), '\0');
  std::memcpy(bytes.data(), header.data(), header.size());
  std::memcpy(bytes.data() + header.size(), a.data.data(), n * sizeof(float));
  io::writeTextAtomically(path, bytes);
}

DenseArray readDenseArray(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("mvs: cannot open dense array " + path.string());
  std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  DenseArray a;
  size_t pos = 0;
  int* fields[3] = {&a.width, &a.height, &a.channels};
  for (int k = 0; k < 3; ++k) {
    size_t amp = content.find('&', pos);
    if (amp == std::string::npos || amp == pos || amp - pos > 9)
      throw Error("mvs: " + path.string() + " has no width&height&channels& header");
    try {
      *fields[k] = std::stoi(content.substr(pos, amp - pos));
    } catch (const std::exception&) {
      throw Error("mvs: " + path.string() + " has a malformed header");
    }
    pos = amp + 1;
  }
  if (a.width <= 0 || a.height <= 0 || a.channels <= 0)
    throw Error("mvs: " + path.string() + " has a non-positive size in its header");
  const size_t n = static_cast<size_t>(a.width) * a.height * a.channels;
  if (content.size() - pos != n * sizeof(float))
    throw Error("mvs: " + path.string() + " holds " + std::to_string(content.size() - pos) +
                " bytes of data, expected " + std::to_string(n * sizeof(float)));
  a.data.resize(n);
  std::memcpy(a.data.data(), content.data() + pos, n * sizeof(float));
  return a;
}

}  // namespace vidmap::mvs
