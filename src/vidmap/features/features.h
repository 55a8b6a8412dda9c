// Keypoints and descriptors of one image: the output of SIFT (sift.h) and the input of the
// matchers (matcher.h). Coordinates are in pixels of the input image with the centre of the
// top-left pixel at (0, 0), y pointing down.
#pragma once

#include <cstddef>
#include <vector>

namespace vidmap::features {

inline constexpr int kDescriptorSize = 128;  // 4 x 4 spatial bins x 8 orientation bins

struct Keypoint {
  float x = 0;            // pixel column (sub-pixel)
  float y = 0;            // pixel row (sub-pixel)
  float scale = 0;        // sigma of the detection scale, in input pixels
  float orientation = 0;  // radians in [0, 2 pi), angle of the gradient (x right, y down)
  float response = 0;     // |DoG| at the refined extremum, image in [0, 1]
  int octave = 0;         // octave of detection (-1 = upsampled first octave)
};

// The features of one image. Descriptor i occupies descriptors[i * 128, i * 128 + 128), in the
// order (row bin, column bin, orientation bin) of the keypoint's rotated frame, each descriptor
// of unit L2 norm (RootSIFT and L2 normalisation both give unit L2 norm).
struct Features {
  int width = 0;  // size of the image the features come from
  int height = 0;
  std::vector<Keypoint> keypoints;
  std::vector<float> descriptors;

  std::size_t size() const { return keypoints.size(); }
  bool empty() const { return keypoints.empty(); }
  const float* descriptor(std::size_t i) const { return descriptors.data() + i * kDescriptorSize; }
};

}  // namespace vidmap::features
