// vidmap: turn a video into cameras and a 3D map. Errors end the tool with one line that
// names what is wrong and exit status 1; nothing half written is left behind.
#include <cstdio>
#include <exception>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"

int main(int argc, char** argv) {
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
