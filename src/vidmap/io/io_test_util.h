// Helpers for the io tests: fresh temporary folders and raw file writes.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
// clang-format off: jpeglib.h needs <cstdio> first
#include <jpeglib.h>
// clang-format on
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/core/image.h"

namespace vidmap::io::testing {

// A fresh, empty folder under the system temp folder (unique per test and process).
inline std::filesystem::path freshDir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "_" + info->name() : "x";
  auto d = std::filesystem::temp_directory_path() /
           ("vidmap_io_" + std::to_string(::getpid()) + "_" + test + "_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  // Removed when the test program exits (kept while it runs, for inspection under a debugger).
  static std::vector<std::filesystem::path> made;
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] {
      std::error_code ec;
      for (const auto& p : made) std::filesystem::remove_all(p, ec);
    });
  }
  made.push_back(d);
  return d;
}

inline void writeBytes(const std::filesystem::path& p, const std::vector<unsigned char>& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline void writeText(const std::filesystem::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

inline std::vector<unsigned char> readBytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Copies the first `keep` bytes of `from` to `to`.
inline void truncateCopy(const std::filesystem::path& from, const std::filesystem::path& to,
                         size_t keep) {
  auto b = readBytes(from);
  b.resize(std::min(keep, b.size()));
  writeBytes(to, b);
}

// Runs f, expects a vidmap::Error whose message contains every one of `parts`.
template <class F>
void expectError(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected a vidmap::Error containing '" << (parts.empty() ? "" : parts[0])
                  << "'";
  } catch (const vidmap::Error& e) {
    std::string what = e.what();
    for (const auto& p : parts) {
      EXPECT_NE(what.find(p), std::string::npos) << "message '" << what << "' lacks '" << p << "'";
    }
  }
}

// An independent JPEG writer: libjpeg, quality 100, no chroma subsampling.
inline void writeJpeg(const std::filesystem::path& path, int w, int h, int comps,
                      const std::vector<unsigned char>& px) {
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  jpeg_stdio_dest(&c, f);
  c.image_width = w;
  c.image_height = h;
  c.input_components = comps;
  c.in_color_space = comps == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  for (int i = 0; i < c.num_components; ++i)
    c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(px.data()) + c.next_scanline * w * comps;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::fclose(f);
}

// A w x h gray frame whose level encodes `id` (level (20 + 10 id) / 255), and the id read back
// from its centre: frames a test can tell apart after a round trip through a source.
inline GrayImage levelFrame(int w, int h, int id) {
  return GrayImage(w, h, static_cast<float>(20 + 10 * id) / 255);
}
inline int levelId(const GrayImage& g) {
  return static_cast<int>(std::lround((g(g.width() / 2, g.height() / 2) * 255 - 20) / 10));
}

}  // namespace vidmap::io::testing
