#include "vidmap/ba/bal_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "vidmap/ba/synthetic.h"
#include "vidmap/core/data_dir.h"
#include "vidmap/core/error.h"
#include "vidmap/core/temp_dir.h"

namespace vidmap::ba {
namespace {

namespace fs = std::filesystem;

const char* kTiny =
    "2 2 3\n"
    "0 0 -1.5 2.25\n"
    "1 0 3e1 -4\n"
    "1 1 0.5 0.25\n"
    "0.1\n0.2\n0.3\n1\n2\n-3\n500\n-0.1\n0.01\n"
    "0\n0\n0\n0\n0\n-4\n400\n0\n0\n"
    "1\n2\n3\n"
    "-1\n-2\n-3\n";

TEST(BalIo, ParsesTheFormat) {
  const Problem p = parseBal(kTiny);
  ASSERT_EQ(p.images.size(), 2u);
  ASSERT_EQ(p.points.size(), 2u);
  ASSERT_EQ(p.observations.size(), 3u);
  EXPECT_EQ(p.model, CameraModel::kBal);
  EXPECT_EQ(p.observations[1].image, 1);
  EXPECT_DOUBLE_EQ(p.observations[1].x, 30.0);
  EXPECT_DOUBLE_EQ(p.images[0].rotation[2], 0.3);
  EXPECT_DOUBLE_EQ(p.images[0].translation[2], -3.0);
  EXPECT_DOUBLE_EQ(p.cameras[0].params[0], 500.0);
  EXPECT_DOUBLE_EQ(p.cameras[1].params[0], 400.0);
  EXPECT_EQ(p.images[1].camera, 1);
  EXPECT_DOUBLE_EQ(p.points[1].xyz[2], -3.0);
}

TEST(BalIo, BadFilesAreClearErrors) {
  std::string truncated(kTiny);
  truncated.resize(truncated.size() - 6);
  EXPECT_THROW(parseBal(truncated), Error);
  std::string badIndex(kTiny);
  badIndex.replace(badIndex.find("1 1 0.5"), 3, "1 7");
  EXPECT_THROW(parseBal(badIndex), Error);
  EXPECT_THROW(parseBal("2 2 x\n"), Error);
  EXPECT_THROW(readBal("/nonexistent/problem.txt"), Error);
  try {
    parseBal(truncated, "t.txt");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.txt"), std::string::npos);
  }
}

TEST(BalIo, WriteThenReadRoundTripsExactly) {
  SyntheticOptions o;
  o.model = CameraModel::kBal;
  o.sharedIntrinsics = false;
  o.numImages = 4;
  o.numPoints = 30;
  const Problem p = makeSyntheticScene(o).initial;
  const fs::path path = testFolder("bal") / "roundtrip.txt";
  writeBal(path, p);
  const Problem q = readBal(path);
  fs::remove(path);
  ASSERT_EQ(q.observations.size(), p.observations.size());
  for (size_t i = 0; i < p.observations.size(); ++i)
    EXPECT_EQ(q.observations[i].x, p.observations[i].x);
  for (size_t i = 0; i < p.images.size(); ++i) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(q.images[i].rotation[k], p.images[i].rotation[k]);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(q.cameras[i].params[k], p.cameras[i].params[k]);
  }
  for (size_t j = 0; j < p.points.size(); ++j) EXPECT_EQ(q.points[j].xyz, p.points[j].xyz);
}

TEST(BalIo, WritingANonBalProblemIsAnError) {
  SyntheticOptions o;
  o.numImages = 3;
  o.numPoints = 10;
  EXPECT_THROW(writeBal(testFolder("bal_bad") / "x.txt", makeSyntheticScene(o).truth), Error);
}

TEST(BalIo, ReadsTheSharedBalProblems) {
  auto dir = dataPath("bal");
  if (!dir) GTEST_SKIP() << "shared/data/bal is absent";
  if (auto plainFile = findBal(*dir, "trafalgar/problem-39-18060-pre.txt")) {
    const Problem plain = readBal(*plainFile);
    EXPECT_EQ(plain.images.size(), 39u);
    EXPECT_EQ(plain.points.size(), 18060u);
    EXPECT_EQ(plain.observations.size(), 63551u);
  }
  auto ladybug = findBal(*dir, "ladybug/problem-49-7776-pre.txt.bz2");
  if (!ladybug) GTEST_SKIP() << "no bzip2 support in this build and no decompressed copy";
  const Problem lady = readBal(*ladybug);
  EXPECT_EQ(lady.images.size(), 49u);
  EXPECT_EQ(lady.points.size(), 7776u);
  EXPECT_EQ(lady.observations.size(), 31843u);
}

}  // namespace
}  // namespace vidmap::ba
