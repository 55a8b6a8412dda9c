// parallelFor and parallelForDynamic hand the exception of the lowest failing iteration to the
// caller, whatever the number of threads, after every iteration has run.
#include "vidmap/core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "vidmap/core/error.h"

namespace vidmap {
namespace {

template <class Loop>
void expectLowestFailureWins(Loop loop) {
  const int before = maxThreads();
  for (const int threads : {1, 2, 4}) {
#if defined(_OPENMP)
    omp_set_num_threads(threads);
#endif
    std::vector<int> ran(1000, 0);
    try {
      loop(1000, [&](std::int64_t i) {
        ++ran[i];
        if (i % 100 == 37) throw Error("iteration " + std::to_string(i));
      });
      ADD_FAILURE() << "no exception reached the caller with " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "iteration 37") << threads << " threads";
    }
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(ran[i], 1) << "iteration " << i;
    // Exceptions of any type pass.
    EXPECT_THROW(loop(10,
                      [](std::int64_t i) {
                        if (i == 9) throw 42;
                      }),
                 int);
    // And a loop that does not throw computes as a plain loop.
    std::vector<std::int64_t> sq(513);
    loop(513, [&](std::int64_t i) { sq[i] = i * i; });
    for (std::int64_t i = 0; i < 513; ++i) ASSERT_EQ(sq[i], i * i);
  }
#if defined(_OPENMP)
  omp_set_num_threads(before);
#else
  (void)before;
#endif
}

TEST(Parallel, ForRethrowsTheLowestFailingIteration) {
  expectLowestFailureWins([](std::int64_t n, auto&& f) { parallelFor(n, f); });
}

TEST(Parallel, ForDynamicRethrowsTheLowestFailingIteration) {
  expectLowestFailureWins([](std::int64_t n, auto&& f) { parallelForDynamic(n, f, 3); });
}

}  // namespace
}  // namespace vidmap
