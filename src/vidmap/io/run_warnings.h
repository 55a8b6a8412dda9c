// Warnings derived from a run record, worded once for every place that shows them: the
// terminal summary (pipeline/reconstruct.cc), report.html (report/report_html.cc) and the batch
// status (pipeline/batch_item.cc). Each reads the same recorded fields.
#pragma once

#include <cmath>
#include <sstream>
#include <string>

namespace vidmap::io {

// counts.focal_undetermined (0 or 1): an unknown camera whose focal length a model does not
// determine (pipeline/focal_check.h); metrics.focal_rel_uncertainty: sigma_f / f of the least
// determined model, capped at 1000 (a flat cost).
inline constexpr const char* kFocalUndeterminedCount = "focal_undetermined";
inline constexpr const char* kFocalRelUncertaintyMetric = "focal_rel_uncertainty";
// counts.focal_suspect: models whose focal length is undetermined although their views turn by
// pipeline::FocalCheckOptions::minTurnDeg or more (possibly wrong models); metrics.focal_turn_deg:
// the largest turn among them (0: none).
inline constexpr const char* kFocalSuspectCount = "focal_suspect";
inline constexpr const char* kFocalTurnMetric = "focal_turn_deg";

inline std::string focalUndeterminedWarning(double relUncertainty, double suspectTurnDeg = 0) {
  std::ostringstream o;
  o << (suspectTurnDeg > 0 ? "a model may be wrong: its focal length is not determined ("
                           : "the motion does not determine the focal length (");
  if (std::isfinite(relUncertainty) && relUncertainty > 0 && relUncertainty < 1e3) {
    o.precision(2);
    o << "+-" << 100 * relUncertainty << " % by the bundle adjustment's cost";
  } else {
    o << "the bundle adjustment's cost does not change with it";
  }
  if (suspectTurnDeg > 0) {
    o.precision(3);
    o << ") although its views turn by " << suspectTurnDeg
      << " degrees, which determines it in a right model (a focal length far from the guess of "
         "1.2 x the width, e.g. a narrow field of view); pass --camera if you know it";
    return o.str();
  }
  o << ": a translation with little rotation, e.g. forward); pass --camera if you know it";
  return o.str();
}

}  // namespace vidmap::io
