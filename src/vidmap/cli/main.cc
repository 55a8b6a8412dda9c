// vidmap: turn a video into cameras and a 3D map. Errors end the tool with one line that
// names what is wrong and exit status 1; nothing half written is left behind. SIGINT and
// SIGTERM during a reconstruction end it with one line and status 130 or 143.
#include <cstdio>
#include <exception>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"
#include "vidmap/pipeline/interrupt.h"

int main(int argc, char** argv) {
  CLI::App app{"vidmap: a video to cameras and a 3D map, on the GPU or the CPU"};
  app.require_subcommand(1);
  vidmap::cli::addInfoCommand(app);
  vidmap::cli::addTrackCommand(app);
  vidmap::cli::addSynthCommand(app);
  vidmap::cli::addReconstructCommand(app);
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
