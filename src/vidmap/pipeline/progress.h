// A one-line progress bar on the terminal (stderr), redrawn in place; silent when stderr is not
// a terminal (logs and pipes get no control characters) or when disabled.
#pragma once

#include <chrono>
#include <string>

namespace vidmap::pipeline {

class ProgressBar {
 public:
  // total: the expected number of frames, or <= 0 when unknown (then no bar, only counts).
  ProgressBar(long total, bool enabled);
  ~ProgressBar();
  // Redraws at most 10 times a second (and always when force).
  void update(long done, const std::string& status, bool force = false);
  // Ends the line.
  void finish();
  bool active() const { return enabled_; }

 private:
  long total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// True when stderr is a terminal.
bool stderrIsTerminal();

}  // namespace vidmap::pipeline
