// vidmap: turn a video into cameras and a 3D map. Errors end the tool with one line that
// names what is wrong and exit status 1; nothing half written is left behind.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"

namespace {

// OpenMP's default wait policy spins idle threads for a while before they sleep; between the
// many short parallel loops of a reconstruction that burnt 4x the CPU time and made the run
// 3.5x slower on a shared 2-core machine (docs/benchmarks.md, "OpenMP wait policy"). The
// policy is read once, when the OpenMP runtime initialises, which for libgomp is a shared
// library constructor that runs before main(): so it is set from the executable's
// .preinit_array, which the dynamic loader runs before any library's constructors. A value
// the user set is kept (OMP_WAIT_POLICY=active brings the spinning back).
void passiveOpenMpWait(int, char**, char**) { setenv("OMP_WAIT_POLICY", "passive", 0); }

#if defined(__linux__) && !defined(VIDMAP_NO_PREINIT)
__attribute__((section(".preinit_array"),
               used)) void (*const kPassiveOpenMpWait)(int, char**, char**) = passiveOpenMpWait;
#endif

}  // namespace

int main(int argc, char** argv) {
#if !defined(__linux__) || defined(VIDMAP_NO_PREINIT)
  passiveOpenMpWait(argc, argv, nullptr);  // runtimes that read it lazily (LLVM's libomp)
#endif
  CLI::App app{"vidmap: a video to cameras and a 3D map, on the GPU or the CPU"};
  app.require_subcommand(1);
  vidmap::cli::addInfoCommand(app);
  vidmap::cli::addTrackCommand(app);
  vidmap::cli::addSynthCommand(app);
  vidmap::cli::addReconstructCommand(app);
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
  } catch (const vidmap::Error& e) {
    std::fprintf(stderr, "vidmap: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vidmap: unexpected error: %s\n", e.what());
    return 1;
  }
  return 0;
}
