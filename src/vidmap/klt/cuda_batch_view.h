// The resident buffers of K independent sequences (cameras or videos) as the CUDA kernels see
// them: plain pointers and sizes, no CUDA types, so host code can fill it. One CudaBackend is
// the case K = 1. Every array holds the K sequences one after the other:
//   gray     [K][slots][layout.total]            the gray pyramids (2 slots; 3 for the
//                                                pipelined push, whose next frame is built
//                                                while the previous two are tracked)
//   grad     [K][slots][2 * layout.total]        their interleaved Scharr gradients
//   records  4 x [K][capacity] TrackRecord       seeds, forward, backward, checked
//   eig      [K][width * height]                 the lambda_min map of level 0
//   eigMax   [K]                                 its maximum, as the bits of a float >= 0
//   control  [K]                                 the alive seeds of each sequence
#pragma once

#include <cstdint>

#include "vidmap/core/hd.h"
#include "vidmap/klt/kernels.h"
#include "vidmap/klt/layout.h"

namespace vidmap::klt::cuda {

// Scratch of the selection, [K][cells] unless said otherwise.
struct SelectView {
  CellGrid grid;
  int* cellCount = nullptr;       // [K * cells + 1] alive tracks per cell, then a cursor
  int* trackStart = nullptr;      // [K * cells + 1] exclusive scan of cellCount (global)
  float* trackXY = nullptr;       // [K * capacity * 2] alive tracks bucketed by cell
  int* trackCell = nullptr;       // [K * capacity] cell of each alive track
  Pick* picks = nullptr;          // [K * cells]
  std::uint64_t* keys = nullptr;  // [K * cells] sort keys: sequence, strength, cell
  std::uint64_t* sorted = nullptr;
  int* take = nullptr;      // [K * cells + 1] 1 when the pick is appended
  int* takePos = nullptr;   // [K * cells + 1] exclusive scan of take (global)
  int* selected = nullptr;  // [K] picks kept by the suppression
  int* appended = nullptr;  // [K] picks appended
};

struct BatchView {
  int sequences = 1;
  int width = 0;
  int height = 0;
  int capacity = 0;
  int slots = 2;  // pyramids a sequence holds
  Layout layout;
  float* gray = nullptr;
  float* grad = nullptr;
  TrackRecord* records[4] = {};
  float* eig = nullptr;
  unsigned* eigMax = nullptr;
  int* alive = nullptr;  // [K] seeds[0, alive) of each sequence (uploaded with the seeds)
  SelectView sel;

  VIDMAP_HD std::int64_t pixels() const { return static_cast<std::int64_t>(width) * height; }
  VIDMAP_HD float* grayOf(int seq, int slot) const {
    return gray + (static_cast<std::int64_t>(slots) * seq + slot) * layout.total;
  }
  VIDMAP_HD float* gradOf(int seq, int slot) const {
    return grad + (static_cast<std::int64_t>(slots) * seq + slot) * 2 * layout.total;
  }
  VIDMAP_HD PyramidView pyramid(int seq, int slot) const {
    return {grayOf(seq, slot), gradOf(seq, slot), layout};
  }
  VIDMAP_HD TrackRecord* recordsOf(int which, int seq) const {
    return records[which] + static_cast<std::int64_t>(seq) * capacity;
  }
};

}  // namespace vidmap::klt::cuda
