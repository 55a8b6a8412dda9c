// Frame sources over image files: a folder (natural name order, timestamps index / fps) and a
// TUM RGB-D style list ("timestamp path [more columns]" lines; see the TUM benchmark's file
// formats), sampled in time like a video.
#include <charconv>
#include <cmath>
#include <sstream>

#include "vidmap/core/error.h"
#include "vidmap/io/frame_source_impl.h"
#include "vidmap/io/image_codecs.h"
#include "vidmap/io/image_file.h"
#include "vidmap/io/resize.h"

namespace vidmap::io::detail {
namespace {

namespace fs = std::filesystem;

struct Entry {
  fs::path file;
  double timestamp;
  int sourceIndex;  // file index in the folder, entry index in the list
  int line = 0;     // list line, for messages
};

class ImageSequenceSource : public FrameSource {
 public:
  ImageSequenceSource(FrameSourceInfo info, std::vector<Entry> entries,
                      const FrameSourceOptions& options)
      : info_(std::move(info)), skipBad_(options.skipBadFrames) {
    // Every frame's header before any work: an unreadable frame or one of another size fails
    // now, not after minutes of work on the frames before it (or is skipped, and reported).
    const std::string kind = info_.kind == SourceKind::kImageList ? "list " : "folder ";
    int w = 0, h = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      std::string problem;
      try {
        const ImageHeader hd = readImageHeader(e.file);
        if (w == 0) {
          w = hd.width;
          h = hd.height;
        } else if (hd.width != w || hd.height != h) {
          problem = e.file.string() + ": frame is " + std::to_string(hd.width) + "x" +
                    std::to_string(hd.height) + ", the first frame is " + std::to_string(w) + "x" +
                    std::to_string(h);
        }
      } catch (const Error& err) {
        problem = err.what();
      }
      if (problem.empty()) {
        entries_.push_back(e);
      } else if (skipBad_) {
        report_.skipped.push_back(problem);
      } else {
        throw Error("frame " + std::to_string(i + 1) + " of " + std::to_string(entries.size()) +
                    " in the " + kind + info_.path.string() + " cannot be used: " + problem +
                    " (every frame is checked before the work starts; --skip-bad-frames skips "
                    "such frames)");
      }
    }
    if (entries_.empty())
      throw Error("no frames: none of the " + std::to_string(entries.size()) + " frames of " +
                  info_.path.string() + " can be read (the first: " + report_.skipped.front() +
                  ")");
    // The first frame fixes the native size; read it now so a bad input fails at open. A JPEG
    // is read at its smallest scale for this (the size is the header's); other formats are
    // read whole, and kept for next().
    for (;;) {
      try {
        first_ = readImage(entries_.front().file, 1, 1);
        break;
      } catch (const Error& e) {  // a good header, bad pixels
        if (!skipBad_ || entries_.size() == 1) throw;
        report_.skipped.push_back(e.what());
        entries_.erase(entries_.begin());
      }
    }
    info_.nativeWidth = first_.nativeWidth;
    info_.nativeHeight = first_.nativeHeight;
    if (first_.rgb.width() != info_.nativeWidth || first_.rgb.height() != info_.nativeHeight)
      first_ = {};
    scaledSize(info_.nativeWidth, info_.nativeHeight, options.width, &info_.width, &info_.height);
    info_.frameCount = static_cast<long>(entries_.size());
  }

  SourceReport report() const override {
    SourceReport r = report_;
    r.reachedEnd = pos_ >= entries_.size();
    return r;
  }

  const FrameSourceInfo& info() const override { return info_; }

  bool next(Frame& frame) override {
    while (pos_ < entries_.size()) {
      try {
        read(frame);
        return true;
      } catch (const Error& e) {
        if (!skipBad_) throw;
        report_.skipped.push_back(e.what());  // pixels that fail after a good header
        ++pos_;
      }
    }
    return false;
  }

 private:
  void read(Frame& frame) {
    const Entry& e = entries_[pos_];
    // Frames resized down are read at the smallest JPEG scale that covers the working size.
    const bool smaller = info_.width != info_.nativeWidth || info_.height != info_.nativeHeight;
    ImageData img = pos_ == 0 && !first_.rgb.empty() ? std::move(first_)
                    : smaller                        ? readImage(e.file, info_.width, info_.height)
                                                     : readImage(e.file);
    first_ = {};
    if (img.nativeWidth != info_.nativeWidth || img.nativeHeight != info_.nativeHeight) {
      throw Error(e.file.string() + ": frame is " + std::to_string(img.nativeWidth) + "x" +
                  std::to_string(img.nativeHeight) + ", the first frame is " +
                  std::to_string(info_.nativeWidth) + "x" + std::to_string(info_.nativeHeight));
    }
    if (img.rgb.width() != info_.width || img.rgb.height() != info_.height) {
      frame.gray = resizeImage(img.gray, info_.width, info_.height);
      frame.rgb = resizeImage(img.rgb, info_.width, info_.height);
    } else {
      frame.gray = std::move(img.gray);
      frame.rgb = std::move(img.rgb);
    }
    frame.index = emitted_++;
    frame.sourceIndex = e.sourceIndex;
    frame.timestamp = e.timestamp;
    frame.name = e.file.filename().string();
    ++pos_;
  }

