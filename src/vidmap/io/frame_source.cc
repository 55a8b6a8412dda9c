#include "vidmap/io/frame_source.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <sstream>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"
#include "vidmap/io/color.h"
#include "vidmap/io/frame_source_impl.h"
#include "vidmap/io/image_codecs.h"

namespace vidmap::io {

namespace fs = std::filesystem;

void FrameSourceOptions::check() const {
  checkRange("fps", fps, 1e-3, 120.0);
  if (width != 0) checkRange("width (0 = native)", width, 16, 16384);
  if (!(folderFrameRate > 0 && folderFrameRate <= 1000))
    throw Error("option folderFrameRate = " + std::to_string(folderFrameRate) +
                " is out of range (0, 1000]");
}

std::string SourceReport::describe() const {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(2);
  if (endedEarly) {
    s << "the video ends early: frames up to " << secondsDecoded << " s of the " << secondsExpected
      << " s its container declares";
    if (framesExpected > 0) s << " (" << framesDecoded << " of " << framesExpected << " frames)";
  }
  if (decodeErrors > 0)
    s << (endedEarly ? "; " : "") << decodeErrors << " damaged packets or frames skipped";
  if (!skipped.empty()) {
    s << (s.tellp() > 0 ? "; " : "") << skipped.size()
      << " unreadable frames skipped: " << skipped.front();
    if (skipped.size() > 1) s << ", ...";
  }
  return s.str();
}

bool naturalLess(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;  // leading zeros do not change the value
      while (j0 < b.size() && b[j0] == '0') ++j0;
      size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && digit(a[i1])) ++i1;
      while (j1 < b.size() && digit(b[j1])) ++j1;
      if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;  // more significant digits: larger
      int c = a.compare(i0, i1 - i0, b, j0, j1 - j0);
      if (c != 0) return c < 0;
      i = i1;
      j = j1;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  if (i < a.size() || j < b.size()) return a.size() - i < b.size() - j;  // a prefix first
  return a < b;  // equal as numbers ("01" and "1"): a fixed order
}

std::vector<fs::path> listImageFiles(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::string ext = it->path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    bool image = ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".pgm" ||
                 ext == ".ppm" || ext == ".pnm";
    std::error_code ec2;
    if (image && !it->is_directory(ec2)) files.push_back(it->path());
  }
  if (ec) throw Error("cannot list folder " + folder.string() + ": " + ec.message());
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return naturalLess(a.filename().string(), b.filename().string());
  });
  return files;
}

std::vector<fs::path> inputFiles(const fs::path& input) {
  std::error_code ec;
  if (fs::is_directory(input, ec)) return listImageFiles(input);
  std::vector<fs::path> files{input};
  std::string ext = input.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".txt" || !fs::is_regular_file(input, ec)) return files;
  std::ifstream list(input);
  std::string line;
  while (std::getline(list, line)) {
    std::istringstream fields(line);
    std::string stamp, file;
    if (!(fields >> stamp >> file) || stamp[0] == '#') continue;
    const fs::path p(file);
    files.push_back(p.is_absolute() ? p : input.parent_path() / p);
  }
  return files;
}

std::unique_ptr<FrameSource> openFrameSource(const fs::path& path,
                                             const FrameSourceOptions& options) {
  options.check();
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw Error("input does not exist: " + path.string());
  if (fs::is_directory(status)) return detail::openImageFolder(path, options);
  if (fs::is_regular_file(status) && fs::file_size(path, ec) == 0 && !ec)
    throw Error(path.string() + ": empty file (0 bytes)");
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".txt") return detail::openImageList(path, options);
  if (ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".pgm" || ext == ".ppm") {
    throw Error(path.string() + " is a single image; give the folder of the frames");
  }
  return detail::openVideo(path, options);
}

namespace detail {

void grayFromRgb(const RgbImage& rgb, GrayImage& gray) {
  static const auto lut = [] {
    std::array<float, 256> u{};
    for (int v = 0; v < 256; ++v) u[v] = unitFromByte(static_cast<std::uint8_t>(v));
    return u;
  }();
  gray.resize(rgb.width(), rgb.height());
  const long w = rgb.width();
  const Rgb8* c = rgb.data();
  const float* unit = lut.data();
  float* g = gray.data();
  forRows(rgb.height(), rgb.pixels(), [=](std::int64_t y) {
    const Rgb8* in = c + y * w;
    float* out = g + y * w;
    for (long x = 0; x < w; ++x) out[x] = lumaRec601(unit[in[x].r], unit[in[x].g], unit[in[x].b]);
  });
}

}  // namespace detail
}  // namespace vidmap::io
