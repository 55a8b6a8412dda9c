// Internal to io: the frame source implementations behind openFrameSource, and the sampling
// rule they share.
#pragma once

#include <cmath>

#include "vidmap/io/frame_source.h"

namespace vidmap::io::detail {

// For each target time k / fps (seconds since the source start) takes the first frame at or
// after it, and each frame at most once. Times within 1 microsecond count as equal, so pts
// rounding never moves a pick.
class TimeSampler {
 public:
  TimeSampler(double fps, bool all) : fps_(fps), all_(all) {}
  bool take(double t) {
    if (all_) return true;
    if (t < next_ / fps_ - kEps) return false;
    next_ = std::floor((t + kEps) * fps_) + 1;  // the first target after t
    return true;
  }

 private:
  static constexpr double kEps = 1e-6;
  double fps_;
  bool all_;
  double next_ = 0;
};

std::unique_ptr<FrameSource> openImageFolder(const std::filesystem::path& folder,
                                             const FrameSourceOptions& options);
std::unique_ptr<FrameSource> openImageList(const std::filesystem::path& list,
                                           const FrameSourceOptions& options);
std::unique_ptr<FrameSource> openVideo(const std::filesystem::path& video,
                                       const FrameSourceOptions& options);

// Fills frame.gray from frame.rgb (Rec. 601).
void grayFromRgb(const RgbImage& rgb, GrayImage& gray);

}  // namespace vidmap::io::detail
