// KltSource: the KLT tracks as a PairMatchSource (docs/architecture.md,
// "Pair sources" and "KLT"). The tracker (klt::Tracker, CPU or CUDA backend) advances on every
// sampled frame, from the gray image the frame source converted once (io::Frame::gray, the same
// image SIFT detects on). At a keyframe K2 every alive track that carries a keyframe keypoint joins
// the nearest SIFT keypoint of K2 within joinRadiusPx (unique claim, nearest first) and gives the
// matches (Kc keypoint, K2 keypoint) for the last chainKeyframes keyframes Kc it joined before,
// so a track seeded at K1 and alive at K4 gives (K1, K2), (K1, K3), (K1, K4) ...; an unjoined
// track keeps going and may join K3. The keypoints no track claimed become seeds (those that
// pass the minimum-eigenvalue test), then Shi-Tomasi fill-in picks around them; a fill-in
// track starts its chain at the nearest keypoint of its keyframe within joinRadiusPx, if any.
// Matches that the mapper's pair verification rejects end their tracks (reason 6, kEpipolar);
// a join restarts a track's age (the age of docs/architecture.md, "KLT: checks and ends"). Between
// keyframes the alive tracks give the keyframe gate its motion. With matches off the joins still
// run (they carry the tracks' keyframe keypoints, which localise the frames the gate drops) but
// their matches are not handed out.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vidmap/io/run_record.h"
#include "vidmap/klt/tracker.h"
#include "vidmap/pipeline/pair_source.h"

namespace vidmap::gpu {
class Context;
}

namespace vidmap::pipeline {

struct KltSourceOptions {
  // At 640 px, scaled by width. A join farther than 1 px from its track is more often a
  // nearby keypoint than the track's own: at 2 px the joins tipped the self-calibrated camera
  // of TUM fr1-desk at 4 fps to 13371 px (docs/benchmarks.md, "KLT track matches on
  // fr1-desk"); at 1 px it keeps --klt off's 560 px.
  double joinRadiusPx = 1;
  // Shi-Tomasi picks beside the SIFT seeds. Off: measured in docs/benchmarks.md ("KLT
  // tracks in the mapper"), they shorten the joined tracks and make the gate fire early.
  bool fillIn = false;
  int capacity = 4096;       // most alive tracks (SIFT keeps up to 4096 keypoints a keyframe)
  int levels = 0;            // pyramid levels (0: klt::optionsFor(width), 5 at 640 px)
  double fbThresholdPx = 0;  // forward-backward bound at 640 px (0: klt::optionsFor, 0.5)
  // A SIFT seed needs lambda_min >= seedQuality times the frame's largest (0: only the
  // tracker's low-structure test).
  double seedQuality = 0;
  // Off (`--klt gate`): the tracks drive the keyframe gate and localise the frames it drops,
  // but give the mapper no pair matches; the keyframes' pairs are the descriptor matches
  // alone (docs/benchmarks.md, "KLT: tracks for the gate, descriptors for the matches").
  bool matches = true;
  int chainKeyframes = 8;  // a join matches the last this many keyframes of the track
  int minGateTracks = 64;  // fewer alive tracks: the gate falls back to descriptor matches
  // Keyframes between a keyframe and the frame at which its verification's outliers end their
  // tracks: those of keyframe k end at the first frame after keyframe k + outlierLag. At 0
  // the tracker waits for each keyframe's verification before it advances, so the front end
  // and the mapper take turns; at 1 the front end tracks, extracts and matches keyframe k + 1
  // while the mapper verifies keyframe k (pipeline/frontend_worker.h). Applied at the same
  // frame on one thread or two: the same model either way. An outlier track left alive one
  // keyframe longer can join keyframe k + 1, whose verification rejects that match as well.
  // 0 by default: at 1 the H200 gained 60-100 ms of 2 s on TUM fr1-rpy, inside its run-to-run
  // spread, and the CPU's rotation error there moved 1.59 -> 1.88 deg (docs/benchmarks.md,
  // "The KLT outliers' lag").
  int outlierLag = 0;
  bool cuda = false;  // the CUDA backend of the tracker (builds with it only)

  void check() const;  // throws vidmap::Error naming the bad field
};

struct KltStats {
  int pushes = 0, keyframes = 0, resets = 0;
  double msUpload = 0, msPyramid = 0, msTrack = 0, msCheck = 0, msSelect = 0, msJoin = 0;
  std::int64_t aliveSum = 0;  // alive tracks summed over pushes (mean = aliveSum / pushes)
  int aliveMax = 0;
  std::array<std::int64_t, klt::kEndReasonCount> ends{};
  std::int64_t seeds = 0, fillIn = 0, joins = 0, matches = 0;
  std::int64_t joinCandidates = 0;  // alive tracks at keyframes, before the join (joins / this)
  // Ends of the tracks that never joined a second keyframe (chain of one keyframe or none),
  // by reason: why tracks die before the next keyframe.
  std::array<std::int64_t, klt::kEndReasonCount> endsUnjoined{};
  // Keyframes a track was joined to (its length in keyframes), for the tracks that ended:
  // index k counts tracks of k keyframes (the last bin: that many or more).
  std::array<std::int64_t, 17> lengthHistogram{};

  double meanTrackKeyframes() const;
  void writeTo(io::RunRecord& record) const;
};

class KltSource : public PairMatchSource {
 public:
  explicit KltSource(const KltSourceOptions& options);
  ~KltSource() override;

  const char* name() const override { return "klt"; }
  void onFrame(const io::Frame& frame) override;
  std::vector<sfm::PairMatches> onKeyframe(int keyframeId,
                                           const features::Features& features) override;
  void onOutliers(const sfm::PairMatches& outliers) override;
  bool gateMotion(int lastKeyframe, sfm::GateTracks* tracks,
                  sfm::TrackedFrame* observed) const override;

  const KltStats& stats() const { return stats_; }
  const klt::Tracker* tracker() const { return tracker_.get(); }
  // The keyframe keypoints of an alive track's chain, oldest first (tests).
  struct Link {
    int keyframe = 0, keypoint = 0;
  };
  const std::vector<Link>* chain(std::int64_t trackId) const;
  // Outliers received and not yet applied (tests).
  int pendingOutlierPairs() const;

 private:
  struct TrackInfo {
    std::vector<Link> chain;
    float kfX = 0, kfY = 0;  // position at the last keyframe
  };
  void reset(int width, int height);
  void retire(std::int64_t id, int reason);
  void startTracks(int first, int keyframeId, const features::Features& features);
  void applyOutliers(const sfm::PairMatches& pm);
  void applyDueOutliers();  // those of keyframes up to newestKeyframe_ - outlierLag

  KltSourceOptions options_;
  std::shared_ptr<gpu::Context> ctx_;  // shared_ptr: complete only in CUDA builds
  std::unique_ptr<klt::Tracker> tracker_;
  int width_ = 0, height_ = 0;
  std::unordered_map<std::int64_t, TrackInfo> info_;
  // (keyframe, keypoint) -> the track that claimed it (seeded there or joined it).
  std::unordered_map<std::int64_t, std::int64_t> claims_;
  int keyframeTracks_ = 0;  // alive tracks after the last keyframe's seeding
  int newestKeyframe_ = -1;
  // Outliers by the keyframe whose verification made them (the newer of the pair), in the
  // order received; onOutliers runs on the mapper's thread when pipelined.
  mutable std::mutex pendingMutex_;
  std::deque<std::pair<int, sfm::PairMatches>> pending_;
  KltStats stats_;
};

}  // namespace vidmap::pipeline
