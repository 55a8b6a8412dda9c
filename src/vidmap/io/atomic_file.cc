#include "vidmap/io/atomic_file.h"

#include <cerrno>
#include <cstring>
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
  if (ec) throw Error("cannot write " + path_.string() + ": " + ec.message());
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

void writeTextFile(const fs::path& tmp, const fs::path& path, const std::string& text) {
  auto fail = [&](int err) {
    const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    throw Error("cannot write " + path.filename().string() + " in the folder " + dir.string() +
                ": " + std::strerror(err != 0 ? err : EIO));
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(errno);
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  int err = wrote ? 0 : (errno != 0 ? errno : EIO);
  if (std::fclose(f) != 0 && err == 0) err = errno != 0 ? errno : EIO;  // a full disk may
  if (err != 0) fail(err);                                              // show only here
}

void writeTextAtomically(const fs::path& path, const std::string& text) {
  writeAtomically(path, [&](const fs::path& tmp) { writeTextFile(tmp, path, text); });
}

AtomicFileGroup::~AtomicFileGroup() = default;  // members remove their uncommitted temporaries

AtomicFile& AtomicFileGroup::add(const fs::path& path) {
  require(!committed_, "AtomicFileGroup: add after commit");
  for (const auto& f : files_) {
    std::error_code ec;
    if (fs::weakly_canonical(fs::absolute(f->path()), ec) ==
        fs::weakly_canonical(fs::absolute(path), ec))
      throw Error("two outputs are the same file: " + path.string());
  }
  files_.push_back(std::make_unique<AtomicFile>(path));
  return *files_.back();
}

void AtomicFileGroup::commit() {
  require(!committed_, "AtomicFileGroup: committed twice");
  // backups[i]: where member i's previous file was moved (empty: there was none).
  std::vector<fs::path> backups(files_.size());
  std::size_t done = 0;  // members whose new file is in place
  auto rollback = [&] {
    std::error_code ec;
    for (std::size_t j = 0; j < files_.size(); ++j) {
      if (j < done) fs::remove(files_[j]->path(), ec);
      if (!backups[j].empty()) fs::rename(backups[j], files_[j]->path(), ec);
    }
  };
  for (std::size_t i = 0; i < files_.size(); ++i) {
    AtomicFile& f = *files_[i];
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(f.path(), ec);
    if (fs::is_directory(st)) {  // never moved aside: a folder is not an output's old version
      rollback();
      throw Error("cannot write " + f.path().string() + ": it is a folder" +
                  (i > 0 ? " (the other outputs were left as they were)" : ""));
    }
    if (fs::exists(st)) {
      backups[i] = f.tmp();
      backups[i] += ".old";
      fs::rename(f.path(), backups[i], ec);
      if (ec) {
        backups[i].clear();
        rollback();
        throw Error("cannot replace " + f.path().string() + ": " + ec.message());
      }
    }
    if (static_cast<int>(i) == failAt_) {
      ec = std::make_error_code(std::errc::no_space_on_device);
    } else {
      fs::rename(f.tmp(), f.path(), ec);
    }
    if (ec) {
      rollback();
      throw Error("cannot write " + f.path().string() + ": " + ec.message() +
                  (i > 0 ? " (the other outputs were left as they were)" : ""));
    }
    f.committed_ = true;
    ++done;
  }
  committed_ = true;
  std::error_code ec;
  for (const auto& b : backups)
    if (!b.empty()) fs::remove(b, ec);
}

}  // namespace vidmap::io
