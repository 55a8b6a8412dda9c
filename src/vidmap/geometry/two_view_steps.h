// The steps of estimateRelativePose (two_view.h), shared with the batched verifier
// (two_view_batch.h), which runs the RANSACs of many pairs together: the setup (checks,
// normalised points, the RANSAC options of E and of F/H), the rule that asks for F, and the
// model choice, pose and triangulation from the three RANSAC results.
#pragma once

#include "vidmap/geometry/estimators.h"
#include "vidmap/geometry/two_view.h"

namespace vidmap::geometry::detail {

struct TwoViewSetup {
  int n = 0;
  Vec2List x1, x2;  // normalised
  double px_to_normalized = 0;
  RansacOptions e;   // E's RANSAC (normalised units; a prior's min_iterations when it has one)
  RansacOptions fh;  // F's and H's (pixels)
};

// Checks the input (throws vidmap::Error as estimateRelativePose); false with g->message when
// there are too few correspondences.
bool setupTwoView(const Vec2List& pts1, const Vec2List& pts2, const Pinhole& cam1,
                  const Pinhole& cam2, const TwoViewOptions& opt, bool has_prior, TwoViewSetup* s,
                  TwoViewGeometry* g);

// Whether F is estimated, given E's result (TwoViewOptions::fundamental).
bool needsFundamental(const TwoViewOptions& opt, int n, const RansacResult<Mat3R>& er);

// H's RANSAC options given E's result (TwoViewOptions::homography_test_only): the setup's,
// or with max_iterations cut to the samples that find an H passing the plane/rotation test.
RansacOptions homographyOptions(const TwoViewOptions& opt, const TwoViewSetup& s,
                                const RansacResult<Mat3R>& er);

// Whether H's options depend on E's result (H waits for E).
bool homographyWaitsForEssential(const TwoViewOptions& opt);

// The model choice, pose, inliers and triangulation from the RANSAC results (F's or H's
// unsuccessful when not run).
TwoViewGeometry finishTwoView(const Vec2List& pts1, const Vec2List& pts2, const Pinhole& cam1,
                              const Pinhole& cam2, const TwoViewOptions& opt, const TwoViewSetup& s,
                              const EssentialEstimator& eest, const RansacResult<Mat3R>& er,
                              const RansacResult<Mat3R>& fr, const RansacResult<Mat3R>& hr);

}  // namespace vidmap::geometry::detail
