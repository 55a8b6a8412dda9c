// Options of the pyramidal Lucas-Kanade tracker, with the defaults of the design
// (docs/architecture.md, KLT: checks and ends, where the defaults are listed).
// Every pixel distance is given for a 640 px wide frame and scaled by width / 640 in
// optionsFor(width); the 1280 px class gets one more level and a 21 x 21 window.
#pragma once

#include <string>

namespace vidmap::klt {

inline constexpr int kMaxLevels = 8;       // pyramid levels a layout can hold
inline constexpr int kMaxHalfWindow = 15;  // the largest window is 31 x 31
inline constexpr int kMaxWindowPixels = (2 * kMaxHalfWindow + 1) * (2 * kMaxHalfWindow + 1);
inline constexpr int kDefaultCapacity = 1024;
inline constexpr int kMaxCapacity = 8192;

// Why a track ended (docs/architecture.md, KLT: checks and ends). Stored in bits 1-4 of the status
// word.
enum class EndReason : int {
  kNone = 0,             // alive
  kOutOfFrame = 1,       // within halfWindow of the border at level 0 (or left the level)
  kLowStructure = 2,     // lambda_min per window pixel < minEigThreshold at level 0
  kNoConvergence = 3,    // maxIterations reached with the last step >= epsilonPx at level 0
  kForwardBackward = 4,  // forward-backward error > fbThresholdPx (or backward failed)
  kNcc = 5,              // zero-mean NCC of the final window < nccThreshold
  kEpipolar = 6,         // rejected by the pair's epipolar verification (set by the mapper)
  kAge = 7,              // older than maxAgeFrames pushes
};
inline constexpr int kEndReasonCount = 8;  // reasons 0..7 (index 0 = alive)

const char* endReasonName(int reason);

struct Options {
  int levels = 5;                   // pyramid levels (level 0 = the frame)
  int halfWindow = 7;               // window (2 halfWindow + 1)^2: 15 x 15
  int maxIterations = 20;           // fixed Gauss-Newton iteration bound per level
  float epsilonPx = 0.03f;          // converged when |step| < epsilonPx
  float minEigThreshold = 1e-6f;    // lambda_min / window pixels (gray in [0,1], gradient per px)
  float fbThresholdPx = 0.5f;       // forward-backward error bound
  float nccThreshold = 0.8f;        // zero-mean NCC bound of the final window
  int photometric = 2;              // 0 plain SSD, 1 window mean removed, 2 mean and variance
  int blockSize = 3;                // lambda_min block of the selection map (odd)
  float qualityLevel = 0.01f;       // a pick needs lambda_min >= qualityLevel * max
  float minDistancePx = 8.0f;       // spacing of picks and tracks (also the cell size, rounded up)
  int maxAgeFrames = 16;            // a track older than this many pushes ends (reason 7)
  int capacity = kDefaultCapacity;  // most alive tracks
  int chunkTracks = 0;              // tracks per backend call (0: one call); results do not change
  // The CPU backend tracks and makes the pyramid, the gradients and the lambda_min map with
  // AVX2 where the CPU has it (eight lanes of the window loops and of the rows; the same records
  // and maps bit for bit); false: the baseline x86-64 code. As ba::Options::cpuAvx2.
  bool cpuAvx2 = true;

  // Throws vidmap::Error naming the first field out of its range.
  void check() const;
  // check() plus the frame size: the frame must hold at least one full window.
  void checkFrame(int width, int height) const;
};

// The design's defaults for a frame of this width: 640 px class (5 levels, 15 x 15) below
// 960 px, 1280 px class (6 levels, 21 x 21) from 960 px; minDistancePx and fbThresholdPx
// scale with width / 640.
Options optionsFor(int width);

}  // namespace vidmap::klt
