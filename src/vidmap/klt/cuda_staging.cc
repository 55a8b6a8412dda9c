// Host side of the CUDA engine's staging: frames are copied into the pinned upload buffer by
// the host's threads (a 1280 x 720 float frame is 3.7 MB; one core copies it in about 0.3 ms).
#include <algorithm>
#include <cstring>

#include "vidmap/core/parallel.h"
#include "vidmap/klt/cuda_engine.h"

namespace vidmap::klt::cuda {

void copyRows(void* dst, const void* src, std::size_t rowBytes, std::size_t srcStride, int rows) {
  auto* d = static_cast<std::uint8_t*>(dst);
  const auto* s = static_cast<const std::uint8_t*>(src);
  const std::size_t total = rowBytes * static_cast<std::size_t>(rows);
  if (srcStride == rowBytes && total < (std::size_t{1} << 18)) {
    std::memcpy(d, s, total);
    return;
  }
  constexpr int kRowsPerTask = 16;
  const int tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  auto copy = [&](std::int64_t t) {
    const int y0 = static_cast<int>(t) * kRowsPerTask, y1 = std::min(rows, y0 + kRowsPerTask);
    for (int y = y0; y < y1; ++y) std::memcpy(d + y * rowBytes, s + y * srcStride, rowBytes);
  };
  if (total < (std::size_t{1} << 18)) {
    for (int t = 0; t < tasks; ++t) copy(t);
  } else {
    parallelFor(tasks, copy);
  }
}

}  // namespace vidmap::klt::cuda
