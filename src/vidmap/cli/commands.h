// Subcommands of the `vidmap` tool; each lives in its own cmd_<name>.cc and registers itself
// on the app. main.cc lists them in the order `vidmap --help` shows.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace vidmap::cli {

// The command line as the user typed it: argv, each word quoted as a POSIX shell needs it
// (pipeline::shellQuote), so that pasting it into a shell runs the same command. Set by main()
// before the subcommands run; their run records take it as `command`.
std::string& typedCommandLine();

void addInfoCommand(CLI::App& app);
void addTrackCommand(CLI::App& app);
void addSynthCommand(CLI::App& app);
void addReconstructCommand(CLI::App& app);
void addDenseCommand(CLI::App& app);
void addBatchCommands(CLI::App& app);  // batch, batch-summary
void addExportCommand(CLI::App& app);
void addReportCommand(CLI::App& app);

}  // namespace vidmap::cli
