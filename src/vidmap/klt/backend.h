// The backend interface that klt::Tracker drives: the resident buffers of the tracker and the
// operations on them. The CPU backend (cpu_backend.h) runs the functions of kernels.h in
// OpenMP loops and is the oracle; the CUDA backend (cuda_backend.h) runs the same functions
// in kernels. Changes to this interface go in commits titled "klt backend interface: ...".
//
// Buffers (docs/architecture.md, KLT: the tracker):
// - two frame slots, each the gray pyramid (layout().total floats) and its interleaved
//   Scharr gradient (2 * layout().total floats);
// - four arrays of `capacity` TrackRecords: seeds (positions in the previous frame), forward,
//   backward and checked;
// - the lambda_min map of level 0 (width * height floats) and its maximum.
// Calls may run asynchronously; read* calls return when the data is on the host.
#pragma once

#include <cstddef>
#include <memory>

#include "vidmap/core/image.h"
#include "vidmap/klt/kernels.h"
#include "vidmap/klt/layout.h"
#include "vidmap/klt/options.h"

namespace vidmap::klt {

enum class RecordBuffer { kSeeds = 0, kForward = 1, kBackward = 2, kChecked = 3 };
enum class Direction { kForward = 0, kBackward = 1 };

// What a selection did: picks that survived the suppression, and those appended (fewer when
// the capacity is short: the strongest are appended, in cell order).
struct SelectCounts {
  int selected = 0;
  int appended = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const char* name() const = 0;
  virtual int width() const = 0;
  virtual int height() const = 0;
  virtual const Options& options() const = 0;
  virtual const Layout& layout() const = 0;

  // Level 0 of a slot (0 or 1) from a gray frame in [0, 1] or an RGB8 frame (grayFromRgb).
  // The frame must have the backend's size.
  virtual void uploadGray(int slot, ImageView<const float> gray) = 0;
  virtual void uploadRgb(int slot, ImageView<const Rgb8> rgb) = 0;
  // Levels 1.. of the slot (pyrDownPixel) and the gradients of every level (scharrPixel).
  virtual void buildPyramid(int slot) = 0;

  // Replaces seeds[0, count) (count <= capacity).
  virtual void uploadSeeds(const TrackRecord* seeds, int count) = 0;
  // Tracks [begin, end): forward writes forward[i] = trackForward(prev, cur, seeds[i]);
  // backward writes backward[i] = trackBackward(prev, cur, forward[i]). Any split of a range
  // into sub-ranges gives the same bits.
  virtual void track(Direction direction, int prevSlot, int curSlot, int begin, int end) = 0;
  // checked[i] = checkTrack(seeds[i], forward[i], backward[i], fb, ncc) for i in [begin, end).
  virtual void check(int begin, int end) = 0;
  virtual void readRecords(RecordBuffer which, int begin, int count, TrackRecord* out) = 0;

  // The lambda_min map of the slot's level 0 (minEigenPixel) and its maximum.
  virtual void eigenMap(int slot) = 0;
  virtual float eigenMax() = 0;
  // Selection on the map of the last eigenMap call: seeds[0, aliveCount) are the alive
  // tracks (occupancy and suppression), picks are selectCell + keepPick per cell, and the
  // kept picks are appended as seeds[aliveCount, aliveCount + appended) with seedRecord
  // (measure = lambda_min), in cell order; when more survive than capacity - aliveCount,
  // the strongest (pickStronger) are appended, still in cell order.
  virtual SelectCounts select(int aliveCount) = 0;

  // For tests: a level of a slot (gray: width * height floats, grad: 2 * width * height;
  // either may be null) and the lambda_min map (width * height floats).
  virtual void readLevel(int slot, int level, float* gray, float* grad) = 0;
  virtual void readEigenMap(float* out) = 0;

  // Bytes this backend holds for its buffers (device bytes for a GPU backend).
  virtual std::size_t residentBytes() const = 0;
  // Waits for queued work (no-op on the CPU); for stage timing.
  virtual void synchronize() {}
};

// The CPU backend (OpenMP over pixels and tracks). Throws vidmap::Error on bad options or a
// frame too small for the window.
std::unique_ptr<Backend> makeCpuBackend(int width, int height, const Options& options);

}  // namespace vidmap::klt
