// A synthetic scene with known truth for the SIFT tests: a sum of anisotropic Gaussian blobs
// on a gray background, rendered analytically under any homography (no resampling), so that a
// rotated, scaled or shifted view is an exact image of the same scene.
#pragma once

#include <array>
#include <vector>

#include "vidmap/core/image.h"

namespace vidmap::features::testing {

struct Blob {
  double x, y;        // centre in scene coordinates
  double ia, ib, ic;  // inverse covariance [ia ib; ib ic]
  double amplitude;
  double radius;  // support: 4 times the largest standard deviation
};

struct BlobScene {
  double background = 0.5;
  std::vector<Blob> blobs;
};

// count blobs in [0, width) x [0, height) with standard deviations in [minSigma, maxSigma],
// random orientation and amplitude +-[0.08, 0.3], from a fixed seed.
BlobScene randomBlobScene(int width, int height, int count, double minSigma, double maxSigma,
                          unsigned seed);

// The image of the scene under H (scene -> image, row-major): pixel (x, y) shows the scene at
// H^-1 (x, y).
GrayImage renderBlobs(const BlobScene& scene, int width, int height,
                      const std::array<double, 9>& H = {1, 0, 0, 0, 1, 0, 0, 0, 1});

// The homography of a rotation by `degrees` and a scale about (cx, cy), then a shift (tx, ty).
std::array<double, 9> similarity(double degrees, double scale, double cx, double cy, double tx,
                                 double ty);

}  // namespace vidmap::features::testing
