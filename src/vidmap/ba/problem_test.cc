#include "vidmap/ba/problem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "vidmap/ba/synthetic.h"
#include "vidmap/core/error.h"

namespace vidmap::ba {
namespace {

Problem small() {
  SyntheticOptions o;
  o.numImages = 3;
  o.numPoints = 10;
  return makeSyntheticScene(o).truth;
}

void expectError(const Problem& p, const std::string& part) {
  try {
    p.check();
    FAIL() << "no error, expected one naming '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Problem, ValidProblemPasses) { EXPECT_NO_THROW(small().check()); }

TEST(Problem, NamesTheBadEntry) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  {
    Problem p = small();
    p.points[4].xyz[1] = nan;
    expectError(p, "point 4");
  }
  {
    Problem p = small();
    p.images[2].translation[0] = inf;
    expectError(p, "image 2");
  }
  {
    Problem p = small();
    p.cameras[0].params[0] = -3;
    expectError(p, "focal length");
  }
  {
    Problem p = small();
    p.observations[5].point = 99;
    expectError(p, "observation 5");
  }
  {
    Problem p = small();
    p.observations[1].x = nan;
    expectError(p, "observation 1");
  }
  {
    Problem p = small();
    p.images[1].camera = 7;
    expectError(p, "image 1");
  }
  {
    Problem p = small();
    p.rotation = RotationType::kQuaternion;
    p.images[0].rotation = {0, 0, 0, 0};
    expectError(p, "zero quaternion");
  }
  {
    Problem p = small();
    p.observations.clear();
    expectError(p, "no observations");
  }
}

TEST(Problem, ModelsTheAdjusterDoesNotRefineAreRefused) {
  for (auto m : {CameraModel::kOpenCV, CameraModel::kFullOpenCV}) {
    Problem p = small();
    p.model = m;
    expectError(p, std::string("camera model ") + modelName(m) + " is not refined");
  }
  Problem p = small();
  p.model = static_cast<CameraModel>(5);  // COLMAP's OPENCV_FISHEYE: not a model of vidmap
  expectError(p, "unknown camera model");
}

TEST(Problem, ModelNamesRoundTrip) {
  for (auto m : {CameraModel::kSimplePinhole, CameraModel::kPinhole, CameraModel::kSimpleRadial,
                 CameraModel::kRadial, CameraModel::kBal})
    EXPECT_EQ(parseModel(modelName(m)), m);
  EXPECT_THROW(parseModel("OPENCV_FISHEYE"), Error);
}

TEST(Problem, TruthHasZeroReprojectionError) {
  for (auto m : {CameraModel::kSimplePinhole, CameraModel::kPinhole, CameraModel::kSimpleRadial,
                 CameraModel::kRadial, CameraModel::kBal})
    for (auto r : {RotationType::kAngleAxis, RotationType::kQuaternion}) {
      SyntheticOptions o;
      o.model = m;
      o.rotation = r;
      o.numImages = 4;
      o.numPoints = 50;
      const auto s = makeSyntheticScene(o);
      ASSERT_GT(s.truth.observations.size(), 100u);
      // The solver's projection code agrees with the independent generator.
      EXPECT_LT(rmsReprojectionError(s.truth), 1e-9) << modelName(m);
      EXPECT_NEAR(rmsReprojectionError(s.noisy), std::sqrt(2.0) * o.noiseSigma, 0.1);
    }
}

}  // namespace
}  // namespace vidmap::ba
