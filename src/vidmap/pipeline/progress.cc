#include "vidmap/pipeline/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace vidmap::pipeline {

bool stderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(long total, bool enabled)
    : total_(total), enabled_(enabled && stderrIsTerminal()) {
  start_ = last_ = std::chrono::steady_clock::now();
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(long done, const std::string& status, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
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
}

void ProgressBar::finish() {
  if (enabled_ && drawn_) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  drawn_ = false;
}

}  // namespace vidmap::pipeline
