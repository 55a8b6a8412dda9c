// Bad input: each gets a clear result or one vidmap::Error, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "vidmap/features/matcher.h"
#include "vidmap/features/sift.h"

namespace vidmap::features {
namespace {

SiftOptions cpu() {
  SiftOptions o;
  o.backend = Backend::kCpu;
  return o;
}

TEST(SiftBadInput, EmptyImageIsAnError) {
  GrayImage empty;
  try {
    Sift(cpu()).extract(empty.view());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos);
  }
  RgbImage rgb;
  EXPECT_THROW(Sift(cpu()).extract(rgb.view()), Error);
}

TEST(SiftBadInput, TinyImagesGiveNoFeatures) {
  for (int s : {1, 2, 7, 15}) {
    GrayImage img(s, s, 0.3f);
    if (s > 2) img(s / 2, s / 2) = 0.9f;
    for (int oct : {0, -1}) {
      auto o = cpu();
      o.firstOctave = oct;
      o.keepGray = true;
      auto r = Sift(o).extract(img.view());
      EXPECT_TRUE(r.features.empty()) << s;
      EXPECT_EQ(r.gray.width(), s);
    }
  }
  GrayImage wide(4000, 3, 0.5f);
  EXPECT_TRUE(Sift(cpu()).extract(wide.view()).features.empty());
}

TEST(SiftBadInput, ConstantImageGivesNoFeatures) {
  for (float v : {0.0f, 0.5f, 1.0f}) {
    GrayImage img(200, 150, v);
    auto o = cpu();
    o.clahe = true;  // equalisation of a constant image stays constant
    EXPECT_TRUE(Sift(o).extract(img.view()).features.empty());
    EXPECT_TRUE(Sift(cpu()).extract(img.view()).features.empty());
  }
}

TEST(SiftBadInput, NonFinitePixelsAreAnError) {
  GrayImage img(64, 64, 0.5f);
  img(10, 20) = std::numeric_limits<float>::quiet_NaN();
  img(11, 20) = std::numeric_limits<float>::infinity();
  try {
    Sift(cpu()).extract(img.view());
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("2 non-finite"), std::string::npos) << m;
    EXPECT_NE(m.find("x=10, y=20"), std::string::npos) << m;
  }
}

TEST(SiftBadInput, OutOfRangeValuesAreAccepted) {
  // Values outside [0, 1] are not an error: the thresholds are relative to [0, 1].
  GrayImage img(64, 64, 5.0f);
  img(32, 32) = -3.0f;
  EXPECT_NO_THROW(Sift(cpu()).extract(img.view()));
}

TEST(MatchBadInput, MismatchedDescriptorsAndGuidesAreErrors) {
  Features a, b;
  a.keypoints.resize(2);
  a.descriptors.resize(128);  // one descriptor for two keypoints
  MatchOptions mo;
  mo.backend = Backend::kCpu;
  Matcher m(mo);
  EXPECT_THROW(m.match(a, b), Error);
  a.descriptors.resize(256);
  EXPECT_NO_THROW(m.match(a, b));  // empty B: no matches
  EXPECT_TRUE(m.match(a, b).empty());
  EXPECT_THROW(m.matchMany(a, {&b, &b}, {EpipolarGuide{}}), Error);
  EpipolarGuide g;
  g.F[0] = std::nan("");
  EXPECT_THROW(m.matchGuided(a, b, g), Error);
  mo.ratio = 1.5f;
  EXPECT_THROW(Matcher{mo}, Error);
}

}  // namespace
}  // namespace vidmap::features
