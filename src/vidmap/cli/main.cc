// vidmap: turn a video into cameras and a 3D map. Errors end the tool with one line that
// names what is wrong and exit status 1; nothing half written is left behind. SIGINT and
// SIGTERM during a reconstruction end it with one line and status 130 or 143.
#include <unistd.h>

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
