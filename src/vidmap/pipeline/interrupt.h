// Clean interruption of a long run (Ctrl-C, `kill`): SIGINT and SIGTERM only set a flag, the
// run checks it at each frame and ends by throwing Interrupted, so the temporary output folder
// is removed by its destructor and the destination stays as it was. A second signal ends the
// process at once (the default action), as a user pressing Ctrl-C twice expects. The tool
// exits with 128 + the signal number (130 for SIGINT, 143 for SIGTERM), as shells do.
#pragma once

#include <string>

#include "vidmap/core/error.h"

namespace vidmap::pipeline {

class Interrupted : public Error {
 public:
  Interrupted(int signal, const std::string& what) : Error(what), signal_(signal) {}
  int signal() const { return signal_; }
  int exitCode() const { return 128 + signal_; }

 private:
  int signal_;
};

// Routes SIGINT and SIGTERM to the flag (restartable system calls, one-shot handlers). The
// `vidmap` tool installs them; a program using the library decides for itself.
void installInterruptHandlers();
// The signal received since the handlers were installed, or 0.
int interruptSignal();
// "SIGINT", "SIGTERM" or "signal N".
std::string signalName(int signal);
// Throws Interrupted("interrupted by SIGINT " + where) when a signal was received.
void throwIfInterrupted(const std::string& where);

}  // namespace vidmap::pipeline
