// The front end's active keyframes are matched in the pixels of the current camera's pinhole
// part: their raw keypoints are undistorted again when the mapper has refined the camera.
#include "vidmap/pipeline/frontend.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vidmap::pipeline {
namespace {

// A keyframe with keypoints spread over a 640x480 frame, to the corners where distortion is
// largest.
ActiveKeyframe keyframe() {
  ActiveKeyframe a;
  std::vector<features::Keypoint> raw;
  for (int y = 0; y <= 480; y += 60)
    for (int x = 0; x <= 640; x += 80) {
      features::Keypoint k;
      k.x = static_cast<float>(x);
      k.y = static_cast<float>(y);
      raw.push_back(k);
    }
  a.features = std::make_shared<features::Features>();
  a.features->keypoints = raw;
  a.raw = std::make_shared<const std::vector<features::Keypoint>>(std::move(raw));
  return a;
}

sfm::Camera camera(const std::string& spec) {
  return sfm::Camera::fromSpec(sfm::CameraSpec::parse(spec), 640, 480, 640, 480);
}

// The independent reference: undistortion by the camera model itself, checked by projecting
// back (distortAndProject of the undistorted normalized point gives the raw pixel).
void expectUndistortedBy(const ActiveKeyframe& a, const sfm::Camera& cam) {
  const geometry::Pinhole pin = cam.pinhole();
  for (size_t i = 0; i < a.raw->size(); ++i) {
    const features::Keypoint& k = a.features->keypoints[i];
    const sfm::Vec2 n = pin.normalize({k.x, k.y});
    const sfm::Vec2 back = cam.distortAndProject(n);
    EXPECT_NEAR(back.x(), (*a.raw)[i].x, 1e-3) << i;
    EXPECT_NEAR(back.y(), (*a.raw)[i].y, 1e-3) << i;
  }
}

TEST(ActiveKeyframe, FollowsTheRefinedCamera) {
  ActiveKeyframe a = keyframe();
  const sfm::Camera first = camera("SIMPLE_RADIAL 500,320.5,240.5,-0.05");
  a.undistortWith(first);
  expectUndistortedBy(a, first);
  const float cornerBefore = a.features->keypoints[0].x;
  // The mapper refines focal length and distortion: the keypoints follow (the corner moves by
  // several pixels between the two cameras).
  const sfm::Camera refined = camera("SIMPLE_RADIAL 540,320.5,240.5,-0.12");
  a.undistortWith(refined);
  expectUndistortedBy(a, refined);
  EXPECT_GT(std::abs(a.features->keypoints[0].x - cornerBefore), 2.0f);
  EXPECT_EQ(a.undistortedWith, refined.params());
}

TEST(ActiveKeyframe, NoDistortionLeavesTheRawPixelsExactly) {
  ActiveKeyframe a = keyframe();
  a.undistortWith(camera("SIMPLE_RADIAL 540,320.5,240.5,-0.12"));
  // Back to a camera without distortion: the raw pixels, bit for bit.
  a.undistortWith(camera("PINHOLE 500,510,320.5,240.5"));
  for (size_t i = 0; i < a.raw->size(); ++i) {
    EXPECT_EQ(a.features->keypoints[i].x, (*a.raw)[i].x);
    EXPECT_EQ(a.features->keypoints[i].y, (*a.raw)[i].y);
  }
}

}  // namespace
}  // namespace vidmap::pipeline
