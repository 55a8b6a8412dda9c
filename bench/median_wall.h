// The median wall time of a call, for the benchmarks that time a host call end to end
// (geometry_scorer, two_view_batch_bench): one run per repeat, steady clock, milliseconds.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace vidmap::bench {

template <class F>
double medianWallMs(int repeats, F&& f) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace vidmap::bench
