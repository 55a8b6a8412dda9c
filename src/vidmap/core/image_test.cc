#include "vidmap/core/image.h"

#include <gtest/gtest.h>

namespace vidmap {
namespace {

TEST(Image, ViewAddressesRowMajorWithStride) {
  GrayImage img(4, 3, 0.f);
  img(2, 1) = 0.5f;
  auto v = img.view();
  EXPECT_EQ(v.stride, 4);
  EXPECT_EQ(v(2, 1), 0.5f);
  EXPECT_EQ(v.data[1 * 4 + 2], 0.5f);
  EXPECT_EQ(v.pixels(), 12);
}

TEST(Image, NegativeSizeIsAnError) { EXPECT_THROW(GrayImage(-1, 3), Error); }

}  // namespace
}  // namespace vidmap
