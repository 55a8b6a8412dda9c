// The CPU backend of SIFT: the shared kernels of sift_kernels.h in OpenMP loops. It is the
// oracle the CUDA backend is tested against.
#pragma once

#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/features/features.h"
#include "vidmap/features/sift.h"
#include "vidmap/features/sift_kernels.h"
#include "vidmap/features/sift_options.h"

namespace vidmap::features {

// The buffers of one octave: Gaussian levels, DoG levels, gradients of levels 1..S.
struct SiftCpuOctave {
  int w = 0, h = 0;
  std::vector<float> gauss;    // levels() planes of w x h
  std::vector<float> dog;      // levels() - 1 planes
  std::vector<Gradient> grad;  // plane i - 1 is the gradient of level i
  float* level(int i) { return gauss.data() + static_cast<long>(i) * w * h; }
};

// Buffers kept between images so that a video does not allocate (and page in) ~70 bytes per
// pixel per frame. Used by one extraction at a time.
struct SiftCpuWorkspace {
  std::vector<SiftCpuOctave> octaves;
  std::vector<float> tmp, up;
};

// Detects and describes the features of a finite gray image in [0, 1] (checked by the caller).
Features siftCpu(ImageView<const float> gray, const SiftOptions& options,
                 SiftStats* stats = nullptr, SiftCpuWorkspace* workspace = nullptr);

// describeKeypoint (sift_kernels.h) as the CPU runs it: the same descriptor bit for bit, the
// per-pixel arithmetic of each window row first (vectorised), then the bin adds in order.
void describeKeypointCpu(const GradientLevel& gl, float x, float y, float sigma, float angle,
                         float ct, float st, float desc[128]);

// The x in [x0, x1) of DoG row y, level s, where isExtremum holds, in increasing x: a vectorised
// filter on a necessary condition (the prefilter and the four same-level neighbours), then
// isExtremum where it passes. The caller keeps x0, y >= 1 and x1, y < the size - 1.
void extremaInRow(const DogOctave& dog, int s, int y, int x0, int x1, float prefilter,
                  std::vector<int>* xs);

// The Gaussian scale space as the CPU builds it (levels of every octave, row-major, level
// after level), for tests that compare the CUDA backend level by level.
std::vector<std::vector<float>> siftCpuGaussians(ImageView<const float> gray,
                                                 const SiftOptions& options);

}  // namespace vidmap::features
