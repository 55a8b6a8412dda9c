// Thread loops of the CPU backend. OpenMP when the build has it, a plain loop otherwise.
// Each iteration must write only its own outputs so results do not depend on the threads.
#pragma once

#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace vidmap {

// Calls f(i) for i in [0, n), in parallel, with a static schedule.
template <class F>
void parallelFor(std::int64_t n, F&& f) {
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) f(i);
#else
  for (std::int64_t i = 0; i < n; ++i) f(i);
#endif
}

// Like parallelFor, with a dynamic schedule for iterations of uneven cost: chunks of `chunk`
// iterations (16 for many light ones such as tracks; 1 for a few heavy ones such as RANSAC
// problems).
template <class F>
void parallelForDynamic(std::int64_t n, F&& f, int chunk = 16) {
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, chunk)
  for (std::int64_t i = 0; i < n; ++i) f(i);
#else
  for (std::int64_t i = 0; i < n; ++i) f(i);
#endif
}

inline int maxThreads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace vidmap
