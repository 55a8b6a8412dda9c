// PnP with its P3P hypotheses scored on the device (CudaBatchScorer in the lock-step rounds of
// estimatePnP) against the per-sample CPU RANSAC: the same pose and inliers bit for bit, with
// or without FMA (the batch costs only filter; ransac_lockstep.h). Skips without a device.
#include <gtest/gtest.h>

#include "vidmap/geometry/pnp.h"
#include "vidmap/geometry/score_batch_cuda.h"
#include "vidmap/geometry/test_scene.h"
#include "vidmap/gpu/device.h"

namespace vidmap::geometry {
namespace {

TEST(PnPCuda, DeviceScoredRoundsGiveTheCpuResult) {
  if (gpu::deviceCount() == 0) GTEST_SKIP() << gpu::noDeviceReason();
  gpu::Context ctx;
  CudaBatchScorer scorer(ctx);
  for (double outliers : {0.0, 0.3, 0.7}) {
    testing::SceneOptions o;
    o.num_points = 2000;
    o.noise_px = 1.0;
    o.outlier_ratio = outliers;
    const auto s = testing::makePnPScene(o, 900);
    const PnPResult a = estimatePnP(s.px, s.X, s.cam);
    const PnPResult b = estimatePnP(s.px, s.X, s.cam, PnPOptions{}, scorer);
    ASSERT_TRUE(a.success) << a.message;
    EXPECT_TRUE(b.pose.R == a.pose.R && b.pose.t == a.pose.t) << outliers;
    EXPECT_EQ(b.inlier_mask, a.inlier_mask);
    EXPECT_EQ(b.iterations, a.iterations);
  }
  EXPECT_GT(scorer.calls(), 2);
}

}  // namespace
}  // namespace vidmap::geometry
