// LazyLibrary opens a library at the first symbol asked for, falls back from the soname to the
// path, and names a missing library or symbol in its Error.
#include "vidmap/core/lazy_library.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace vidmap {
namespace {

std::string errorOf(LazyLibrary& lib, const char* name) {
  try {
    lib.symbol(name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LazyLibrary, ResolvesARealFunction) {
  LazyLibrary libm("libm.so.6", "/nonexistent/libm.so.6", "this test");
  using Cos = double (*)(double);
  const Cos f = reinterpret_cast<Cos>(libm.symbol("cos"));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f(0.0), 1.0);
  EXPECT_EQ(f(1.0), std::cos(1.0));
  // A second lookup reuses the open library.
  EXPECT_NE(libm.symbol("sin"), nullptr);
  EXPECT_NE(errorOf(libm, "no_such_function_here").find("no_such_function_here"),
            std::string::npos);
}

TEST(LazyLibrary, FallsBackToThePath) {
  LazyLibrary libm("libvidmap-no-such-soname.so.1", "libm.so.6", "this test");
  EXPECT_NE(libm.symbol("cos"), nullptr);
}

TEST(LazyLibrary, AMissingLibraryIsAClearError) {
  LazyLibrary none("libvidmap-missing.so.3", "/nonexistent/libvidmap-missing.so.3", "the test");
  const std::string msg = errorOf(none, "f");
  EXPECT_NE(msg.find("cannot load libvidmap-missing.so.3 (needed by the test)"), std::string::npos)
      << msg;
  // And stays one on every call.
  EXPECT_EQ(errorOf(none, "g"), msg);
}

}  // namespace
}  // namespace vidmap
