// Many tracks triangulated in one call: the new tracks of a keyframe (sfm/triangulator.h), each
// track a list of (view, pixel) observations over a shared table of views. The per-track work
// is triangulateTrack's (triangulation_kernels.h, one source for host and device): the CPU loop
// here gives triangulateTrack's result bit for bit; the CUDA kernel (triangulation_batch_cuda.h)
// the CPU's for two-view tracks bit for bit with VIDMAP_CUDA_NO_FMA (angles within the device
// acos's last bit; with FMA within 1e-4 relative), and for three or more views within
// 1e-8 relative (its eigensolver is Jacobi's, the host's Eigen's).
#pragma once

#include <vector>

#include "vidmap/geometry/triangulation.h"
#include "vidmap/geometry/triangulation_kernels.h"

namespace vidmap::geometry {

struct TriangulationBatch {
  std::vector<double> views;        // tri::kViewStride doubles a view
  std::vector<int> track_begin{0};  // observations of track i: [track_begin[i], track_begin[i+1])
  std::vector<int> view_of;         // an observation's view
  std::vector<double> pixels;       // an observation's pixel (2 doubles)

  int addView(const Pose& pose, const Pinhole& camera);
  // Adds a track over views already added; returns its index.
  int addTrack(const int* views_of_track, const Vec2* pixels_of_track, int n);
  int numTracks() const { return static_cast<int>(track_begin.size()) - 1; }
  int numViews() const { return static_cast<int>(views.size()) / tri::kViewStride; }
  int maxTrackLength() const;
  void clear();
  // Throws vidmap::Error when a track names a view outside the table.
  void check() const;
};

TrackTriangulation toTrackTriangulation(const tri::TrackResult& r);

// triangulateTrack of every track, on the CPU (in parallel over tracks; the result does not
// depend on the number of threads).
std::vector<TrackTriangulation> triangulateBatch(const TriangulationBatch& batch,
                                                 const TriangulationOptions& options = {});

}  // namespace vidmap::geometry
