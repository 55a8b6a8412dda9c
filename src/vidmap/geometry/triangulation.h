// Triangulation of points from calibrated views.
// - Two views, optimal: P. Lindstrom, "Triangulation made easy", CVPR 2010 (niter2): the
//   smallest correction of both normalized points onto the epipolar constraint, then the exact
//   intersection of the corrected rays.
// - Two views, midpoint: the middle of the shortest segment between the rays.
// - Several views: the linear (DLT) method of Hartley and Zisserman, Multiple View Geometry,
//   section 12.2, in normalized coordinates.
// triangulateTrack adds the checks the mapper needs: positive depth, reprojection error and the
// triangulation angle (the largest angle between two viewing rays).
#pragma once

#include <optional>
#include <vector>

#include "vidmap/geometry/types.h"

namespace vidmap::geometry {

// Midpoint of two rays given by camera poses and normalized points (x, y).
std::optional<Vec3> triangulateMidpoint(const Pose& p1, const Pose& p2, const Vec2& x1,
                                        const Vec2& x2);

// Lindstrom's optimal two-view triangulation (normalized points).
std::optional<Vec3> triangulateOptimal(const Pose& p1, const Pose& p2, const Vec2& x1,
                                       const Vec2& x2);

// Lindstrom's niter2 correction alone: x1c, x2c satisfy (x2c,1)^T E (x1c,1) = 0.
void correctToEpipolar(const Mat3& E, const Vec2& x1, const Vec2& x2, Vec2* x1c, Vec2* x2c);

// Linear triangulation from two or more views (normalized points).
std::optional<Vec3> triangulateDlt(const std::vector<Pose>& poses, const Vec2List& xn);

// The angle in radians at X between the rays from two camera centres.
double triangulationAngle(const Vec3& c1, const Vec3& c2, const Vec3& X);

struct TriangulationOptions {
  double max_error_px = 4.0;   // reprojection error in every view
  double min_angle_deg = 1.5;  // the largest angle between two viewing rays
  void check() const;
};

struct TrackObservation {
  Pose pose;
  Pinhole camera;
  Vec2 pixel;
};

enum class TriangulationStatus {
  kOk,
  kTooFewViews,
  kDegenerate,
  kBehindCamera,
  kLargeError,
  kSmallAngle
};
const char* toString(TriangulationStatus s);

struct TrackTriangulation {
  TriangulationStatus status = TriangulationStatus::kDegenerate;
  Vec3 X = Vec3::Zero();
  double max_error_px = 0;  // largest reprojection error over the views
  double angle_deg = 0;     // largest angle between two viewing rays
  bool ok() const { return status == TriangulationStatus::kOk; }
};

// DLT over all observations (optimal two-view when there are two), then the checks: the
// arithmetic of triangulation_kernels.h, shared with triangulateBatch and its CUDA kernel
// (triangulation_batch.h), in the order of the Eigen forms: the two-view point is
// triangulateOptimal's and the multi-view point triangulateDlt's, bit for bit.
TrackTriangulation triangulateTrack(const std::vector<TrackObservation>& obs,
                                    const TriangulationOptions& options = {});

}  // namespace vidmap::geometry
