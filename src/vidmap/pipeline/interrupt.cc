#include "vidmap/pipeline/interrupt.h"

#include <signal.h>

#include <csignal>

namespace vidmap::pipeline {

namespace {

volatile std::sig_atomic_t gSignal = 0;

extern "C" void onSignal(int sig) { gSignal = sig; }

}  // namespace

void installInterruptHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  // Blocking reads and waits resume after the handler; the next signal is not caught.
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interruptSignal() { return gSignal; }

std::string signalName(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

void throwIfInterrupted(const std::string& where) {
  const int s = gSignal;
  if (s != 0) throw Interrupted(s, "interrupted by " + signalName(s) + " " + where);
}

}  // namespace vidmap::pipeline
