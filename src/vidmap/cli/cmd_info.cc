// `vidmap info`: the build (version, commit, options) and the devices this binary can use.
// `vidmap info --json` prints the same as a run record (schema 1) with no stages.
#include <cstdio>
#include <memory>

#include "vidmap/cli/commands.h"
#include "vidmap/core/build_info.h"
#include "vidmap/core/parallel.h"
#include "vidmap/gpu/device.h"
#include "vidmap/io/run_record.h"

namespace vidmap::cli {

namespace {

void printInfo() {
  std::printf("vidmap %s (commit %s, %s, %s)\n", build::kVersion, build::kGitCommit,
              build::kBuildType, build::kCompiler);
  std::printf("  CUDA backend: %s", build::kCuda ? "built" : "not built");
  if (build::kCuda)
    std::printf(" (architectures %s%s; runtime %s, driver %s)", build::kCudaArchitectures,
                build::kCudaNoFma ? ", -fmad=false" : "",
                gpu::versionString(gpu::runtimeVersion()).c_str(),
                gpu::versionString(gpu::driverVersion()).c_str());
  std::printf("\n  video decode (FFmpeg): %s\n", build::kFfmpeg ? "yes" : "no");
  io::MachineInfo m = io::MachineInfo::current();
  std::printf("  machine: %s, %s, %d CPU threads (OpenMP %s, %d used), %.1f GiB\n",
              m.hostname.c_str(), m.cpuModel.c_str(), m.cpuCores, build::kOpenMp ? "on" : "off",
              maxThreads(), m.memoryBytes / 1073741824.0);
  auto devices = gpu::listDevices();
  if (devices.empty()) {
    std::printf("  GPU devices: none (%s)\n", gpu::noDeviceReason().c_str());
    return;
  }
  std::printf("  GPU devices: %zu\n", devices.size());
  for (const auto& d : devices) std::printf("    %s\n", gpu::describe(d).c_str());
}

}  // namespace

void addInfoCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Print the build and the devices");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print a run record (JSON, no stages) instead of text");
  cmd->callback([json] {
    if (*json) {
      io::RunRecord record;
      record.setCommand("vidmap info --json");
      std::fputs(record.toJson().c_str(), stdout);
    } else {
      printInfo();
    }
  });
}

}  // namespace vidmap::cli
