// vidmap: turn a video into cameras and a 3D map. Errors end the tool with one line that
// names what is wrong and exit status 1; nothing half written is left behind. SIGINT and
// SIGTERM during a reconstruction end it with one line and status 130 or 143.
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"
#include "vidmap/pipeline/batch_manifest.h"
#include "vidmap/pipeline/interrupt.h"

namespace {

// OpenMP's default wait policy spins idle threads for a while before they sleep; between the
// many short parallel loops of a reconstruction that burnt several times the CPU time on a
// shared 2-core machine (docs/benchmarks.md, "OpenMP wait policy"). The policy is read once,
// when the runtime initialises, which for libgomp is a library constructor that runs before
// main(); setting it from main() is too late, and so is the executable's .preinit_array
// (libc's own initialisation, which runs after it, resets the environment). So when the user
// has not chosen a policy, vidmap sets OMP_WAIT_POLICY=passive and executes itself again (a
// few milliseconds); a policy the user set is kept (OMP_WAIT_POLICY=active: spinning).
#if defined(__linux__) && defined(_OPENMP) && !defined(VIDMAP_NO_REEXEC)
void passiveOpenMpWait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run with the default
}
#endif

// glibc gives blocks of 128 KiB and more their own mappings and hands freed memory back to the
// kernel; the next such block is then faulted in afresh, page by page. A reconstruction asks
// for the same large blocks again and again (each keyframe's products, 512 x 14683 floats on
// tum-fr1-xyz; SIFT's levels; the adjustments' arrays), mostly from threads other than the
// main one, whose arenas are trimmed as eagerly: on dev (a VM, where each fault is dear) that
// was 1.2 of xyz's 44 CPU s at 4 fps, all of it system time (docs/benchmarks.md, "CPU path: the
// serial wall of fr1-rpy at all frames"). Blocks up to glibc's cap for the mapping threshold
// (32 MiB) now come from the heap and stay with the process; the peak memory is unchanged.
void keepFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace

namespace vidmap::cli {
std::string& typedCommandLine() {
  static std::string line;
  return line;
}
}  // namespace vidmap::cli

int main(int argc, char** argv) {
#if defined(__linux__) && defined(_OPENMP) && !defined(VIDMAP_NO_REEXEC)
  passiveOpenMpWait(argv);
#endif
  keepFreedMemory();
  vidmap::cli::typedCommandLine() =
      vidmap::pipeline::shellJoin(std::vector<std::string>(argv, argv + argc));
  CLI::App app{"vidmap: a video to cameras and a 3D map, on the GPU or the CPU"};
  app.require_subcommand(1);
  vidmap::cli::addInfoCommand(app);
  vidmap::cli::addTrackCommand(app);
  vidmap::cli::addSynthCommand(app);
  vidmap::cli::addReconstructCommand(app);
  vidmap::cli::addDenseCommand(app);
  vidmap::cli::addBatchCommands(app);
  vidmap::cli::addExportCommand(app);
  vidmap::cli::addReportCommand(app);
  // An unknown command is named, with the list, instead of CLI11's generic complaint.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr,
                   "vidmap: error: unknown command '%s' (the commands: %s; see vidmap --help)\n",
                   argv[1], names.c_str());
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const vidmap::pipeline::Interrupted& e) {
    // 128 + the signal, as a shell reports a process the signal ended.
    std::fprintf(stderr, "vidmap: %s\n", e.what());
    return e.exitCode();
  } catch (const vidmap::Error& e) {
    std::fprintf(stderr, "vidmap: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vidmap: unexpected error: %s\n", e.what());
    return 1;
  }
  return 0;
}
