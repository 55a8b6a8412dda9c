// The first octave of the CUDA SIFT in horizontal bands, so that its chain of passes runs while
// the rest of the frame is still crossing the bus (sift_cuda.cu). The frame is uploaded in
// `bands` row bands; after each band arrives, every pass of the chain (the source's conversion,
// then each level's row and column pass) runs on the rows its input now allows: a pass that
// reads `halo` rows above and below its own (a column pass: its kernel's radius) lags its input
// by halo rows until the input is complete. Each pixel is still computed once, by the same
// code from the same inputs, so the levels equal those of the frame in one piece bit for bit;
// what changes is that the chain's last pieces wait only for the last band, not the whole
// frame. Host code only (tested on the CPU: sift_cuda_bands_test.cc).
#pragma once

#include <algorithm>
#include <vector>

namespace vidmap::features {

// One launch: pass `pass` over rows [y0, y1), after band `band` arrived.
struct BandStep {
  int band, pass, y0, y1;
};

// The rows of band k are [bandEnd(k - 1), bandEnd(k)): equal bands, the last ending at height.
inline int bandEnd(int height, int bands, int k) {
  return static_cast<int>(static_cast<long>(height) * (k + 1) / bands);
}

// The launches of a chain of passes, band by band, in the order they are to be issued on one
// stream. halo[p]: the rows above and below its own that pass p reads of pass p - 1's output
// (pass 0 reads the band itself, halo[0] is ignored). Pass p's rows [y0, y1) are issued once
// pass p - 1 has rows [0, y1 + halo[p]) (or all of them); a pass reads clamped rows at the
// frame's edges, so its last piece waits for its input's last row. Every pass covers
// [0, height) once, in increasing row order. bands = 1: each pass once, over the whole frame.
inline std::vector<BandStep> bandSchedule(int height, int bands, const std::vector<int>& halo) {
  std::vector<BandStep> steps;
  std::vector<int> done(halo.size(), 0);
  for (int k = 0; k < bands; ++k) {
    int avail = bandEnd(height, bands, k);  // rows of the previous pass's output there
    for (std::size_t p = 0; p < halo.size(); ++p) {
      const int upTo = p == 0 || avail == height ? avail : std::max(0, avail - halo[p]);
      if (upTo > done[p]) {
        steps.push_back({k, static_cast<int>(p), done[p], upTo});
        done[p] = upTo;
      }
      avail = done[p];
    }
  }
  return steps;
}

}  // namespace vidmap::features