 private:
  FrameSourceInfo info_;
  bool skipBad_;
  std::vector<Entry> entries_;
  ImageData first_;
  size_t pos_ = 0;
  int emitted_ = 0;
  SourceReport report_;
};

std::unique_ptr<FrameSource> make(FrameSourceInfo info, std::vector<Entry> entries,
                                  const FrameSourceOptions& options) {
  return std::make_unique<ImageSequenceSource>(std::move(info), std::move(entries), options);
}

}  // namespace

std::unique_ptr<FrameSource> openImageFolder(const fs::path& folder,
                                             const FrameSourceOptions& options) {
  auto files = listImageFiles(folder);
  if (files.empty()) {
    throw Error("no frames: folder " + folder.string() +
                " has no image files (png, jpg, jpeg, pgm, ppm, pnm)");
  }
  std::vector<Entry> entries;
  for (size_t i = 0; i < files.size(); ++i) {
    entries.push_back({files[i], static_cast<double>(i) / options.fps, static_cast<int>(i), 0});
  }
  FrameSourceInfo info;
  info.kind = SourceKind::kImageFolder;
  info.path = folder;
  info.fps = options.fps;
  info.duration = static_cast<double>(files.size()) / options.fps;
  return make(std::move(info), std::move(entries), options);
}

std::unique_ptr<FrameSource> openImageList(const fs::path& list,
                                           const FrameSourceOptions& options) {
  auto bytes = readFileBytes(list.string(), "list file");
  std::string text(bytes.begin(), bytes.end());
  fs::path base = list.parent_path();
  std::vector<Entry> all;
  std::istringstream lines(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(lines, line)) {
    ++lineNo;
    std::istringstream fields(line);
    std::string stamp, file;
    if (!(fields >> stamp) || stamp[0] == '#') continue;  // blank line or comment
    std::string where = list.string() + " line " + std::to_string(lineNo);
    if (!(fields >> file)) throw Error(where + ": expected 'timestamp path', got '" + line + "'");
    double t = 0;
    auto [end, ec] = std::from_chars(stamp.data(), stamp.data() + stamp.size(), t);
    if (ec != std::errc() || end != stamp.data() + stamp.size() || !std::isfinite(t)) {
      throw Error(where + ": timestamp '" + stamp + "' is not a number");
    }
    if (!all.empty() && t < all.back().timestamp) {
      throw Error(where + ": timestamp " + stamp + " is before the previous line's");
    }
    fs::path p(file);
    all.push_back({p.is_absolute() ? p : base / p, t, static_cast<int>(all.size()), lineNo});
  }
  if (all.empty()) throw Error("no frames: list " + list.string() + " has no entries");
  if (all.size() > 1 && all.back().timestamp == all.front().timestamp && !options.allFrames)
    throw Error("list " + list.string() + ": all " + std::to_string(all.size()) +
                " timestamps are equal (" + std::to_string(all.front().timestamp) +
                "), so sampling in time keeps one frame; give real timestamps, or --all-frames");

  TimeSampler sampler(options.fps, options.allFrames);
  std::vector<Entry> picked;
  for (const Entry& e : all) {
    if (!sampler.take(e.timestamp - all.front().timestamp)) continue;
    std::error_code ec;
    if (!options.skipBadFrames && !fs::is_regular_file(e.file, ec)) {
      throw Error(list.string() + " line " + std::to_string(e.line) +
                  ": image file does not exist: " + e.file.string());
    }
    picked.push_back(e);
  }
  FrameSourceInfo info;
  info.kind = SourceKind::kImageList;
  info.path = list;
  info.duration = all.back().timestamp - all.front().timestamp;
  // Every frame: report the list's mean rate.
  info.fps = !options.allFrames  ? options.fps
             : info.duration > 0 ? (all.size() - 1) / info.duration
                                 : options.fps;
  return make(std::move(info), std::move(picked), options);
}

}  // namespace vidmap::io::detail
