// Progress on stderr. On a terminal: a one-line bar redrawn in place. Off a terminal (logs,
// CI, pipes): a plain line every few seconds, with no control characters. Silent when
// disabled.
#pragma once

#include <chrono>
#include <string>

namespace vidmap::pipeline {

class ProgressBar {
 public:
  static constexpr double kLogSeconds = 5;
  // total: the expected number of frames, or <= 0 when unknown (then no bar, only counts).
  ProgressBar(long total, bool enabled, double logSeconds = kLogSeconds);
  ~ProgressBar();
  // Redraws at most 10 times a second on a terminal (and always when force); off a terminal
  // prints a line at most every logSeconds.
  void update(long done, const std::string& status, bool force = false);
  // Ends the line.
  void finish();
  bool active() const { return enabled_; }

 private:
  long total_;
  bool enabled_, terminal_;
  double logSeconds_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// Ends the progress line being drawn on the terminal, if any, so that a message printed next
// (an interruption's) starts on a line of its own. Async-signal-safe (one write(2) and a
// lock-free atomic): a SIGINT/SIGTERM handler may call it.
void endProgressLine();

// True when stderr is a terminal.
bool stderrIsTerminal();

}  // namespace vidmap::pipeline
