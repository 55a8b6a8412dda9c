#include "vidmap/io/atomic_file.h"

#include <fstream>
#include <random>
#include <system_error>

#include "vidmap/core/error.h"

namespace vidmap::io {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(const fs::path& path) : path_(path) {
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(dir)) throw Error("output folder does not exist: " + dir.string());
  std::random_device rd;
  std::string name = ".";  // hidden, in the same folder so the rename is atomic
  name += path.filename().string();
  name += ".tmp";
  name += std::to_string(rd() % 1000000);
  tmp_ = dir / name;
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::commit() {
  std::error_code ec;
  fs::rename(tmp_, path_, ec);
  if (ec) {
    throw Error("cannot rename " + tmp_.string() + " to " + path_.string() + ": " + ec.message());
  }
  committed_ = true;
}

void AtomicFile::discard() {
  std::error_code ec;
  fs::remove(tmp_, ec);
}

void writeAtomically(const fs::path& path, const std::function<void(const fs::path&)>& write) {
  AtomicFile file(path);
  write(file.tmp());  // on an exception the destructor removes the temporary
  file.commit();
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
