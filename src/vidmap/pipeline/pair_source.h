// A second source of pair matches for the mapper, beside descriptor matching
// (docs/architecture.md, Pair sources): a tracker that follows points from frame to frame and, when
// a frame becomes a keyframe, joins its tracks to the keyframe's SIFT keypoints gives matches
// between keyframes several keyframes apart. Its pairs have the same shape as the descriptor pairs
// (sfm::PairMatches, keypoint indices of the two keyframes) and go through the same
// verification; the pipeline merges the two sources, a match found by both counting once.
#pragma once

#include <cstdint>
#include <vector>

#include "vidmap/features/features.h"
#include "vidmap/io/frame_source.h"
#include "vidmap/sfm/keyframe_gate.h"
#include "vidmap/sfm/reconstruction.h"
#include "vidmap/sfm/tracks.h"

namespace vidmap::pipeline {

class PairMatchSource {
 public:
  virtual ~PairMatchSource() = default;
  virtual const char* name() const = 0;
  // Every sampled frame, in order, before the keyframe decision (a tracker advances here).
  virtual void onFrame(const io::Frame& frame) = 0;
  // The frame just seen became keyframe `keyframeId` with these SIFT features (keypoints in
  // working pixels, as detected). Returns matches of this keyframe against earlier keyframes
  // (PairMatches::image2 == keyframeId).
  virtual std::vector<sfm::PairMatches> onKeyframe(int keyframeId,
                                                   const features::Features& features) = 0;
  // The matches of a pair that verification rejected as outliers (docs/architecture.md, KLT: checks
  // and ends, item 6), so a
  // tracker can end those tracks. Optional.
  virtual void onOutliers(const sfm::PairMatches& outliers) {}
  // The motion of the frame just seen since keyframe `lastKeyframe`, for the keyframe gate
  // (sfm/keyframe_gate.h): the points the source follows, at that keyframe and now (working
  // pixels), with how many it followed at that keyframe, and in `observed` (when not null)
  // those of them that are keypoints of that keyframe, for the localisation of a dropped
  // frame. False when the source cannot tell (too few points): the gate then uses descriptor
  // matches.
  virtual bool gateMotion(int lastKeyframe, sfm::GateTracks* tracks,
                          sfm::TrackedFrame* observed) const {
    return false;
  }
};

// Merges `extra` into `pairs` by (image1, image2); within a pair a match already present is
// not repeated. Pairs are normalised to image1 < image2. Returns the matches added (those
// `pairs` did not hold).
std::int64_t mergePairMatches(std::vector<sfm::PairMatches>& pairs,
                              const std::vector<sfm::PairMatches>& extra);

}  // namespace vidmap::pipeline
