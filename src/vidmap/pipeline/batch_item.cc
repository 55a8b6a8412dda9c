#include "vidmap/pipeline/batch_item.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/colmap_model.h"
#include "vidmap/io/run_warnings.h"
#include "vidmap/pipeline/batch_manifest.h"

#if defined(VIDMAP_HAVE_JSON)
#include <nlohmann/json.hpp>
#endif

namespace vidmap::pipeline {

namespace fs = std::filesystem;

namespace {

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string hostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

bool nonEmptyFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && fs::file_size(p, ec) > 0 && !ec;
}

// A model folder's three files, binary or text.
bool modelFilesPresent(const fs::path& dir) {
  for (const char* f : {"cameras", "images", "points3D"})
    if (!nonEmptyFile(dir / (std::string(f) + ".bin")) &&
        !nonEmptyFile(dir / (std::string(f) + ".txt")))
      return false;
  return true;
}

int countModelFolders(const fs::path& sparse) {
  int n = 0;
  std::error_code ec;
  while (fs::is_directory(sparse / std::to_string(n), ec)) ++n;
  return n;
}

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * f);
  return buf;
}

}  // namespace

const char* toString(ItemState s) {
  switch (s) {
    case ItemState::kPending:
      return "pending";
    case ItemState::kRunning:
      return "running";
    case ItemState::kDone:
      return "done";
    case ItemState::kFailed:
      return "failed";
  }
  return "?";
}

std::string utcNowIso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

fs::path failurePath(const fs::path& out) { return out / "failed.json"; }

fs::path lockPath(const fs::path& out) {
  return out.parent_path() / ("." + out.filename().string() + ".lock");
}

#if defined(VIDMAP_HAVE_JSON)

namespace {

// Reads run.json and fills the status; returns "" when it is a complete run record, else why.
std::string readRunRecord(const fs::path& out, ItemStatus* st) {
  const fs::path p = out / "run.json";
  std::error_code ec;
  if (!fs::exists(p, ec)) return "no run.json";
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(readText(p));
  } catch (const nlohmann::json::exception& e) {
    return "run.json is not valid JSON (" + std::string(e.what()) + ")";
  }
  if (!j.is_object() || j.value("schema", "") != "vidmap.run_record")
    return "run.json is not a vidmap run record";
  // The command as typed: the program's path, then the subcommand.
  std::vector<std::string> words;
  try {
    words = splitShellWords(j.value("command", ""));
  } catch (const Error&) {
  }
  if (words.size() < 2 || words[1] != "reconstruct")
    return "run.json is not the record of a vidmap reconstruct run";
  const nlohmann::json counts = j.value("counts", nlohmann::json::object());
  const nlohmann::json metrics = j.value("metrics", nlohmann::json::object());
  const std::int64_t models = counts.value("models", std::int64_t{0});
  if (models < 1) return "run.json records no model";
  if (st) {
    st->wallSeconds = j.value("wall_ms", 0.0) / 1e3;
    st->startedAt = j.value("started_at", "");
    st->frames = counts.value("frames", std::int64_t{0});
    st->framesPosed = counts.value("registered_keyframes", std::int64_t{0}) +
                      counts.value("localized_frames", std::int64_t{0});
    st->models = models;
    st->landmarks = counts.value("landmarks", std::int64_t{0});
    if (models > 1)
      st->warnings.push_back(std::to_string(models) +
                             " models (tracking broke and the pieces could not be merged)");
    if (st->frames > 0 && st->framesPosed * 2 < st->frames)
      st->warnings.push_back("only " + percent(static_cast<double>(st->framesPosed) / st->frames) +
                             " of frames posed");
    if (counts.value(io::kFocalUndeterminedCount, std::int64_t{0}) != 0)
      st->warnings.push_back(
          io::focalUndeterminedWarning(metrics.value(io::kFocalRelUncertaintyMetric, 0.0),
                                       metrics.value(io::kFocalTurnMetric, 0.0)));
  }
  return "";
}

}  // namespace

bool isCompleteOutput(const fs::path& out, bool deep, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  std::error_code ec;
  if (!fs::is_directory(out, ec)) return fail("no output folder");
  ItemStatus st;
  const std::string bad = readRunRecord(out, &st);
  if (!bad.empty()) return fail(bad);
  const int folders = countModelFolders(out / "sparse");
  if (folders != st.models)
    return fail("run.json records " + std::to_string(st.models) + " models, sparse/ holds " +
                std::to_string(folders));
  for (int k = 0; k < folders; ++k) {
    const fs::path dir = out / "sparse" / std::to_string(k);
    if (!modelFilesPresent(dir)) return fail(dir.string() + " lacks a model file");
    if (deep) {
      try {
        const io::ColmapModel m = io::readColmapModel(dir);
        if (m.images.empty()) return fail(dir.string() + " has no images");
      } catch (const Error& e) {
        return fail(dir.string() + " is unreadable: " + e.what());
      }
    }
  }
  return true;
}

