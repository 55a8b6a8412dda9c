// `vidmap info`: the build (version, commit, options) and the devices this binary can use.
#include <cstdio>

#include "vidmap/cli/commands.h"
#include "vidmap/core/build_info.h"
#include "vidmap/core/parallel.h"

namespace vidmap::cli {

void addInfoCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Print the build and the devices");
  cmd->callback([] {
    std::printf("vidmap %s (commit %s, %s, %s)\n", build::kVersion, build::kGitCommit,
                build::kBuildType, build::kCompiler);
    std::printf("  CUDA backend: %s", build::kCuda ? "built" : "not built");
    if (build::kCuda)
      std::printf(" (architectures %s%s)", build::kCudaArchitectures,
                  build::kCudaNoFma ? ", -fmad=false" : "");
    std::printf("\n  video decode (FFmpeg): %s\n", build::kFfmpeg ? "yes" : "no");
    std::printf("  CPU threads: %d (OpenMP %s)\n", maxThreads(), build::kOpenMp ? "on" : "off");
  });
}

}  // namespace vidmap::cli
