// Thread loops of the CPU backend. OpenMP when the build has it, a plain loop otherwise.
// Each iteration must write only its own outputs so results do not depend on the threads.
//
// An exception must not leave an OpenMP region (the program would terminate), so the loops
// catch what an iteration throws, let the other iterations finish, and rethrow to the caller
// the exception of the lowest failing index: the same one whatever the number of threads, and
// the one a plain loop would have thrown first.
#pragma once

#include <cstdint>
#include <exception>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace vidmap {

namespace detail {

// The exception of the lowest failing iteration of a parallel loop.
class FirstException {
 public:
  void capture(std::int64_t i) {
#if defined(_OPENMP)
#pragma omp critical(vidmap_parallel_first_exception)
#endif
    if (!error_ || i < index_) {
      error_ = std::current_exception();
      index_ = i;
    }
  }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
  std::int64_t index_ = 0;
};

}  // namespace detail

// Calls f(i) for i in [0, n), in parallel, with a static schedule. Rethrows the exception of
// the lowest failing i after every iteration has run.
template <class F>
void parallelFor(std::int64_t n, F&& f) {
  detail::FirstException error;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
  for (std::int64_t i = 0; i < n; ++i) {
    try {
      f(i);
    } catch (...) {
      error.capture(i);
    }
  }
  error.rethrow();
}

// Like parallelFor, with a dynamic schedule for iterations of uneven cost: chunks of `chunk`
// iterations (16 for many light ones such as tracks; 1 for a few heavy ones such as RANSAC
// problems).
template <class F>
void parallelForDynamic(std::int64_t n, F&& f, int chunk = 16) {
  detail::FirstException error;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, chunk)
#endif
  for (std::int64_t i = 0; i < n; ++i) {
    try {
      f(i);
    } catch (...) {
      error.capture(i);
    }
  }
  error.rethrow();
}

inline int maxThreads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace vidmap
