#include "vidmap/core/copy_rows.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "vidmap/core/parallel.h"

namespace vidmap {

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

}  // namespace vidmap
