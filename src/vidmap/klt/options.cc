#include "vidmap/klt/options.h"

#include <sstream>

#include "vidmap/core/check.h"
#include "vidmap/core/error.h"

namespace vidmap::klt {

const char* endReasonName(int reason) {
  switch (reason) {
    case 0:
      return "alive";
    case 1:
      return "out_of_frame";
    case 2:
      return "low_structure";
    case 3:
      return "no_convergence";
    case 4:
      return "forward_backward";
    case 5:
      return "ncc";
    case 6:
      return "epipolar";
    case 7:
      return "age";
    default:
      return "unknown";
  }
}

void Options::check() const {
  checkRange("klt.levels", levels, 1, kMaxLevels);
  checkRange("klt.halfWindow", halfWindow, 1, kMaxHalfWindow);
  checkRange("klt.maxIterations", maxIterations, 1, 255);  // bits 16-23 of the status word
  checkRange("klt.epsilonPx", epsilonPx, 1e-6f, 100.0f);
  checkRange("klt.minEigThreshold", minEigThreshold, 0.0f, 1.0f);
  checkRange("klt.fbThresholdPx", fbThresholdPx, 0.0f, 1e30f);
  checkRange("klt.nccThreshold", nccThreshold, -2.0f, 1.0f);
  checkRange("klt.photometric", photometric, 0, 2);
  checkRange("klt.blockSize", blockSize, 1, 2 * halfWindow + 1);
  if (blockSize % 2 == 0)
    throw Error("option klt.blockSize = " + std::to_string(blockSize) + " must be odd");
  checkRange("klt.qualityLevel", qualityLevel, 0.0f, 1.0f);
  checkRange("klt.minDistancePx", minDistancePx, 1.0f, 1024.0f);
  checkRange("klt.maxAgeFrames", maxAgeFrames, 1, 1 << 20);
  checkRange("klt.capacity", capacity, 1, kMaxCapacity);
  checkRange("klt.chunkTracks", chunkTracks, 0, kMaxCapacity);
}

void Options::checkFrame(int width, int height) const {
  check();
  const int need = 2 * halfWindow + 1;
  if (width < need || height < need || width > 32768 || height > 32768) {
    std::ostringstream s;
    s << "frame " << width << " x " << height << " does not fit the KLT window of " << need << " x "
      << need << " px (klt.halfWindow = " << halfWindow << "; frames from " << need
      << " to 32768 px a side)";
    throw Error(s.str());
  }
}

Options optionsFor(int width) {
  Options o;
  if (width >= 960) {  // the 1280 px class of table 2.4
    o.levels = 6;
    o.halfWindow = 10;
  }
  const float scale = static_cast<float>(width) / 640.0f;
  o.minDistancePx = 8.0f * scale;
  o.fbThresholdPx = 0.5f * scale;
  if (o.minDistancePx < 1.0f) o.minDistancePx = 1.0f;
  return o;
}

}  // namespace vidmap::klt
