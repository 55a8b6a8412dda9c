// klt::Tracker: the pyramidal Lucas-Kanade tracker of a frame sequence (design
// 000_c38999b64056711c, 5.1 as amended in step 4). Each push converts or takes the gray
// frame, builds its pyramid, tracks every alive track forward and backward from the previous
// frame, checks the result (forward-backward error, NCC), ends tracks older than
// maxAgeFrames, and on the first frame and on keyframes selects new points (Shi-Tomasi cells
// with the suppression of 3.4). The table of tracks lives on the host (Step 4, decision 3):
// the backend's checked records are read once per push.
//
// Results do not depend on how the tracks are split into backend calls (Options::chunkTracks).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "vidmap/core/image.h"
#include "vidmap/klt/backend.h"
#include "vidmap/klt/options.h"

namespace vidmap::klt {

// The alive tracks, as flat arrays of equal length (docs/architecture.md, KLT: the tracker).
struct TrackTable {
  std::vector<std::int64_t> id;     // a counter over the tracker's life
  std::vector<float> x, y;          // position in the last pushed frame
  std::vector<int> seedFrame;       // index of the push that created the track
  std::vector<float> seedX, seedY;  // position in that frame
  std::vector<int> seedKeypoint;    // SIFT keypoint of the seed, -1 for fill-in points
  std::vector<int> age;             // pushes tracked since the seed
  std::vector<float> measure;       // last forward-backward error (lambda_min for new seeds)

  int size() const { return static_cast<int>(id.size()); }
  void clear();
  // Appends row i of `from` unchanged.
  void appendRow(const TrackTable& from, int i);
  // Appends a new track at (x, y) of push seedFrame, age 0.
  void appendNew(std::int64_t trackId, float x, float y, float measure, int seedFrame,
                 int keypoint);
};

// A track that ended in a push: where it was last computed and why it ended.
struct EndedTrack {
  std::int64_t id = 0;
  int reason = 0;  // EndReason
  float x = 0, y = 0;
  int seedFrame = 0;
  int age = 0;  // pushes it was tracked, including the last
};

// The table update of a push, the one for every tracker (Tracker, CudaBatchTracker; the
// device's compaction of the alive tracks applies the same pushEndReason of kernels.h): row i
// of `table` with checked record checked[i] and age + 1 ends when pushEndReason says so
// (appended to *ended, counted in (*ends)[reason]); the survivors go to *next in table order
// with the checked position and measure.
void advanceTable(const TrackTable& table, const TrackRecord* checked, int maxAgeFrames,
                  TrackTable* next, std::vector<EndedTrack>* ended,
                  std::array<int, kEndReasonCount>* ends);

// What one push did: tracks in and alive, ends by reason, the selection and
// the wall time of each stage in milliseconds.
struct StepReport {
  int frame = 0;
  bool selection = false;  // first frame or keyframe
  int tracksIn = 0;
  int alive = 0;                            // after the push, including new points
  std::array<int, kEndReasonCount> ends{};  // by reason; ends[0] is unused
  int selected = 0;
  int appended = 0;
  int chunks = 0;  // backend track calls per direction
  double msUpload = 0, msPyramid = 0, msTrack = 0, msCheck = 0, msSelect = 0, msTotal = 0;

  int ended() const;
};

// A point to start a track at : a SIFT keypoint of a keyframe (keypoint >= 0) or
// any pixel (keypoint -1).
struct Seed {
  float x = 0, y = 0;
  int keypoint = -1;
};

// What Tracker::seed did: seeds that passed the minimum-eigenvalue test and were appended,
// and the fill-in picks appended after them.
struct SeedReport {
  int offered = 0, accepted = 0, fillIn = 0;
  double msSelect = 0;
};

class Tracker {
 public:
  // A tracker for frames of width x height; the CPU backend unless one is given (it must
  // have been made with the same size and options). Throws vidmap::Error on bad options or
  // a frame too small for the window.
  Tracker(int width, int height, const Options& options = Options{},
          std::unique_ptr<Backend> backend = nullptr);

  StepReport push(const GrayImage& gray, bool keyframe = false);
  StepReport push(ImageView<const float> gray, bool keyframe = false);
  StepReport push(ImageView<const Rgb8> rgb, bool keyframe = false);

  // Starts tracks in the last pushed frame (the keyframe of the pipeline):
  // first the given seeds that pass the minimum-eigenvalue test (lambda_min of the selection
  // map per block pixel >= minEigThreshold, the test of reason 2), lie a full window inside the
  // frame and are not within 1 px of an alive track or an earlier seed, in the given order, up to
  // capacity; then, when fillIn, the Shi-Tomasi selection of the push around all of
  // them. New tracks are appended to the table with age 0. Needs a push before.
  // `minQuality` > 0 also asks of a seed lambda_min >= minQuality times the largest of the
  // frame (the quality test of the Shi-Tomasi picks, Options::qualityLevel).
  SeedReport seed(const std::vector<Seed>& seeds, bool fillIn, float minQuality = 0);
  // Ends the alive tracks of these ids with `reason` (the mapper's epipolar rejection, design
  // 3.5 item 6): they leave the table and are appended to ended(). Unknown ids are ignored.
  // Returns how many ended.
  int end(const std::vector<std::int64_t>& ids, EndReason reason);
  // The age of an alive track restarts (a keyframe join re-anchors it to a SIFT keypoint).
  void resetAge(int index) { table_.age[index] = 0; }
  // Off: a push never selects (not even the first); selection only through seed().
  void setAutoSelect(bool on) { autoSelect_ = on; }

  const TrackTable& tracks() const { return table_; }
  const std::vector<EndedTrack>& ended() const { return ended_; }  // in the last push
  // The checked records of the last push, in the order of the table before it.
  const std::vector<TrackRecord>& lastChecked() const { return checked_; }

  int width() const { return width_; }
  int height() const { return height_; }
  int frames() const { return frame_; }
  const Options& options() const { return options_; }
  Backend& backend() { return *backend_; }
  std::size_t residentBytes() const { return backend_->residentBytes(); }
  // Synchronize the backend after each stage so the stage times are exact (default on).
  void setStageTiming(bool on) { stageTiming_ = on; }

 private:
  template <class Upload>
  StepReport pushImpl(Upload upload, bool keyframe);
  void trackAndCheck(int cur, StepReport* report);
  void select(int cur, int seedFrame, StepReport* report);
  void appendTrack(float x, float y, float measure, int seedFrame, int keypoint);
  void uploadTable();

  int width_, height_;
  Options options_;
  std::unique_ptr<Backend> backend_;
  TrackTable table_;
  std::vector<EndedTrack> ended_;
  std::vector<TrackRecord> checked_;
  std::vector<TrackRecord> seeds_;
  std::int64_t nextId_ = 0;
  int frame_ = 0;
  int prevSlot_ = 0;
  bool stageTiming_ = true;
  bool autoSelect_ = true;
  std::vector<float> eigen_;  // the lambda_min map read back for seed()
};

}  // namespace vidmap::klt
