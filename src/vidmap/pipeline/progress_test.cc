// The progress line off a terminal: plain lines (no carriage returns or escape codes) that a
// log or CI keeps, at most one per interval; endProgressLine writes nothing when no bar is
// open.
#include "vidmap/pipeline/progress.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "vidmap/core/temp_dir.h"

namespace vidmap::pipeline {
namespace {

// Runs f with stderr sent to a file; returns what it wrote.
template <class F>
std::string captureStderr(F&& f) {
  TempDir d("progress");
  const std::string path = (d / "err.txt").string();
  std::fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  FILE* file = std::fopen(path.c_str(), "w");
  dup2(fileno(file), STDERR_FILENO);
  f();
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::fclose(file);
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Progress, OffATerminalPrintsPlainLinesAtTheInterval) {
  const std::string every = captureStderr([] {
    ProgressBar bar(10, true, 0.0);  // no interval: every update logs
    EXPECT_FALSE(stderrIsTerminal());
    bar.update(1, "a");
    bar.update(2, "b");
    bar.update(3, "c", true);
    bar.finish();
    endProgressLine();  // nothing open: nothing written
  });
  EXPECT_EQ(every.find('\r'), std::string::npos);
  EXPECT_EQ(every.find('\033'), std::string::npos);
  EXPECT_NE(every.find("vidmap: 1/10 frames  a"), std::string::npos) << every;
  EXPECT_NE(every.find("vidmap: 3/10 frames  c"), std::string::npos) << every;
  EXPECT_EQ(std::count(every.begin(), every.end(), '\n'), 3) << every;

  const std::string quiet = captureStderr([] {
    ProgressBar bar(10, true);  // a run shorter than the interval logs nothing
    for (int i = 0; i < 100; ++i) bar.update(i, "x");
    bar.update(100, "x", true);
  });
  EXPECT_EQ(quiet, "");
  const std::string off = captureStderr([] {
    ProgressBar bar(10, false, 0.0);
    bar.update(1, "x", true);
  });
  EXPECT_EQ(off, "");
}

}  // namespace
}  // namespace vidmap::pipeline
