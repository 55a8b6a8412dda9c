// Frame sources over image files: a folder (natural name order, timestamps index / fps) and a
// TUM RGB-D style list ("timestamp path [more columns]" lines; see the TUM benchmark's file
// formats), sampled in time like a video.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
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
      frame.grayIsLumaOfRgb = false;  // each resized on its own
    } else {
      frame.gray = std::move(img.gray);
      frame.rgb = std::move(img.rgb);
      frame.grayIsLumaOfRgb = img.grayIsLumaOfRgb;
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

// A file name as PREFIX NUMBER SUFFIX, NUMBER its last run of digits.
struct NumberedName {
  std::string prefix, suffix;
  std::string digits;
};

bool splitNumbered(const std::string& name, NumberedName* out) {
  const std::size_t end = name.find_last_of("0123456789");
  if (end == std::string::npos) return false;
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  out->prefix = name.substr(0, begin);
  out->digits = name.substr(begin, end + 1 - begin);
  out->suffix = name.substr(end + 1);
  return true;
}

// A digit run as a number; false beyond 18 digits (a timestamp, not a frame number).
bool parseNumber(const std::string& digits, long long* v) {
  if (digits.size() > 18) return false;
  return std::from_chars(digits.data(), digits.data() + digits.size(), *v).ec == std::errc();
}

// The width and height of an image file: a PNG's from its header, other formats decoded (a
// JPEG at its smallest scale).
std::pair<int, int> imageSize(const fs::path& file) {
  std::ifstream f(file, std::ios::binary);
  unsigned char h[24] = {};
  if (f.read(reinterpret_cast<char*>(h), sizeof h) && h[0] == 0x89 && h[1] == 'P' && h[2] == 'N' &&
      h[3] == 'G') {
    auto be = [&](int o) {
      return static_cast<int>((std::uint32_t(h[o]) << 24) | (std::uint32_t(h[o + 1]) << 16) |
                              (std::uint32_t(h[o + 2]) << 8) | std::uint32_t(h[o + 3]));
    };
    return {be(16), be(20)};
  }
  const ImageData d = readImage(file, 1, 1);
  return {d.nativeWidth, d.nativeHeight};
}

}  // namespace

}  // namespace vidmap::io::detail

namespace vidmap::io {

namespace fs = std::filesystem;

bool looksLikeVideoFrames(const std::vector<fs::path>& files, std::string* why, int minFrames) {
  auto say = [&](std::string s) {
    if (why) *why = std::move(s);
    return false;
  };
  const std::size_t least = static_cast<std::size_t>(std::max(3, minFrames));
  if (files.size() < least)
    return say(std::to_string(files.size()) + " images (video frames are " + std::to_string(least) +
               " or more)");
  // One pattern, and numbers at one step (every frame, or every n-th, of a video).
  detail::NumberedName first, cur;
  long long n0 = 0, prev = 0, step = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string name = files[i].filename().string();
    long long v = 0;
    if (!detail::splitNumbered(name, &cur) || !detail::parseNumber(cur.digits, &v))
      return say("\"" + name + "\" has no frame number");
    if (i == 0) {
      first = cur;
      n0 = v;
    } else {
      if (cur.prefix != first.prefix || cur.suffix != first.suffix)
        return say("names of more than one pattern (\"" + files[0].filename().string() + "\", \"" +
                   name + "\")");
      if (i == 1) step = v - n0;
      if (step <= 0 || v - prev != step)
        return say("frame numbers not evenly spaced (\"" + files[i - 1].filename().string() +
                   "\", \"" + name + "\")");
    }
    prev = v;
  }
  // Sizes of up to 9 files spread over the folder, the first and the last among them.
  const std::size_t n = files.size(), samples = std::min<std::size_t>(9, n);
  const auto size0 = detail::imageSize(files[0]);
  for (std::size_t k = 1; k < samples; ++k) {
    const std::size_t i = k * (n - 1) / (samples - 1);
    const auto s = detail::imageSize(files[i]);
    if (s != size0)
      return say("images of different sizes (" + files[0].filename().string() + " " +
                 std::to_string(size0.first) + "x" + std::to_string(size0.second) + ", " +
                 files[i].filename().string() + " " + std::to_string(s.first) + "x" +
                 std::to_string(s.second) + ")");
  }
  if (why)
    *why = "numbered names " + files.front().filename().string() + " .. " +
           files.back().filename().string() + " of one size (" + std::to_string(size0.first) + "x" +
           std::to_string(size0.second) + ")";
  return true;
}

}  // namespace vidmap::io

namespace vidmap::io::detail {

std::unique_ptr<FrameSource> openImageFolder(const fs::path& folder,
                                             const FrameSourceOptions& options) {
  auto files = listImageFiles(folder);
  if (files.empty()) {
    throw Error("no frames: folder " + folder.string() +
                " has no image files (png, jpg, jpeg, pgm, ppm, pnm)");
  }
  FrameSourceInfo info;
  info.kind = SourceKind::kImageFolder;
  info.path = folder;
  std::string why;
  const bool looks = looksLikeVideoFrames(files, &why);
  switch (options.folder) {
    case FolderKind::kAuto:
      info.sequential = looks;
      info.reason = why;
      break;
    case FolderKind::kVideo:
      info.sequential = true;
      info.reason = "--sequential";
      break;
    case FolderKind::kPhotos:
      info.sequential = false;
      info.reason = "--photos";
      break;
  }
  std::vector<Entry> entries;
  if (info.sequential) {
    // The frames of a video at folderFrameRate, sampled at fps as a video is.
    const double rate = options.folderFrameRate;
    TimeSampler sampler(options.fps, options.allFrames);
    for (size_t i = 0; i < files.size(); ++i) {
      const double t = static_cast<double>(i) / rate;
      if (sampler.take(t)) entries.push_back({files[i], t, static_cast<int>(i), 0});
    }
    info.fps = options.allFrames ? rate : options.fps;
    info.sourceFps = rate;
    info.duration = static_cast<double>(files.size() - 1) / rate;
  } else {
    // Photos: every image, at the nominal rate fps.
    for (size_t i = 0; i < files.size(); ++i)
      entries.push_back({files[i], static_cast<double>(i) / options.fps, static_cast<int>(i), 0});
    info.fps = options.fps;
    info.duration = static_cast<double>(files.size()) / options.fps;
  }
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
  info.sequential = true;
  info.duration = all.back().timestamp - all.front().timestamp;
  // Every frame: report the list's mean rate.
  info.fps = !options.allFrames  ? options.fps
             : info.duration > 0 ? (all.size() - 1) / info.duration
                                 : options.fps;
  return make(std::move(info), std::move(picked), options);
}

}  // namespace vidmap::io::detail
