#include "vidmap/pipeline/progress.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace vidmap::pipeline {

namespace {

// True while a bar is drawn on the terminal without its newline.
std::atomic<bool> lineOpen{false};
static_assert(std::atomic<bool>::is_always_lock_free, "endProgressLine must be signal-safe");

}  // namespace

bool stderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

void endProgressLine() {
  if (lineOpen.exchange(false)) {
    const ssize_t r = write(STDERR_FILENO, "\n", 1);
    (void)r;
  }
}

ProgressBar::ProgressBar(long total, bool enabled, double logSeconds)
    : total_(total), enabled_(enabled), terminal_(stderrIsTerminal()), logSeconds_(logSeconds) {
  start_ = last_ = std::chrono::steady_clock::now();
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(long done, const std::string& status, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(now - start_).count();
  if (!terminal_) {
    // A log line every few seconds; the final state is forced once, at the end.
    if (now - last_ < std::chrono::duration<double>(logSeconds_) && !(force && drawn_)) return;
    last_ = now;
    drawn_ = true;
    if (total_ > 0)
      std::fprintf(stderr, "vidmap: %ld/%ld frames  %s  %.1f s\n", done, total_, status.c_str(),
                   secs);
    else
      std::fprintf(stderr, "vidmap: %ld frames  %s  %.1f s\n", done, status.c_str(), secs);
    std::fflush(stderr);
    return;
  }
  if (!force && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  constexpr int kWidth = 24;
  std::string bar;
  if (total_ > 0) {
    const double f = std::clamp(static_cast<double>(done) / total_, 0.0, 1.0);
    const int full = static_cast<int>(f * kWidth);
    bar = "[" + std::string(full, '#') + std::string(kWidth - full, ' ') + "] ";
    std::fprintf(stderr, "\r\033[K%s%ld/%ld frames  %s  %.1f s", bar.c_str(), done, total_,
                 status.c_str(), secs);
  } else {
    std::fprintf(stderr, "\r\033[K%ld frames  %s  %.1f s", done, status.c_str(), secs);
  }
  std::fflush(stderr);
  drawn_ = true;
  lineOpen = true;
}

void ProgressBar::finish() {
  if (enabled_ && terminal_ && drawn_) endProgressLine();
  drawn_ = false;
}

}  // namespace vidmap::pipeline
