// Options of the SIFT extractor (sift.h), with the defaults of COLMAP's SiftExtractionOptions
// where COLMAP has one, and check() naming the bad field and its range.
#pragma once

#include "vidmap/core/check.h"

namespace vidmap::features {

enum class DescriptorNormalization {
  kL1Root,  // RootSIFT (Arandjelovic and Zisserman, CVPR 2012): L1 normalise, then sqrt
  kL2,      // Lowe's: L2 normalise, clamp at 0.2, L2 normalise again
};

enum class Backend { kAuto, kCpu, kCuda };

struct SiftOptions {
  // The strongest features (by response) kept; 0 keeps all.
  int maxFeatures = 4096;
  // -1 upsamples the image 2x before the first octave (finds small blobs, 4x the work); 0 starts
  // at the input resolution.
  int firstOctave = 0;
  // Octaves to build; 0 builds octaves while the shorter side has >= 16 pixels.
  int numOctaves = 0;
  int scalesPerOctave = 3;
  // Blur of the first Gaussian level of each octave (Lowe's 1.6) and the blur the input image
  // is assumed to have (0.5, as in Lowe, VLFeat and OpenCV).
  float sigma = 1.6f;
  float inputSigma = 0.5f;
  // Contrast threshold on |D(x^)|, the DoG value at the refined extremum, where D is the
  // difference of two adjacent Gaussian levels of the image in [0, 1] (not normalised by the
  // scale step). COLMAP's peak_threshold is 0.02 / octave_resolution and VLFeat applies it in
  // exactly this form; the default is COLMAP's 0.02 / 3 = 0.00667. (OpenCV's contrastThreshold
  // 0.04 is tested as |D| * 3 < 0.04, i.e. |D| < 0.0133 here: twice COLMAP's.) Samples below
  // 0.8 of it are not considered as extrema at all, as in VLFeat.
  float peakThreshold = 0.02f / 3.0f;
  // Lowe's edge test on the 2x2 spatial Hessian H: keep when tr(H)^2 / det(H) < (r + 1)^2 / r.
  float edgeThreshold = 10.0f;
  // Orientations per keypoint: the strongest histogram peaks >= 0.8 of the maximum, up to this
  // many (COLMAP's max_num_orientations = 2).
  int maxOrientations = 2;
  // Upright: one orientation 0 per keypoint (no rotation invariance).
  bool upright = false;
  DescriptorNormalization normalization = DescriptorNormalization::kL1Root;
  // Contrast-limited adaptive histogram equalisation of the gray image before detection.
  bool clahe = false;
  float claheClipLimit = 2.0f;  // OpenCV's default clip limit (times the mean bin count)
  int claheTiles = 8;           // tiles along each side
  // Keep the level-0 gray (the input as float [0, 1], before CLAHE) in the result for KLT.
  bool keepGray = false;
  Backend backend = Backend::kAuto;

  void check() const {
    checkRange("sift.maxFeatures", maxFeatures, 0, 1 << 20);
    checkRange("sift.firstOctave", firstOctave, -1, 0);
    checkRange("sift.numOctaves", numOctaves, 0, 16);
    checkRange("sift.scalesPerOctave", scalesPerOctave, 1, 8);
    checkRange("sift.sigma", sigma, 0.8f, 4.0f);
    checkRange("sift.inputSigma", inputSigma, 0.0f, 2.0f);
    checkRange("sift.peakThreshold", peakThreshold, 0.0f, 1.0f);
    checkRange("sift.edgeThreshold", edgeThreshold, 1.0f, 1000.0f);
    checkRange("sift.maxOrientations", maxOrientations, 1, 4);
    checkRange("sift.claheClipLimit", claheClipLimit, 1.0f, 100.0f);
    checkRange("sift.claheTiles", claheTiles, 1, 64);
  }
};

}  // namespace vidmap::features
