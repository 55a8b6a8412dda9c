// Writes frames to a video file through FFmpeg (libavcodec + libavformat), atomically: frames
// go to a temporary file that finish() renames into place; a writer destroyed before finish()
// leaves nothing behind. Codecs: FFV1 (lossless; .mkv, .avi), H.264 (libx264, when the
// FFmpeg build has it) and MPEG-4 part 2 (lossy; .mp4, .mkv, .avi). Without FFmpeg in the
// build, the constructor throws a vidmap::Error.
#pragma once

#include <filesystem>
#include <memory>

#include "vidmap/core/image.h"

namespace vidmap::io {

enum class VideoCodec {
  kAuto,   // by extension: FFV1 for .mkv/.avi, H.264 if available else MPEG-4 for .mp4/.mov
  kFfv1,   // lossless (RGB as planar GBR, or gray when VideoWriterOptions::gray)
  kMpeg4,  // MPEG-4 part 2, YUV 4:2:0, constant quantiser 2 (near-lossless on smooth images)
  kH264,   // libx264, YUV 4:2:0, CRF 18, preset veryfast
};

struct VideoWriterOptions {
  double fps = 30;  // frames per second of the file, (0, 1000]
  VideoCodec codec = VideoCodec::kAuto;
  bool gray = false;  // FFV1 only: store one 8-bit gray channel

  void check() const;  // throws vidmap::Error naming the bad field
};

class VideoWriter {
 public:
  // Opens the encoder for width x height frames (YUV 4:2:0 codecs need both even).
  // Throws vidmap::Error for a missing folder, an unsupported codec or container, bad sizes.
  VideoWriter(const std::filesystem::path& path, int width, int height,
              const VideoWriterOptions& options = {});
  ~VideoWriter();  // without finish(): removes the partial file
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  // Appends a frame of the writer's size; frame k gets the timestamp k / fps.
  void write(const RgbImage& frame);
  void write(const GrayImage& frame);  // [0, 1], clamped and rounded to 8 bits

  // Flushes the encoder, completes the file and renames it into place.
  void finish();

  int framesWritten() const;
  VideoCodec codec() const;  // the codec in use (kAuto resolved)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when this build can encode with `codec` (kAuto: any video at all).
bool videoCodecAvailable(VideoCodec codec);

}  // namespace vidmap::io
