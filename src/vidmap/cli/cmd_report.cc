// `vidmap report OUTDIR`: writes OUTDIR/report.html again from the folder's models and run
// record (vidmap/report/report_html.h), e.g. with a ground-truth trajectory drawn over it.
#include <cstdio>
#include <memory>
#include <string>

#include "vidmap/cli/commands.h"
#include "vidmap/core/error.h"
#if defined(VIDMAP_HAVE_REPORT)
#include "vidmap/report/report_html.h"
#endif

namespace vidmap::cli {

void addReportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report", "Write the HTML run report (OUTDIR/report.html) of a reconstruction folder");
  struct Args {
    std::string dir, output, groundTruth;
    std::int64_t maxPoints = 200000;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("OUTDIR", args->dir, "Folder written by vidmap reconstruct")->required();
  cmd->add_option("-o,--output", args->output, "Output file (default OUTDIR/report.html)");
  cmd->add_option("--groundtruth", args->groundTruth,
                  "TUM trajectory (camera to world) aligned and drawn over the model");
  cmd->add_option("--max-points", args->maxPoints, "Points drawn in the 3D view (subsampled)")
      ->capture_default_str();
  cmd->callback([args] {
#if defined(VIDMAP_HAVE_REPORT)
    report::ReportOptions o;
    o.groundTruth = args->groundTruth;
    o.maxPoints = args->maxPoints;
    const auto path = report::writeReport(args->dir, o, args->output);
    std::printf("wrote %s\n", path.string().c_str());
#else
    throw Error("report: this vidmap was built without nlohmann-json (no HTML report)");
#endif
  });
}

}  // namespace vidmap::cli
