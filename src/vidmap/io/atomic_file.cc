#include "vidmap/io/atomic_file.h"

#include <fstream>
#include <random>
#include <system_error>

#include "vidmap/core/error.h"

namespace vidmap::io {

namespace fs = std::filesystem;

void writeAtomically(const fs::path& path, const std::function<void(const fs::path&)>& write) {
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(dir)) throw Error("output folder does not exist: " + dir.string());
  std::random_device rd;
  fs::path tmp = dir / ("." + path.filename().string() + ".tmp" + std::to_string(rd() % 1000000));
  try {
    write(tmp);
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) throw Error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

void writeTextAtomically(const fs::path& path, const std::string& text) {
  writeAtomically(path, [&](const fs::path& tmp) {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw Error("cannot write " + tmp.string());
    f << text;
    f.close();
    if (!f) throw Error("write failed: " + tmp.string());
  });
}

}  // namespace vidmap::io
