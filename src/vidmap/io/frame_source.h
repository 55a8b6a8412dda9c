// Frames in: one interface over (a) a folder of images in natural name order, (b) a TUM-style
// list file ("timestamp path" lines, '#' comments, paths relative to the list's folder) and
// (c) a video file decoded by FFmpeg. Video and lists are sampled at `fps`: for each target
// time t0 + k / fps the source yields the first frame whose timestamp is >= that time, and a
// frame is yielded at most once (targets it already covers are skipped). Video: damaged
// packets and frames are skipped, a truncated file ends after its last whole frame; rotation
// metadata and non-square pixel aspect are not applied.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "vidmap/core/image.h"

namespace vidmap::io {

struct Frame {
  int index = 0;         // 0, 1, 2, ... in the order yielded
  int sourceIndex = 0;   // position in the source: decoded frame number, list line, file index
  double timestamp = 0;  // seconds: video from the stream's pts (first frame's time is the
                         // stream start, 0), lists as written, folders index / fps
  GrayImage gray;        // Rec. 601 luma in [0, 1]
  RgbImage rgb;          // 8-bit colour
  std::string name;      // the image's file name, or "frame_000123" (decoded number) for video
  // gray is lumaRec601 (color.h) of rgb, pixel for pixel (video, and 8-bit image files read at
  // their own size), so a consumer may take rgb in its place (features::Sift::extract(rgb,
  // gray) uploads the 3 bytes a pixel to the GPU instead of the 4 of the float).
  bool grayIsLumaOfRgb = false;
};

// What a folder of images holds: the frames of one video (sampled in time like a video), or
// photos (every image, in name order). kAuto decides by the names and sizes
// (looksLikeVideoFrames).
enum class FolderKind { kAuto, kVideo, kPhotos };

struct FrameSourceOptions {
  double fps = 4;          // sampling rate for video, lists and video folders, (0, 120];
                           // nominal rate of photo folders
  bool allFrames = false;  // yield every frame of a video, list or video folder (no sampling)
  int width = 0;           // resize to this width keeping the aspect, [16, 16384]; 0 = native
  FolderKind folder = FolderKind::kAuto;
  // Frames per second of a folder of video frames (their names carry no time), (0, 1000].
  double folderFrameRate = 30;
  // Folders and lists: the header of every frame is read when the source opens, so an
  // unreadable frame or one of another size fails before any work. With skipBadFrames such
  // frames (and frames whose pixels fail to decode later) are skipped and listed in report().
  bool skipBadFrames = false;

  void check() const;  // throws vidmap::Error naming the bad field and its range
};

enum class SourceKind { kImageFolder, kImageList, kVideo };

struct FrameSourceInfo {
  SourceKind kind = SourceKind::kImageFolder;
  std::filesystem::path path;
  int nativeWidth = 0, nativeHeight = 0;  // size of the source's frames
  int width = 0, height = 0;              // size of the yielded frames
  double fps = 0;        // the sampling rate used (video, lists) or the nominal rate (folders)
  double sourceFps = 0;  // video: the stream's average frame rate; 0 when unknown
  double duration = 0;   // seconds; 0 when unknown
  long frameCount = -1;  // frames this source will yield: exact for folders and lists, an
                         // estimate for video from its duration; -1 when unknown
  std::string codec;     // video: decoder name
  // Frames of one video in time order (a video, a list, a folder of video frames), as
  // opposed to photos; and why a folder was taken for either ("numbered names ...").
  bool sequential = false;
  std::string reason;
};

// What the source could not read, for the summary and the run record.
struct SourceReport {
  int decodeErrors = 0;              // video: damaged packets or frames skipped
  bool endedEarly = false;           // video: the stream ended before the container said it would
  long framesExpected = -1;          // video: the container's frame count (-1: unknown)
  long framesDecoded = 0;            // video: frames decoded up to the end
  double secondsExpected = 0;        // video: the container's duration (0: unknown)
  double secondsDecoded = 0;         // video: the time the last decoded frame covers
  std::vector<std::string> skipped;  // folders, lists: "file: reason" of each skipped frame
  bool reachedEnd = false;           // the figures above cover the whole input

  bool damaged() const { return decodeErrors > 0 || endedEarly || !skipped.empty(); }
  std::string describe() const;  // one line, "" when nothing is wrong
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual const FrameSourceInfo& info() const = 0;
  // Reads the next frame into `frame` (reusing its buffers) and returns true, or returns false
  // at the end. Throws vidmap::Error for an unreadable frame.
  virtual bool next(Frame& frame) = 0;
  // Damage met so far (complete once next() has returned false).
  virtual SourceReport report() const { return {}; }
};

// Opens `path`: a folder -> image folder; a file ending in .txt -> list; other files -> video.
// Throws vidmap::Error for a missing path, bad options, no frames, an unreadable first frame,
// or a video when the build has no FFmpeg.
std::unique_ptr<FrameSource> openFrameSource(const std::filesystem::path& path,
                                             const FrameSourceOptions& options = {});

// The files an input consists of, for outputs that must never replace one: a video file
// itself; a list file and the images its lines name; a folder's image files. Lines of a list
// that do not parse are ignored here (opening the list reports them).
std::vector<std::filesystem::path> inputFiles(const std::filesystem::path& input);

// True when this build can decode (and write) video through FFmpeg.
bool videoSupported();

// True when files (in natural order) look like the frames of one video: at least minFrames
// files (one second of 30 Hz video: numbered photo sets such as Strecha's 11 or Middlebury's
// 16 images stay photos), names of one pattern PREFIX NUMBER SUFFIX (as ffmpeg's
// frames/%05d.png) with numbers at one step, and one image size (read from up to 9 files
// spread over the folder). `why` says what decided.
bool looksLikeVideoFrames(const std::vector<std::filesystem::path>& files, std::string* why,
                          int minFrames = 30);

// "abc2" < "abc10": digit runs compare as numbers, the rest byte by byte.
bool naturalLess(const std::string& a, const std::string& b);

// The image files (png, jpg, jpeg, pgm, ppm, pnm; any case; no hidden files) of a folder in
// natural name order.
std::vector<std::filesystem::path> listImageFiles(const std::filesystem::path& folder);

}  // namespace vidmap::io
