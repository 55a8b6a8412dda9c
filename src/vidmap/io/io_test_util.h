// Helpers for the io tests: fresh temporary folders and raw file writes.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "vidmap/core/error.h"

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

}  // namespace vidmap::io::testing
