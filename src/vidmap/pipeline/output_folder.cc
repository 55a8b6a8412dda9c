#include "vidmap/pipeline/output_folder.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

#include "vidmap/core/error.h"

namespace vidmap::pipeline {

namespace fs = std::filesystem;

namespace {

bool existsNonEmpty(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(p, ec))) return false;
  if (!fs::is_directory(fs::symlink_status(p, ec))) return true;
  return !fs::is_empty(p, ec);
}

bool isDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

template <std::size_t N>
bool listed(const char* const (&names)[N], std::string_view name) {
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

// True while a process with this id exists (ours counts: another OutputFolder of this process
// may be writing).
bool processAlive(long pid) {
  if (pid <= 0) return false;
  if (pid == static_cast<long>(getpid())) return true;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// For ".NAME.tmp-PID-N" or ".NAME.tmp-PID-N.old": the process id, and whether it is an ".old";
// pid 0 when `file` is not a temporary folder of NAME.
struct TempName {
  long pid = 0;
  bool old = false;
};
TempName parseTempName(const std::string& file, const std::string& name) {
  TempName t;
  const std::string prefix = "." + name + ".tmp-";
  if (file.size() <= prefix.size() || file.compare(0, prefix.size(), prefix) != 0) return t;
  std::string rest = file.substr(prefix.size());
  if (rest.size() > 4 && rest.compare(rest.size() - 4, 4, ".old") == 0) {
    t.old = true;
    rest.resize(rest.size() - 4);
  }
  const std::size_t dash = rest.find('-');
  if (dash == std::string::npos || !isDigits(rest.substr(0, dash)) ||
      !isDigits(rest.substr(dash + 1)) || dash > 9)
    return t;
  t.pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
  return t;
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

std::string ownedList() {
  std::string s;
  for (const char* n : kOwnedEntries) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace

std::vector<std::string> foreignEntries(const fs::path& dir, int limit) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return out;
  auto add = [&](const fs::directory_entry& e, const std::string& prefix) {
    if (static_cast<int>(out.size()) >= limit) return;
    std::error_code ec2;
    const bool isDir = e.is_directory(ec2) && !e.is_symlink(ec2);
    std::string n = prefix + e.path().filename().string() + (isDir ? "/" : "");
    if (e.is_symlink(ec2)) n += " (a symbolic link)";
    out.push_back(n);
  };
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::error_code ec2;
    const std::string name = e.path().filename().string();
    const bool link = e.is_symlink(ec2);
    const bool isDir = !link && e.is_directory(ec2);
    const bool isFile = !link && e.is_regular_file(ec2);
    if (name == "sparse" && isDir) {
      // sparse/N/<model files> only.
      for (const fs::directory_entry& m : fs::directory_iterator(e.path(), ec2)) {
        std::error_code ec3;
        if (!isDigits(m.path().filename().string()) || m.is_symlink(ec3) || !m.is_directory(ec3)) {
          add(m, "sparse/");
          continue;
        }
        for (const fs::directory_entry& f : fs::directory_iterator(m.path(), ec3)) {
          std::error_code ec4;
          if (f.is_symlink(ec4) || !f.is_regular_file(ec4) ||
              !listed(kOwnedModelFiles, f.path().filename().string()))
            add(f, "sparse/" + m.path().filename().string() + "/");
        }
      }
      continue;
    }
    if (isFile && name != "sparse" && listed(kOwnedEntries, name)) continue;
    add(e, "");
  }
  if (ec) out.push_back("(cannot list " + dir.string() + ": " + ec.message() + ")");
  return out;
}

OutputFolder::OutputFolder(const fs::path& dir, bool overwrite, const std::vector<fs::path>& inputs)
    : overwrite_(overwrite) {
  require(!dir.empty(), "the output folder is empty");
  std::error_code ec;
  // The real folder: links on the way are followed, so the checks below see what is written.
  dir_ = fs::weakly_canonical(fs::absolute(dir), ec);
  if (ec) dir_ = fs::absolute(dir).lexically_normal();
  if (dir_.filename().empty()) dir_ = dir_.parent_path();
  require(dir_.has_parent_path() && dir_ != dir_.root_path(),
          "the output folder " + dir_.string() + " is the root of the file system");
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    throw Error("the output " + dir_.string() + " exists and is not a folder");
  for (const fs::path& input : inputs) {
    if (input.empty()) continue;  // (a list in the current folder: its parent path is "")
    std::error_code ec2;
    fs::path in = fs::absolute(input, ec2);
    if (!ec2) in = fs::weakly_canonical(in, ec2);
    if (ec2) continue;
    if (in.filename().empty()) in = in.parent_path();
    const fs::path rel = in.lexically_relative(dir_);
    if (!rel.empty() && *rel.begin() != "..")
      throw Error("the output folder " + dir_.string() +
                  (rel == "." ? " is the input " : " contains the input ") + input.string() +
                  "; choose another output folder (vidmap never writes over its input)");
  }
  recoverStale();
  if (existsNonEmpty(dir_)) {
    std::string restored;
    for (const std::string& n : notes_) restored += " (" + n + ")";
    if (!overwrite_)
      throw Error("the output folder " + dir_.string() +
                  " is not empty (choose another, or --overwrite to replace an earlier vidmap "
                  "output)" +
                  restored);
    const std::vector<std::string> foreign = foreignEntries(dir_);
    if (!foreign.empty())
      throw Error("--overwrite replaces only what vidmap writes (" + ownedList() + "), but " +
                  dir_.string() + " also holds " + joinNames(foreign) +
                  "; choose another output folder, or move those away");
  }
  fs::create_directories(dir_.parent_path(), ec);
  if (ec) throw Error("cannot create " + dir_.parent_path().string() + ": " + ec.message());
  static std::atomic<int> counter{0};
  tmp_ = dir_.parent_path() / ("." + dir_.filename().string() + ".tmp-" + std::to_string(getpid()) +
                               "-" + std::to_string(counter++));
  fs::remove_all(tmp_, ec);
  fs::create_directory(tmp_, ec);
  if (ec) throw Error("cannot create the temporary folder " + tmp_.string() + ": " + ec.message());
}

void OutputFolder::recoverStale() {
  const fs::path parent = dir_.parent_path();
  const std::string name = dir_.filename().string();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) return;
  std::vector<fs::path> temps, olds;
  for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
    std::error_code ec2;
    if (e.is_symlink(ec2) || !e.is_directory(ec2)) continue;
    const TempName t = parseTempName(e.path().filename().string(), name);
    if (t.pid == 0 || processAlive(t.pid)) continue;
    (t.old ? olds : temps).push_back(e.path());
  }
  // An .old is the previous output of a run killed inside commit(): back at NAME when NAME is
  // missing (the new output never arrived), else a leftover of the removal.
  for (const fs::path& old : olds) {
    std::error_code ec2;
    if (!fs::exists(fs::symlink_status(dir_, ec2))) {
      fs::rename(old, dir_, ec2);
      if (!ec2) {
        notes_.push_back("restored " + dir_.string() + " from " + old.filename().string() +
                         ", left by a run killed while replacing it");
        continue;
      }
    }
    fs::remove_all(old, ec2);
    if (!ec2)
      notes_.push_back("removed " + old.filename().string() +
                       ", the previous output left by a run killed while replacing it");
  }
  for (const fs::path& t : temps) {
    std::error_code ec2;
    fs::remove_all(t, ec2);
    if (!ec2)
      notes_.push_back("removed " + t.filename().string() +
                       ", the unfinished output of a run that was killed");
  }
}

OutputFolder::~OutputFolder() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
}

void OutputFolder::commit() {
  require(!committed_, "output folder committed twice");
  std::error_code ec;
  fs::path old;
  if (fs::exists(fs::symlink_status(dir_, ec))) {
    if (existsNonEmpty(dir_) && !overwrite_)
      throw Error("the output folder " + dir_.string() + " was filled while vidmap ran");
    const std::vector<std::string> foreign = foreignEntries(dir_);
    if (!foreign.empty())
      throw Error("the output folder " + dir_.string() + " was given " + joinNames(foreign) +
                  " while vidmap ran; nothing was replaced");
    old = tmp_;
    old += ".old";
    fs::rename(dir_, old, ec);
    if (ec) throw Error("cannot move the old " + dir_.string() + " aside: " + ec.message());
  }
  fs::rename(tmp_, dir_, ec);
  if (ec) {
    std::error_code ec2;
    if (!old.empty()) fs::rename(old, dir_, ec2);
    throw Error("cannot rename " + tmp_.string() + " to " + dir_.string() + ": " + ec.message());
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

}  // namespace vidmap::pipeline
