// Video frames through FFmpeg: demux (libavformat), decode (libavcodec), convert and resize to
// RGB24 (libswscale), then Rec. 601 luma. Damaged packets are skipped; a truncated file ends
// after its last decodable frame; a file with no decodable frame is "no frames".
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "vidmap/core/error.h"
#include "vidmap/io/ffmpeg_util.h"
#include "vidmap/io/frame_source_impl.h"
#include "vidmap/io/resize.h"

namespace vidmap::io {

namespace fs = std::filesystem;

#if defined(VIDMAP_HAVE_FFMPEG)

bool videoSupported() { return true; }

namespace detail {

void quietFfmpegLogOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!std::getenv("VIDMAP_FFMPEG_LOG")) av_log_set_level(AV_LOG_FATAL);
  });
}

namespace {

// Consecutive failed decode calls after which the file counts as undecodable: bounds the
// work on a damaged file whose demuxer keeps producing packets.
constexpr int kMaxConsecutiveErrors = 500;

class VideoSource : public FrameSource {
 public:
  VideoSource(const fs::path& path, const FrameSourceOptions& options)
      : path_(path.string()), sampler_(options.fps, options.allFrames) {
    quietFfmpegLogOnce();
    AVFormatContext* fmt = nullptr;
    int r = avformat_open_input(&fmt, path_.c_str(), nullptr, nullptr);
    if (r == AVERROR_EOF) throw Error("cannot open video " + path_ + ": the file ends early");
    if (r < 0) {
      throw Error("cannot open video " + path_ + " (not a video, or damaged): " + avErrorText(r));
    }
    owner_.reset(fmt);
    fmt_ = fmt;
    r = avformat_find_stream_info(fmt_, nullptr);
    if (r < 0) throw Error("cannot read video " + path_ + ": " + avErrorText(r));
    const AVCodec* codec = nullptr;
    stream_ = av_find_best_stream(fmt_, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (stream_ == AVERROR_STREAM_NOT_FOUND)
      throw Error("no frames: " + path_ + " has no video stream");
    if (stream_ < 0 || !codec) {
      throw Error("cannot decode video " + path_ + ": no decoder for its video stream");
    }
    AVStream* st = fmt_->streams[stream_];
    dec_.reset(avcodec_alloc_context3(codec));
    if (!dec_) throw Error("out of memory opening " + path_);
    r = avcodec_parameters_to_context(dec_.get(), st->codecpar);
    if (r >= 0) {
      dec_->thread_count = 0;  // FFmpeg picks
      r = avcodec_open2(dec_.get(), codec, nullptr);
    }
    if (r < 0)
      throw Error("cannot open the " + std::string(codec->name) + " decoder for " + path_ + ": " +
                  avErrorText(r));
    pkt_.reset(av_packet_alloc());
    frame_.reset(av_frame_alloc());
    if (!pkt_ || !frame_) throw Error("out of memory opening " + path_);
    tb_ = st->time_base;
    start_ = st->start_time;
    AVRational rate = av_guess_frame_rate(fmt_, st, nullptr);
    info_.kind = SourceKind::kVideo;
    info_.sequential = true;
    info_.path = path;
    info_.codec = codec->name;
    info_.sourceFps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0;
    info_.fps = options.allFrames ? info_.sourceFps : options.fps;
    if (st->duration != AV_NOPTS_VALUE && st->duration > 0) {
      info_.duration = st->duration * av_q2d(tb_);
    } else if (fmt_->duration != AV_NOPTS_VALUE && fmt_->duration > 0) {
      info_.duration = static_cast<double>(fmt_->duration) / AV_TIME_BASE;
    }
    // The first frame fixes the native size, and a file without one fails here.
    if (!decode()) {
      throw Error("no frames: " + path_ + " has no decodable video frames (" +
                  std::to_string(errors_) + " decode errors)");
    }
    info_.nativeWidth = frame_->width;
    info_.nativeHeight = frame_->height;
    if (info_.nativeWidth <= 0 || info_.nativeHeight <= 0) {
      throw Error(path_ + ": zero-size video frames");
    }
    scaledSize(info_.nativeWidth, info_.nativeHeight, options.width, &info_.width, &info_.height);
    if (st->nb_frames > 0) {
      framesExpected_ = static_cast<long>(st->nb_frames);
    } else if (info_.duration > 0 && info_.sourceFps > 0) {
      framesExpected_ = std::lround(info_.duration * info_.sourceFps);
    }
    if (info_.duration > 0) {
      double n = options.allFrames ? std::round(info_.duration * info_.sourceFps)
                                   : std::ceil(info_.duration * options.fps - 1e-9);
      info_.frameCount = static_cast<long>(n);
      if (st->nb_frames > 0) info_.frameCount = std::min<long>(info_.frameCount, st->nb_frames);
    } else if (st->nb_frames > 0 && options.allFrames) {
      info_.frameCount = static_cast<long>(st->nb_frames);
    }
    havePending_ = true;
  }

  const FrameSourceInfo& info() const override { return info_; }

  SourceReport report() const override {
    SourceReport r;
    r.decodeErrors = errors_;
    r.framesDecoded = decoded_;
    r.framesExpected = framesExpected_;
    r.secondsExpected = info_.duration;
    r.secondsDecoded = secondsDecoded_;
    r.reachedEnd = ended_;
    // The stream ended before the container said it would (a file cut short): by the frame
    // count when the container has one, else by the duration; one frame of slack for
    // rounding.
    const double period = info_.sourceFps > 0 ? 1 / info_.sourceFps : 0;
    if (ended_ && framesExpected_ > 0) {
      r.endedEarly = decoded_ + 1 < framesExpected_;
    } else if (ended_ && info_.duration > 0) {
      r.endedEarly = secondsDecoded_ < info_.duration - 1.5 * period - 0.01;
    }
    return r;
  }

  bool next(Frame& frame) override {
    while (true) {
      if (havePending_) {
        havePending_ = false;
      } else if (!decode()) {
        ended_ = true;
        return false;
      }
      double t = frameTime();
      if (!sampler_.take(t)) continue;
      convert(frame);
      frame.index = emitted_++;
      frame.sourceIndex = static_cast<int>(decoded_ - 1);
      frame.timestamp = t;
      char name[32];
      std::snprintf(name, sizeof(name), "frame_%06ld", decoded_ - 1);
      frame.name = name;
      return true;
    }
  }

 private:
  // Decodes the next frame into frame_; false at the end of the stream.
  bool decode() {
    int consecutiveErrors = 0;
    while (true) {
      int r = avcodec_receive_frame(dec_.get(), frame_.get());
      if (r == 0) {
        ++decoded_;
        // A frame the decoder knows is damaged (e.g. concealed macroblocks) is not yielded.
        if ((frame_->flags & AV_FRAME_FLAG_CORRUPT) || frame_->decode_error_flags) {
          ++errors_;
          if (++consecutiveErrors > kMaxConsecutiveErrors) return false;
          continue;
        }
        return true;
      }
      if (r == AVERROR_EOF) return false;
      if (r != AVERROR(EAGAIN)) {  // a damaged frame: skip it
        ++errors_;
        if (++consecutiveErrors > kMaxConsecutiveErrors) return false;
        continue;
      }
      if (flushed_) return false;  // no more input and nothing buffered
      r = av_read_frame(fmt_, pkt_.get());
      if (r < 0) {
        // End of file, or a read error on a truncated file: drain what the decoder holds.
        avcodec_send_packet(dec_.get(), nullptr);
        flushed_ = true;
        continue;
      }
      // A packet cut short by the end of a truncated file is marked corrupt: its frame would
      // be partly garbage, so it is not decoded.
      if (pkt_->stream_index == stream_ && (pkt_->flags & AV_PKT_FLAG_CORRUPT)) {
        ++errors_;
      } else if (pkt_->stream_index == stream_) {
        r = avcodec_send_packet(dec_.get(), pkt_.get());
        if (r < 0 && r != AVERROR(EAGAIN)) {
          ++errors_;
          if (++consecutiveErrors > kMaxConsecutiveErrors) {
            av_packet_unref(pkt_.get());
            return false;
          }
        }
      }
      av_packet_unref(pkt_.get());
    }
  }

  // Seconds since the stream start of frame_ (pts, else the previous frame plus one period).
  double frameTime() {
    int64_t pts = frame_->best_effort_timestamp;
    if (pts == AV_NOPTS_VALUE) pts = frame_->pts;
    if (pts == AV_NOPTS_VALUE) {
      if (lastPts_ == AV_NOPTS_VALUE || info_.sourceFps <= 0) {
        pts = lastPts_ == AV_NOPTS_VALUE ? 0 : lastPts_ + 1;
      } else {
        pts = lastPts_ + std::max<int64_t>(1, std::llround(1.0 / (info_.sourceFps * av_q2d(tb_))));
      }
    }
    if (start_ == AV_NOPTS_VALUE) start_ = pts;
    lastPts_ = pts;
    const double t = static_cast<double>(pts - start_) * tb_.num / tb_.den;
    secondsDecoded_ =
        std::max(secondsDecoded_, t + (info_.sourceFps > 0 ? 1 / info_.sourceFps : 0));
    return t;
  }

  // frame_ -> RGB24 at the output size (area when shrinking, else bilinear) -> luma.
  void convert(Frame& out) {
    auto format = static_cast<AVPixelFormat>(frame_->format);
    bool shrink = info_.width < frame_->width;
    // Full-resolution chroma for the RGB output; SWS_ACCURATE_RND is left off: it costs about
    // 3 ms a 720p frame for sub-LSB rounding (docs/benchmarks.md, io).
    int flags = (shrink ? SWS_AREA : SWS_BILINEAR) | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP;
    // sws_getCachedContext frees the old context when it makes a new one.
    sws_.reset(sws_getCachedContext(sws_.release(), frame_->width, frame_->height, format,
                                    info_.width, info_.height, AV_PIX_FMT_RGB24, flags, nullptr,
                                    nullptr, nullptr));
    if (!sws_) {
      const char* name = av_get_pix_fmt_name(format);
      throw Error(path_ + ": cannot convert pixel format " + std::string(name ? name : "?"));
    }
    // The matrix the stream declares (unspecified: Rec. 601); the yuvj formats carry full
    // range themselves.
    int cs = frame_->colorspace == AVCOL_SPC_UNSPECIFIED || frame_->colorspace == AVCOL_SPC_RGB
                 ? SWS_CS_DEFAULT
                 : frame_->colorspace;
    // YUV is limited range unless declared full; gray (FFmpeg's gray formats, as written by
    // VideoWriter) is full range unless declared limited.
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(format);
    bool grayOnly = desc && desc->nb_components <= 2 && !(desc->flags & AV_PIX_FMT_FLAG_RGB);
    int srcRange = frame_->color_range == AVCOL_RANGE_JPEG ||
                           (grayOnly && frame_->color_range != AVCOL_RANGE_MPEG)
                       ? 1
                       : 0;
    bool jFormat = format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P ||
                   format == AV_PIX_FMT_YUVJ444P;
    std::array<int, 5> key{frame_->width, frame_->height, frame_->format, cs, srcRange};
    if (!jFormat && key != swsKey_) {
      int *invTable, *table;
      int curSrcRange, curDstRange, brightness, contrast, saturation;
      if (sws_getColorspaceDetails(sws_.get(), &invTable, &curSrcRange, &table, &curDstRange,
                                   &brightness, &contrast, &saturation) >= 0) {
        sws_setColorspaceDetails(sws_.get(), sws_getCoefficients(cs), srcRange,
                                 sws_getCoefficients(SWS_CS_DEFAULT), 1, brightness, contrast,
                                 saturation);
      }
    }
    swsKey_ = key;
    int linesize = (info_.width * 3 + 63) & ~63;  // aligned rows for swscale's SIMD paths
    buffer_.resize(static_cast<size_t>(linesize) * info_.height + 64);
    std::uint8_t* dst[4] = {buffer_.data(), nullptr, nullptr, nullptr};
    int dstStride[4] = {linesize, 0, 0, 0};
    int h =
        sws_scale(sws_.get(), frame_->data, frame_->linesize, 0, frame_->height, dst, dstStride);
    if (h != info_.height) throw Error(path_ + ": pixel conversion failed");
    out.rgb.resize(info_.width, info_.height);
    for (int y = 0; y < info_.height; ++y) {
      std::memcpy(&out.rgb(0, y), buffer_.data() + static_cast<size_t>(y) * linesize,
                  static_cast<size_t>(info_.width) * 3);
    }
    grayFromRgb(out.rgb, out.gray);
    out.grayIsLumaOfRgb = true;
  }

  std::string path_;
  TimeSampler sampler_;
  FrameSourceInfo info_;
  FormatInputPtr owner_;
  AVFormatContext* fmt_ = nullptr;  // owner_.get()
  CodecContextPtr dec_;
  PacketPtr pkt_;
  AvFramePtr frame_;
  SwsPtr sws_;
  std::array<int, 5> swsKey_{};  // size, format, matrix, range the colour details were set for
  std::vector<std::uint8_t> buffer_;
  int stream_ = -1;
  AVRational tb_{1, 1};
  int64_t start_ = AV_NOPTS_VALUE, lastPts_ = AV_NOPTS_VALUE;
  long decoded_ = 0;
  long framesExpected_ = -1;   // the container's frame count, or duration x rate
  double secondsDecoded_ = 0;  // the time the frames decoded so far cover
  int errors_ = 0, emitted_ = 0;
  bool flushed_ = false, havePending_ = false, ended_ = false;
};

}  // namespace

std::unique_ptr<FrameSource> openVideo(const fs::path& video, const FrameSourceOptions& options) {
  return std::make_unique<VideoSource>(video, options);
}

}  // namespace detail

#else  // no FFmpeg in this build

bool videoSupported() { return false; }

namespace detail {

std::unique_ptr<FrameSource> openVideo(const fs::path& video, const FrameSourceOptions&) {
  throw Error(video.string() +
              ": this build has no video support (vidmap was built without FFmpeg); "
              "give a folder of images or a list file instead");
}

}  // namespace detail

#endif

}  // namespace vidmap::io
