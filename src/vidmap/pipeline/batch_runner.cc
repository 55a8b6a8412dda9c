#include "vidmap/pipeline/batch_runner.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "vidmap/core/error.h"
#include "vidmap/pipeline/batch_item.h"

extern char** environ;

namespace vidmap::pipeline {

namespace fs = std::filesystem;

namespace {

// Children the signal handler forwards to: a fixed table of slots (no allocation in the
// handler). A slot holds a pid while its child runs.
constexpr int kMaxChildren = 256;
std::atomic<pid_t> gChildren[kMaxChildren];
std::atomic<int> gStopSignal{0};

int claimSlot(pid_t pid) {
  for (int i = 0; i < kMaxChildren; ++i) {
    pid_t expected = 0;
    if (gChildren[i].compare_exchange_strong(expected, pid)) return i;
  }
  return -1;
}

std::string hostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

fs::path selfExe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find the vidmap executable (/proc/self/exe): " + ec.message());
  return p;
}

// The environment of a child: ours, with CUDA_VISIBLE_DEVICES and OMP_NUM_THREADS adjusted.
std::vector<std::string> childEnvironment(const RunnerOptions& o) {
  std::vector<std::string> env;
  bool hasOmp = false;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (o.setCudaDevices && kv.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) continue;
    if (kv.rfind("OMP_NUM_THREADS=", 0) == 0) hasOmp = true;
    env.push_back(kv);
  }
  if (o.setCudaDevices) env.push_back("CUDA_VISIBLE_DEVICES=" + o.cudaDevices);
  if (o.ompThreads > 0 && !hasOmp) env.push_back("OMP_NUM_THREADS=" + std::to_string(o.ompThreads));
  return env;
}

// The error the child printed ("vidmap: error: ..."), else the last lines of its output.
std::string failureMessage(const std::string& output) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(start, end - start);
    // A progress bar redraws with carriage returns: keep what was drawn last.
    const std::size_t cr = line.rfind('\r');
    if (cr != std::string::npos) line = line.substr(cr + 1);
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    for (const char* prefix : {"vidmap: error: ", "vidmap: unexpected error: "})
      if (it->rfind(prefix, 0) == 0) return it->substr(std::strlen("vidmap: "));
  std::string tail;
  const std::size_t from = lines.size() > 10 ? lines.size() - 10 : 0;
  for (std::size_t i = from; i < lines.size(); ++i) tail += (tail.empty() ? "" : "\n") + lines[i];
  return tail;
}

struct ChildResult {
  int exitCode = 0;  // 128 + signal when signalled
  int signal = 0;
  std::string output;  // the last 64 KiB
};

ChildResult runChild(const std::vector<std::string>& argv, const RunnerOptions& o) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0)
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const std::vector<std::string> env = childEnvironment(o);
  std::vector<char*> cenv;
  for (const std::string& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  int errPipe[2];  // the child reports a failed exec through it
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }

  // fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: a child outlives neither the
  // batch process nor its lock (a killed `--all` leaves no reconstruct running unlocked).
  // Signals are blocked across fork so that our handlers never run in the child.
  sigset_t all, none, old;
  sigfillset(&all);
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    ::dup2(pipefd[1], 1);
    ::dup2(pipefd[1], 2);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(cargv[0], cargv.data(), cenv.data());
    const int e = errno;
    if (::write(errPipe[1], &e, sizeof e) < 0) {
    }
    ::_exit(127);
  }
  const int forkErrno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(pipefd[1]);
  ::close(errPipe[1]);
  if (pid < 0) {
    ::close(pipefd[0]);
    ::close(errPipe[0]);
    throw Error("cannot start " + argv[0] + ": " + std::strerror(forkErrno));
  }
  int execErrno = 0;
  ssize_t got;
  while ((got = ::read(errPipe[0], &execErrno, sizeof execErrno)) < 0 && errno == EINTR) {
  }
  ::close(errPipe[0]);
  if (got == static_cast<ssize_t>(sizeof execErrno)) {
    ::close(pipefd[0]);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw Error("cannot start " + argv[0] + ": " + std::strerror(execErrno));
  }
  const int slot = claimSlot(pid);
  // A stop requested just before the slot was claimed would have missed this child.
  if (const int sig = gStopSignal.load()) ::kill(pid, sig);

  ChildResult r;
  std::string pending;  // a partial line waiting for its end (for the prefix)
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.output.append(buf, static_cast<std::size_t>(n));
    if (r.output.size() > (1 << 17)) r.output.erase(0, r.output.size() - (1 << 16));
    if (o.outputPrefix.empty()) {
      if (::write(2, buf, static_cast<std::size_t>(n)) < 0) {
      }
      continue;
    }
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      const std::string line = o.outputPrefix + pending.substr(0, nl + 1);
      if (::write(2, line.data(), line.size()) < 0) {
      }
      pending.erase(0, nl + 1);
    }
  }
  if (!pending.empty()) {
    const std::string line = o.outputPrefix + pending + "\n";
    if (::write(2, line.data(), line.size()) < 0) {
    }
  }
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (slot >= 0) gChildren[slot].store(0);
  if (WIFEXITED(status)) {
    r.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
    r.exitCode = 128 + r.signal;
  }
  return r;
}

}  // namespace