void writeFailure(const fs::path& out, const FailureRecord& f) {
  nlohmann::ordered_json j;
  j["schema"] = "vidmap.batch_failure";
  j["command"] = f.command;
  j["exit_code"] = f.exitCode;
  j["message"] = f.message;
  j["time"] = f.time;
  j["seconds"] = std::round(f.seconds * 1000) / 1000;
  j["attempts"] = f.attempts;
  j["host"] = f.host;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw Error("cannot create " + out.string() + ": " + ec.message());
  io::writeTextAtomically(failurePath(out), j.dump(2) + "\n");
}

std::optional<FailureRecord> readFailure(const fs::path& out) {
  const fs::path p = failurePath(out);
  std::error_code ec;
  if (!fs::exists(p, ec)) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(readText(p));
    FailureRecord f;
    f.command = j.value("command", "");
    f.exitCode = j.value("exit_code", 0);
    f.message = j.value("message", "");
    f.time = j.value("time", "");
    f.seconds = j.value("seconds", 0.0);
    f.attempts = j.value("attempts", 1);
    f.host = j.value("host", "");
    return f;
  } catch (const nlohmann::json::exception& e) {
    throw Error(p.string() + " is not valid JSON: " + e.what());
  }
}

std::string summaryJson(const std::vector<SummaryRow>& rows) {
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const SummaryRow& r : rows) {
    const ItemStatus& s = r.status;
    nlohmann::ordered_json j;
    j["index"] = r.item->index;
    j["line"] = r.item->line;
    j["input"] = r.item->input.string();
    j["output"] = r.item->output.string();
    j["status"] = toString(s.state);
    if (s.state == ItemState::kDone) {
      j["seconds"] = std::round(s.wallSeconds * 1000) / 1000;
      j["started_at"] = s.startedAt;
      j["frames"] = s.frames;
      j["frames_posed"] = s.framesPosed;
      j["models"] = s.models;
      j["landmarks"] = s.landmarks;
    }
    if (s.failure) {
      j["seconds"] = s.failure->seconds;
      j["exit_code"] = s.failure->exitCode;
      j["attempts"] = s.failure->attempts;
      j["failed_at"] = s.failure->time;
    }
    if (s.state == ItemState::kRunning) j["pid"] = s.lockPid;
    j["warnings"] = s.warnings;
    j["message"] = s.detail;
    items.push_back(std::move(j));
  }
  nlohmann::ordered_json totals;
  for (const char* k : {"done", "failed", "running", "pending"}) totals[k] = 0;
  for (const SummaryRow& r : rows)
    totals[toString(r.status.state)] = totals[toString(r.status.state)].get<int>() + 1;
  nlohmann::ordered_json doc;
  doc["schema"] = "vidmap.batch_summary";
  doc["items"] = rows.size();
  doc["totals"] = totals;
  doc["rows"] = items;
  return doc.dump(2) + "\n";
}

#else  // no nlohmann-json

bool isCompleteOutput(const fs::path&, bool, std::string* why) {
  if (why) *why = "this build cannot read run.json (no nlohmann-json)";
  return false;
}
void writeFailure(const fs::path& out, const FailureRecord& f) {
  std::error_code ec;
  fs::create_directories(out, ec);
  // A minimal hand-written record: the message is escaped for JSON's string syntax.
  std::string msg;
  for (char c : f.message) {
    if (c == '"' || c == '\\') msg += '\\';
    if (c == '\n') {
      msg += "\\n";
      continue;
    }
    if (static_cast<unsigned char>(c) >= 0x20) msg += c;
  }
  io::writeTextAtomically(failurePath(out),
                          "{\"schema\": \"vidmap.batch_failure\", \"exit_code\": " +
                              std::to_string(f.exitCode) + ", \"message\": \"" + msg + "\"}\n");
}
std::optional<FailureRecord> readFailure(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(failurePath(out), ec)) return std::nullopt;
  FailureRecord f;
  f.message = "see " + failurePath(out).string();
  return f;
}
std::string summaryJson(const std::vector<SummaryRow>&) {
  throw Error("JSON output needs nlohmann-json, which this build lacks; use --format csv");
}

#endif

