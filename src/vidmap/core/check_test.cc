#include "vidmap/core/check.h"

#include <gtest/gtest.h>

#include <limits>

namespace vidmap {
namespace {

TEST(CheckRange, NamesTheFieldAndRange) {
  try {
    checkRange("klt.levels", 9, 1, 8);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("klt.levels"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("[1, 8]"), std::string::npos);
  }
  EXPECT_NO_THROW(checkRange("klt.levels", 5, 1, 8));
}

TEST(CheckRange, RejectsNaN) {
  EXPECT_THROW(checkRange("x", std::numeric_limits<double>::quiet_NaN(), 0.0, 1.0), Error);
}

}  // namespace
}  // namespace vidmap