const char* toString(ItemOutcome o) {
  switch (o) {
    case ItemOutcome::kDone:
      return "done";
    case ItemOutcome::kSkipped:
      return "skipped";
    case ItemOutcome::kFailed:
      return "failed";
    case ItemOutcome::kBusy:
      return "busy";
    case ItemOutcome::kInterrupted:
      return "interrupted";
  }
  return "?";
}

void requestStop(int sig) {
  int expected = 0;
  gStopSignal.compare_exchange_strong(expected, sig > 0 ? sig : SIGTERM);
  for (int i = 0; i < kMaxChildren; ++i) {
    const pid_t pid = gChildren[i].load();
    if (pid > 0) ::kill(pid, sig > 0 ? sig : SIGTERM);
  }
}

bool stopRequested() { return gStopSignal.load() != 0; }

void clearStop() { gStopSignal.store(0); }

std::vector<std::string> reconstructArgv(const BatchItem& item, const fs::path& program) {
  std::vector<std::string> argv{program.string(), "reconstruct", item.input.string(), "-o",
                                item.output.string()};
  argv.insert(argv.end(), item.args.begin(), item.args.end());
  return argv;
}

ItemResult runItem(const BatchItem& item, const RunnerOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  ItemResult res;
  if (stopRequested()) {
    res.outcome = ItemOutcome::kInterrupted;
    res.message = "stopped before it started";
    return res;
  }
  ItemLock lock(item.output);
  if (!lock.held()) {
    res.outcome = ItemOutcome::kBusy;
    res.message = "another process runs this item (lock " + lockPath(item.output).string() +
                  ": pid " +
                  (lock.holder().empty() ? std::to_string(lock.holderPid()) : lock.holder()) + ")";
    return res;
  }
  std::string why;
  if (isCompleteOutput(item.output, options.deepCheck, &why)) {
    res.outcome = ItemOutcome::kSkipped;
    res.message = "complete: " + (item.output / "run.json").string();
    return res;
  }
  removeStaleTemporaries(item.output);
  int attempts = 0;
  try {
    if (const auto prior = readFailure(item.output)) attempts = prior->attempts;
  } catch (const Error&) {
    attempts = 1;  // an unreadable failed.json still was a failure
  }
  std::error_code ec;
  fs::remove(failurePath(item.output), ec);
  if (fs::is_directory(item.output, ec) && fs::is_empty(item.output, ec))
    fs::remove(item.output, ec);

  const fs::path program = options.program.empty() ? selfExe() : options.program;
  const std::vector<std::string> argv = reconstructArgv(item, program);
  const ChildResult child = runChild(argv, options);
  res.exitCode = child.exitCode;
  res.seconds = elapsed();

  // A child stopped by the signal that stops the batch (scancel signals every process of the
  // step, so the child may see it first and exit 130/143 after a clean stop) stays pending.
  const bool childInterrupted = child.signal != 0 || child.exitCode == 130 || child.exitCode == 143;
  // (The batch's own signal may land a moment after the child's: wait up to a second for it.)
  for (int i = 0; childInterrupted && !stopRequested() && i < 20; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (childInterrupted && stopRequested()) {
    res.outcome = ItemOutcome::kInterrupted;
    res.message = "interrupted by signal " + std::to_string(child.signal);
    return res;
  }
  if (child.exitCode == 0) {
    if (isCompleteOutput(item.output, options.deepCheck, &why)) {
      res.outcome = ItemOutcome::kDone;
      return res;
    }
    res.message = "reconstruct exited 0 but the output is not a complete model: " + why;
    res.exitCode = 1;
  } else if (child.signal != 0) {
    res.message = std::string("killed by signal ") + std::to_string(child.signal) + " (" +
                  strsignal(child.signal) + ")";
    const std::string tail = failureMessage(child.output);
    if (!tail.empty()) res.message += "; last output:\n" + tail;
  } else {
    res.message = failureMessage(child.output);
    if (res.message.empty()) res.message = "exit status " + std::to_string(child.exitCode);
  }
  res.outcome = ItemOutcome::kFailed;
  FailureRecord f;
  f.command = shellJoin(argv);
  f.exitCode = res.exitCode;
  f.message = res.message;
  f.time = utcNowIso();
  f.seconds = res.seconds;
  f.attempts = attempts + 1;
  f.host = hostName();
  // A complete output is never replaced by a failure record; anything else (an output folder
  // reconstruct refused, e.g. not empty) receives failed.json beside what it holds.
  if (!isCompleteOutput(item.output, false)) writeFailure(item.output, f);
  return res;
}

std::vector<std::string> visibleGpus(int deviceCount) {
  std::vector<std::string> gpus;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string s = v, cur;
    for (char c : s + ",") {
      if (c == ',') {
        if (!cur.empty()) gpus.push_back(cur);
        cur.clear();
      } else if (c != ' ') {
        cur += c;
      }
    }
    if (static_cast<int>(gpus.size()) > deviceCount) gpus.resize(deviceCount);
    return gpus;
  }
  for (int i = 0; i < deviceCount; ++i) gpus.push_back(std::to_string(i));
  return gpus;
}

