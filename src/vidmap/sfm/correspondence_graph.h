// The correspondence graph of the mapper (after COLMAP's scene/correspondence_graph.h): for
// each keypoint of each keyframe, the keypoints of other keyframes it was matched to by a
// verified pair. Registration looks up 2D-3D correspondences through it, and triangulation
// finds the observations of a new point through it. Union-find tracks (tracks.h) summarise the
// same matches offline; the graph keeps every edge, so a wrong match cuts nothing.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "vidmap/sfm/tracks.h"

namespace vidmap::sfm {

class CorrespondenceGraph {
 public:
  // Images must be added in id order 0, 1, 2, ...
  void addImage(int id, int numKeypoints);
  int numImages() const { return static_cast<int>(corr_.size()); }
  // Adds the matches (keypoint of image1, keypoint of image2) of a verified pair. A pair is
  // added once; keypoint or image indices out of range are a vidmap::Error.
  void addPair(int image1, int image2, const std::vector<std::pair<int, int>>& matches);
  bool hasPair(int a, int b) const;
  // The matches of a pair as (keypoint of a, keypoint of b), empty when unknown.
  std::vector<std::pair<int, int>> pairMatches(int a, int b) const;
  const std::vector<FeatureRef>& correspondences(int image, int keypoint) const {
    return corr_[image][keypoint];
  }
  int numKeypoints(int image) const { return static_cast<int>(corr_[image].size()); }
  // Images sharing a verified pair with `image`, and the number of matches.
  const std::map<int, int>& neighbours(int image) const { return neighbours_[image]; }
  // Keypoints of `image` with at least one correspondence.
  int numObservable(int image) const { return observable_[image]; }

 private:
  std::vector<std::vector<std::vector<FeatureRef>>> corr_;
  std::vector<std::map<int, int>> neighbours_;
  std::vector<int> observable_;
};

}  // namespace vidmap::sfm
