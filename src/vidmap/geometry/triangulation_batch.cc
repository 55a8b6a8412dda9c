#include "vidmap/geometry/triangulation_batch.h"

#include <algorithm>
#include <string>

#include "vidmap/core/check.h"
#include "vidmap/core/parallel.h"

namespace vidmap::geometry {

int TriangulationBatch::addView(const Pose& pose, const Pinhole& camera) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) views.push_back(pose.R(i, j));
  for (int i = 0; i < 3; ++i) views.push_back(pose.t(i));
  views.insert(views.end(), {camera.fx, camera.fy, camera.cx, camera.cy});
  return numViews() - 1;
}

int TriangulationBatch::addTrack(const int* views_of_track, const Vec2* pixels_of_track, int n) {
  for (int i = 0; i < n; ++i) {
    view_of.push_back(views_of_track[i]);
    pixels.push_back(pixels_of_track[i].x());
    pixels.push_back(pixels_of_track[i].y());
  }
  track_begin.push_back(static_cast<int>(view_of.size()));
  return numTracks() - 1;
}

int TriangulationBatch::maxTrackLength() const {
  int m = 0;
  for (int i = 0; i < numTracks(); ++i) m = std::max(m, track_begin[i + 1] - track_begin[i]);
  return m;
}

void TriangulationBatch::clear() {
  views.clear();
  track_begin.assign(1, 0);
  view_of.clear();
  pixels.clear();
}

void TriangulationBatch::check() const {
  require(!track_begin.empty() && track_begin[0] == 0 &&
              track_begin.back() == static_cast<int>(view_of.size()) &&
              pixels.size() == 2 * view_of.size() && views.size() % tri::kViewStride == 0,
          "TriangulationBatch: inconsistent sizes");
  for (int v : view_of)
    require(v >= 0 && v < numViews(), "TriangulationBatch: an observation names view " +
                                          std::to_string(v) + " of " + std::to_string(numViews()));
}

static_assert(static_cast<int>(TriangulationStatus::kOk) == tri::kStatusOk);
static_assert(static_cast<int>(TriangulationStatus::kTooFewViews) == tri::kStatusTooFewViews);
static_assert(static_cast<int>(TriangulationStatus::kDegenerate) == tri::kStatusDegenerate);
static_assert(static_cast<int>(TriangulationStatus::kBehindCamera) == tri::kStatusBehindCamera);
static_assert(static_cast<int>(TriangulationStatus::kLargeError) == tri::kStatusLargeError);
static_assert(static_cast<int>(TriangulationStatus::kSmallAngle) == tri::kStatusSmallAngle);

TrackTriangulation toTrackTriangulation(const tri::TrackResult& r) {
  TrackTriangulation t;
  t.status = static_cast<TriangulationStatus>(r.status);
  t.X = Vec3(r.X[0], r.X[1], r.X[2]);
  t.max_error_px = r.max_error_px;
  t.angle_deg = r.angle_deg;
  return t;
}

std::vector<TrackTriangulation> triangulateBatch(const TriangulationBatch& batch,
                                                 const TriangulationOptions& options) {
  options.check();
  batch.check();
  const int n = batch.numTracks();
  std::vector<TrackTriangulation> out(n);
  // Small batches (a video keyframe's few hundred tracks, ~1 us each) stay on this thread.
  const int chunk = 256;
  const int chunks = (n + chunk - 1) / chunk;
  const int longest = batch.maxTrackLength();
  auto run = [&](std::int64_t c) {
    std::vector<double> xn(2 * static_cast<size_t>(longest));
    const int end = std::min(n, static_cast<int>(c + 1) * chunk);
    for (int i = static_cast<int>(c) * chunk; i < end; ++i) {
      const int b = batch.track_begin[i];
      tri::TrackResult r;
      tri::triangulateTrack(batch.views.data(), batch.view_of.data() + b,
                            batch.pixels.data() + 2 * b, batch.track_begin[i + 1] - b,
                            options.max_error_px, options.min_angle_deg, xn.data(), &r);
      out[i] = toTrackTriangulation(r);
    }
  };
  if (chunks <= 1) {
    if (chunks == 1) run(0);
  } else {
    parallelForDynamic(chunks, run, 1);
  }
  return out;
}

}  // namespace vidmap::geometry
