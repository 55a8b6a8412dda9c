// Two-view verification as the mapper needs it (after COLMAP's estimators/two_view_geometry):
// robust E (five-point), F (seven-point) and H (four-point) on the same correspondences, the
// choice between them by inlier counts (calibrated when E explains at least 95% of F's inliers;
// planar or pure rotation when H explains more than 80%), the relative pose with the
// cheirality test and LM refinement, and the inliers triangulated with depth, reprojection and
// angle checks. A pair whose median triangulation angle is below the threshold while H fits is
// a pure rotation (panoramic): its rotation comes from H and its translation is zero.
#pragma once

#include <string>
#include <vector>

#include "vidmap/geometry/ransac.h"
#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

enum class TwoViewConfig {
  kDegenerate,    // no model with enough inliers (or too few correspondences)
  kCalibrated,    // E fits: general motion, pose from E
  kUncalibrated,  // only F fits: pose from K2^T F K1 (intrinsics doubtful)
  kPlanar,        // H fits most inliers, enough parallax: plane, pose from E
  kPanoramic,     // H fits, no parallax: pure rotation, t = 0
};
const char* toString(TwoViewConfig c);

struct TwoViewOptions {
  double max_error_px = 4.0;  // RANSAC inlier threshold (pixels)
  double confidence = 0.999;
  int min_iterations = 20;
  int max_iterations = 5000;
  std::uint64_t seed = 0x5eed;
  int min_num_inliers = 15;
  double min_e_f_inlier_ratio = 0.95;
  double max_h_inlier_ratio = 0.8;
  double min_triangulation_angle_deg = 1.0;  // median angle below: panoramic; points below: dropped
  double loss_scale_px = 1.0;  // Cauchy scale of the final pose refinement (0: least squares)
  bool estimate_fundamental = true;
  bool estimate_homography = true;  // also the rotation (panoramic) test
  // When F is estimated: for every pair (the self-calibration of an unknown focal length
  // reads F), or only when E fails (fewer than min_num_inliers inliers, or less than
  // e_fail_ratio of the correspondences: a wrong focal length lets E explain only part of
  // them): a camera whose focal length is known or self-calibrated needs F only as the
  // fallback, and a pair that E explains is calibrated without comparing it to F.
  // kWhenEssentialExplainsPart, the mapper's once the focal length is known or self-calibrated:
  // F only when E found a model with min_num_inliers that explains less than e_fail_ratio of
  // the correspondences (a doubtful focal length), not when E found none: F's two more degrees
  // of freedom fit chance correspondences of such a pair (on TUM fr1-desk, 15-18 of 40 at
  // median angles of 120-150 deg), and its RANSAC (7 points a sample) was the largest part of
  // verifying the pairs no model explains (docs/benchmarks.md, "The mapper's host work on the H200,
  // pairs no E explains, and a 10 Hz list read as sparse").
  enum class Fundamental { kAlways, kWhenEssentialFails, kWhenEssentialExplainsPart };
  Fundamental fundamental = Fundamental::kAlways;
  double e_fail_ratio = 0.5;
  // With an E hypothesis (essential_prior), E's RANSAC draws at least this many samples and
  // then stops by the adaptive rule on the prior's inlier ratio (at `confidence`).
  int prior_min_iterations = 1;
  // H as the plane and rotation test only, once E has succeeded without F: the model choice
  // reads H only as "H explains more than max_h_inlier_ratio of E's inliers", so H's RANSAC
  // stops after the samples that find such an H at `confidence` (the adaptive count at that
  // inlier ratio, at least min_iterations) instead of searching on, on a pair with parallax,
  // for the best of the homographies that fail the test (hundreds of samples at low H inlier
  // ratios). A pair whose H passes runs as before. Off while the focal length is unknown: the
  // self-calibration reads H's inliers of every pair.
  bool homography_test_only = false;
  // E's, F's and H's RANSACs end once a model with min_num_inliers would have been found at
  // `confidence` while none has been (RansacOptions::min_inliers): a pair that no model
  // explains no longer runs to max_iterations three times.
  bool stop_below_min_inliers = true;
  void check() const;
};

struct TwoViewGeometry {
  TwoViewConfig config = TwoViewConfig::kDegenerate;
  std::string message;  // why the pair failed, or a note on the choice
  Mat3 E = Mat3::Zero(), F = Mat3::Zero(), H = Mat3::Zero();  // F and H in pixels
  Pose relative;                  // camera 1 -> camera 2, |t| = 1 (t = 0 when panoramic)
  std::vector<char> inlier_mask;  // inliers of the chosen model
  int num_inliers = 0;
  int num_e_inliers = 0, num_f_inliers = 0, num_h_inliers = 0;
  std::vector<int> point_indices;  // triangulated inliers that pass the checks ...
  Vec3List points;                 // ... and their 3D points in camera 1's frame
  double median_triangulation_angle_deg = 0;
  bool success() const { return config != TwoViewConfig::kDegenerate; }
};

// pts1[i] <-> pts2[i] in pixels of two undistorted pinhole cameras. Throws vidmap::Error for
// mismatched sizes, non-finite points, bad intrinsics or options; too few or degenerate
// correspondences give config kDegenerate with a message. `essential_prior`: an E known for
// the pair (x2^T E x1 = 0 in normalised coordinates; the guide's E of guided matching), the
// first hypothesis of E's RANSAC, so the pair is not searched from scratch a second time.
TwoViewGeometry estimateRelativePose(const Vec2List& pts1, const Vec2List& pts2,
                                     const Pinhole& cam1, const Pinhole& cam2,
                                     const TwoViewOptions& options = {},
                                     const Mat3* essential_prior = nullptr);

// The essential-matrix RANSAC alone (normalized points, threshold in normalized units): for a
// guide band or a caller that needs no model choice. The model is refined on the inliers.
RansacResult<Mat3> estimateEssential(const Vec2List& x1n, const Vec2List& x2n,
                                     const RansacOptions& options);

}  // namespace vidmap::geometry