RunAllResult runAll(const BatchManifest& manifest, const RunAllOptions& options,
                    const std::function<void(const BatchItem&, const ItemResult&)>& onItem) {
  require(options.jobs >= 1, "--jobs must be at least 1, got " + std::to_string(options.jobs));
  const auto t0 = std::chrono::steady_clock::now();
  RunAllResult all;
  all.items.resize(manifest.items.size());
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;
  auto worker = [&](int slot) {
    RunnerOptions ro = options.runner;
    if (options.hideGpus) {
      ro.setCudaDevices = true;
      ro.cudaDevices = "";
    } else if (!options.gpus.empty()) {
      ro.setCudaDevices = true;
      ro.cudaDevices = options.gpus[slot % options.gpus.size()];
    }
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= manifest.items.size()) return;
      const BatchItem& item = manifest.items[i];
      RunnerOptions itemOptions = ro;
      if (options.jobs > 1) itemOptions.outputPrefix = "[" + std::to_string(item.index) + "] ";
      ItemResult r;
      try {
        r = runItem(item, itemOptions);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mutex);
        if (!error) error = std::current_exception();
        requestStop(SIGTERM);
        return;
      }
      std::lock_guard<std::mutex> lk(mutex);
      all.items[i] = r;
      switch (r.outcome) {
        case ItemOutcome::kDone:
          ++all.done;
          break;
        case ItemOutcome::kSkipped:
          ++all.skipped;
          break;
        case ItemOutcome::kFailed:
          ++all.failed;
          break;
        case ItemOutcome::kBusy:
          ++all.busy;
          break;
        case ItemOutcome::kInterrupted:
          ++all.interrupted;
          break;
      }
      if (onItem) onItem(item, r);
    }
  };
  const int jobs = std::min<int>(options.jobs, static_cast<int>(manifest.items.size()));
  std::vector<std::thread> threads;
  for (int w = 0; w < jobs; ++w) threads.emplace_back(worker, w);
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  all.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return all;
}

}  // namespace vidmap::pipeline