ItemStatus inspectItem(const BatchItem& item, bool deep) {
  ItemStatus st;
  std::string why;
  if (isCompleteOutput(item.output, deep, &why)) {
#if defined(VIDMAP_HAVE_JSON)
    readRunRecord(item.output, &st);
#endif
    st.state = ItemState::kDone;
    return st;
  }
  if (const int pid = ItemLock::probe(item.output)) {
    st.state = ItemState::kRunning;
    st.lockPid = pid;
    st.detail = "locked by pid " + std::to_string(pid);
    return st;
  }
  try {
    st.failure = readFailure(item.output);
  } catch (const Error& e) {
    st.state = ItemState::kFailed;
    st.detail = e.what();
    return st;
  }
  if (st.failure) {
    st.state = ItemState::kFailed;
    st.detail = st.failure->message;
    return st;
  }
  std::error_code ec;
  st.state = ItemState::kPending;
  if (fs::exists(item.output, ec) && !fs::is_empty(item.output, ec))
    st.detail = "the output folder exists but is not a complete model: " + why;
  return st;
}

// ---- lock -------------------------------------------------------------------------------

ItemLock::ItemLock(const fs::path& out) : path_(lockPath(out)) {
  std::error_code ec;
  fs::create_directories(path_.parent_path(), ec);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("cannot open the lock " + path_.string() + ": " + std::strerror(errno));
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (::fcntl(fd, F_SETLK, &fl) != 0) {
      const int err = errno;
      if (err != EACCES && err != EAGAIN) {
        ::close(fd);
        throw Error("cannot lock " + path_.string() + ": " + std::strerror(err));
      }
      struct flock q {};
      q.l_type = F_WRLCK;
      q.l_whence = SEEK_SET;
      if (::fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK) holderPid_ = q.l_pid;
      ::close(fd);
      holder_ = readText(path_);
      while (!holder_.empty() && (holder_.back() == '\n' || holder_.back() == ' '))
        holder_.pop_back();
      return;
    }
    // The file may have been removed by its previous holder between our open and our lock:
    // then we hold a lock on a name nobody sees; start again.
    struct stat a {
    }, b{};
    if (::fstat(fd, &a) != 0 || ::stat(path_.c_str(), &b) != 0 || a.st_ino != b.st_ino ||
        a.st_dev != b.st_dev) {
      ::close(fd);
      continue;
    }
    const std::string who = std::to_string(getpid()) + " " + hostName() + " " + utcNowIso() + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, who.data(), who.size(), 0) < 0) {
      // The lock is held all the same; the text is only for the operator.
    }
    fd_ = fd;
    return;
  }
  throw Error("cannot lock " + path_.string() + ": it keeps being replaced");
}

ItemLock::~ItemLock() {
  if (fd_ < 0) return;
  // Remove the name while still holding the lock (a waiter re-checks the inode), then close,
  // which releases the lock.
  ::unlink(path_.c_str());
  ::close(fd_);
}

int ItemLock::probe(const fs::path& out) {
  const fs::path p = lockPath(out);
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct flock q {};
  q.l_type = F_WRLCK;
  q.l_whence = SEEK_SET;
  int pid = 0;
  if (::fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK) pid = q.l_pid > 0 ? q.l_pid : -1;
  ::close(fd);
  return pid;
}

int removeStaleTemporaries(const fs::path& out) {
  const std::string prefix = "." + out.filename().string() + ".tmp-";
  std::error_code ec;
  int n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(out.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::error_code rec;
    fs::remove_all(e.path(), rec);
    if (!rec) ++n;
  }
  return n;
}

// ---- summary ------------------------------------------------------------------------------

std::vector<SummaryRow> summarize(const BatchManifest& m, bool deep) {
  std::vector<SummaryRow> rows;
  rows.reserve(m.items.size());
  for (const BatchItem& item : m.items) rows.push_back({&item, inspectItem(item, deep)});
  return rows;
}

namespace {

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

std::string summaryCsv(const std::vector<SummaryRow>& rows) {
  std::string s =
      "index,line,input,output,status,seconds,frames,frames_posed,models,landmarks,exit_code,"
      "attempts,warnings,message\n";
  for (const SummaryRow& r : rows) {
    const ItemStatus& st = r.status;
    const bool done = st.state == ItemState::kDone;
    std::string warnings;
    for (const std::string& w : st.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
    s += std::to_string(r.item->index) + "," + std::to_string(r.item->line) + "," +
         csvField(r.item->input.string()) + "," + csvField(r.item->output.string()) + "," +
         toString(st.state) + "," +
         (done         ? fixed(st.wallSeconds, 2)
          : st.failure ? fixed(st.failure->seconds, 2)
                       : "") +
         "," + (done ? std::to_string(st.frames) : "") + "," +
         (done ? std::to_string(st.framesPosed) : "") + "," +
         (done ? std::to_string(st.models) : "") + "," +
         (done ? std::to_string(st.landmarks) : "") + "," +
         (st.failure ? std::to_string(st.failure->exitCode) : "") + "," +
         (st.failure ? std::to_string(st.failure->attempts) : "") + "," + csvField(warnings) + "," +
         csvField(st.detail) + "\n";
  }
  return s;
}

}  // namespace vidmap::pipeline
