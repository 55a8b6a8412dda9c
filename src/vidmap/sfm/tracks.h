// Feature tracks from pairwise matches: the connected components of the graph whose nodes
// are (image, feature) and whose edges are verified matches, found with union-find (as
// OpenMVG's tracks and Moulon and Monasse, "Unordered feature tracking made fast and easy",
// CVMP 2012). A component that holds two different features of one image is inconsistent
// (a wrong match somewhere on the chain) and is dropped, as that paper does.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace vidmap::sfm {

struct FeatureRef {
  int image = 0;
  int feature = 0;
  bool operator==(const FeatureRef& o) const { return image == o.image && feature == o.feature; }
};

struct PairMatches {
  int image1 = 0, image2 = 0;
  std::vector<std::pair<int, int>> matches;  // (feature in image1, feature in image2)
  // An essential matrix known for the pair (x2^T E x1 = 0 in normalised coordinates of the
  // undistorted keypoints, row-major; the guide's E of guided matching): the first hypothesis
  // of the pair's verification.
  std::optional<std::array<double, 9>> essential{};
  // matches[firstTrackMatch..] came from KLT tracks alone (pipeline/klt_source.h), the ones
  // before from descriptors; -1: all from descriptors. The mapper checks the track matches
  // against the descriptors' geometry of the pair (sfm/pair_verification.h).
  int firstTrackMatch = -1;
};

struct TrackSet {
  std::vector<std::vector<FeatureRef>> tracks;  // each sorted by image, length >= 2
  int dropped_inconsistent = 0;                 // components with a repeated image
};

// numFeatures[i] is the feature count of image i; matches naming a feature out of range or
// an image out of range are a vidmap::Error.
TrackSet buildTracks(const std::vector<int>& numFeatures, const std::vector<PairMatches>& pairs);

}  // namespace vidmap::sfm
