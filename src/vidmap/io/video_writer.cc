#include "vidmap/io/video_writer.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "vidmap/core/error.h"
#include "vidmap/io/atomic_file.h"
#include "vidmap/io/ffmpeg_util.h"

namespace vidmap::io {

namespace fs = std::filesystem;

void VideoWriterOptions::check() const {
  if (!(fps > 0 && fps <= 1000)) {
    throw Error("option video fps = " + std::to_string(fps) + " is out of range (0, 1000]");
  }
}

#if defined(VIDMAP_HAVE_FFMPEG)

namespace {

const AVCodec* findEncoder(VideoCodec codec) {
  switch (codec) {
    case VideoCodec::kFfv1:
      return avcodec_find_encoder_by_name("ffv1");
    case VideoCodec::kMpeg4:
      return avcodec_find_encoder_by_name("mpeg4");
    case VideoCodec::kH264:
      return avcodec_find_encoder_by_name("libx264");  // not a hardware encoder that may fail
    case VideoCodec::kAuto:
      break;
  }
  return nullptr;
}

const char* codecName(VideoCodec codec) {
  switch (codec) {
    case VideoCodec::kFfv1:
      return "FFV1";
    case VideoCodec::kMpeg4:
      return "MPEG-4 part 2";
    case VideoCodec::kH264:
      return "H.264 (libx264)";
    case VideoCodec::kAuto:
      break;
  }
  return "auto";
}

bool supportsFormat(const AVCodec* codec, AVPixelFormat f) {
  if (!codec->pix_fmts) return false;
  for (const AVPixelFormat* p = codec->pix_fmts; *p != AV_PIX_FMT_NONE; ++p) {
    if (*p == f) return true;
  }
  return false;
}

}  // namespace

struct VideoWriter::Impl {
  explicit Impl(const fs::path& p) : file(p) {}
  ~Impl() {
    if (oc) {
      if (oc->pb) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
  }  // then `file` removes the temporary unless committed

  AtomicFile file;
  std::string name;
  AVFormatContext* oc = nullptr;
  detail::CodecContextPtr enc;
  AVStream* st = nullptr;
  detail::AvFramePtr frame;
  detail::PacketPtr pkt;
  detail::SwsPtr sws;
  AVPixelFormat swsInput = AV_PIX_FMT_NONE;
  std::vector<std::uint8_t> gray8;
  int width = 0, height = 0;
  std::int64_t count = 0;
  VideoCodec codec = VideoCodec::kAuto;
  bool finished = false;

  void fail(const std::string& what, int r) {
    throw Error(name + ": " + what + (r < 0 ? ": " + detail::avErrorText(r) : std::string()));
  }

  void open(const VideoWriterOptions& options) {
    std::string ext = file.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    bool mp4 = ext == ".mp4" || ext == ".mov";
    if (!mp4 && ext != ".mkv" && ext != ".avi") {
      throw Error(name + ": unknown video container '" + ext + "' (use .mkv, .avi, .mp4, .mov)");
    }
    codec = options.codec;
    if (codec == VideoCodec::kAuto) {
      codec = !mp4 ? VideoCodec::kFfv1
                   : (findEncoder(VideoCodec::kH264) ? VideoCodec::kH264 : VideoCodec::kMpeg4);
    }
    const AVCodec* encoder = findEncoder(codec);
    if (!encoder) throw Error(name + ": this FFmpeg has no " + codecName(codec) + " encoder");
    bool yuv = codec != VideoCodec::kFfv1;
    if (options.gray && yuv) throw Error(name + ": gray video needs the FFV1 codec");
    if (yuv && (width % 2 || height % 2)) {
      throw Error(name + ": " + codecName(codec) + " needs an even width and height, not " +
                  std::to_string(width) + "x" + std::to_string(height));
    }
    // The container is chosen by the final name; the muxer writes (and, for MP4 fast start,
    // re-reads) the temporary file.
    const AVOutputFormat* format = av_guess_format(nullptr, file.path().string().c_str(), nullptr);
    if (!format) throw Error(name + ": FFmpeg has no muxer for '" + ext + "'");
    if (avformat_query_codec(format, encoder->id, FF_COMPLIANCE_NORMAL) == 0) {
      throw Error(name + ": a " + ext + " file cannot hold " + codecName(codec) +
                  " (use .mkv for FFV1)");
    }
    int r = avformat_alloc_output_context2(&oc, format, nullptr, file.tmp().string().c_str());
    if (r < 0 || !oc) fail("cannot create the muxer", r);

    enc.reset(avcodec_alloc_context3(encoder));
    if (!enc) fail("out of memory", 0);
    AVRational rate = av_d2q(options.fps, 1 << 16);
    enc->width = width;
    enc->height = height;
    enc->time_base = av_inv_q(rate);
    enc->framerate = rate;
    enc->thread_count = 0;
    if (codec == VideoCodec::kFfv1) {
      AVPixelFormat f = options.gray ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_GBRP;
      if (!supportsFormat(encoder, f)) f = options.gray ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_0RGB32;
      if (!supportsFormat(encoder, f)) fail("FFV1 lacks a lossless pixel format", 0);
      enc->pix_fmt = f;
    } else {
      enc->pix_fmt = AV_PIX_FMT_YUV420P;
      enc->gop_size = 12;
      enc->color_range = AVCOL_RANGE_MPEG;  // swscale's RGB -> YUV: Rec. 601, limited range
      enc->colorspace = AVCOL_SPC_SMPTE170M;
      if (codec == VideoCodec::kMpeg4) {
        enc->flags |= AV_CODEC_FLAG_QSCALE;
        enc->global_quality = FF_QP2LAMBDA * 2;
        enc->max_b_frames = 0;
      } else {
        av_opt_set(enc->priv_data, "crf", "18", 0);
        av_opt_set(enc->priv_data, "preset", "veryfast", 0);
      }
    }
    if (oc->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    r = avcodec_open2(enc.get(), encoder, nullptr);
    if (r < 0) fail(std::string("cannot open the ") + codecName(codec) + " encoder", r);
    st = avformat_new_stream(oc, nullptr);
    if (!st) fail("cannot add a video stream", 0);
    r = avcodec_parameters_from_context(st->codecpar, enc.get());
    if (r < 0) fail("cannot set the stream parameters", r);
    st->time_base = enc->time_base;
    st->avg_frame_rate = rate;
    r = avio_open(&oc->pb, file.tmp().string().c_str(), AVIO_FLAG_WRITE);
    if (r < 0) fail("cannot create " + file.tmp().string(), r);
    AVDictionary* opts = nullptr;
    if (mp4) av_dict_set(&opts, "movflags", "+faststart", 0);  // index first: streamable
    r = avformat_write_header(oc, &opts);
    av_dict_free(&opts);
    if (r < 0) fail("cannot write the file header", r);

    frame.reset(av_frame_alloc());
    pkt.reset(av_packet_alloc());
    if (!frame || !pkt) fail("out of memory", 0);
    frame->format = enc->pix_fmt;
    frame->width = width;
    frame->height = height;
    r = av_frame_get_buffer(frame.get(), 0);
    if (r < 0) fail("out of memory", r);
  }

  void put(AVPixelFormat input, const std::uint8_t* data, int stride) {
    if (finished) throw Error(name + ": write after finish()");
    int r = av_frame_make_writable(frame.get());  // the encoder may still hold the last one
    if (r < 0) fail("out of memory", r);
    int flags = SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INP;
    sws.reset(sws_getCachedContext(sws.release(), width, height, input, width, height, enc->pix_fmt,
                                   flags, nullptr, nullptr, nullptr));
    if (!sws) fail("cannot convert frames to the encoder's pixel format", 0);
    const std::uint8_t* src[4] = {data, nullptr, nullptr, nullptr};
    int srcStride[4] = {stride, 0, 0, 0};
    sws_scale(sws.get(), src, srcStride, 0, height, frame->data, frame->linesize);
    frame->pts = count++;
    encode(frame.get());
  }

  void encode(AVFrame* f) {
    int r = avcodec_send_frame(enc.get(), f);
    if (r < 0) fail("encoding failed", r);
    while (true) {
      r = avcodec_receive_packet(enc.get(), pkt.get());
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
      if (r < 0) fail("encoding failed", r);
      av_packet_rescale_ts(pkt.get(), enc->time_base, st->time_base);
      pkt->stream_index = st->index;
      r = av_interleaved_write_frame(oc, pkt.get());  // takes the packet's reference
      if (r < 0) fail("cannot write to " + file.tmp().string(), r);
    }
  }
};

VideoWriter::VideoWriter(const fs::path& path, int width, int height,
                         const VideoWriterOptions& options) {
  options.check();
  if (width <= 0 || height <= 0 || width > 16384 || height > 16384) {
    throw Error(path.string() + ": video size " + std::to_string(width) + "x" +
                std::to_string(height) + " is outside [1, 16384]");
  }
  detail::quietFfmpegLogOnce();
  impl_ = std::make_unique<Impl>(path);
  impl_->name = path.string();
  impl_->width = width;
  impl_->height = height;
  impl_->open(options);
}

VideoWriter::~VideoWriter() = default;

void VideoWriter::write(const RgbImage& f) {
  if (f.width() != impl_->width || f.height() != impl_->height) {
    throw Error(impl_->name + ": frame is " + std::to_string(f.width()) + "x" +
                std::to_string(f.height()) + ", the video is " + std::to_string(impl_->width) +
                "x" + std::to_string(impl_->height));
  }
  impl_->put(AV_PIX_FMT_RGB24, reinterpret_cast<const std::uint8_t*>(f.data()), f.width() * 3);
}

void VideoWriter::write(const GrayImage& f) {
  if (f.width() != impl_->width || f.height() != impl_->height) {
    throw Error(impl_->name + ": frame is " + std::to_string(f.width()) + "x" +
                std::to_string(f.height()) + ", the video is " + std::to_string(impl_->width) +
                "x" + std::to_string(impl_->height));
  }
  auto& g = impl_->gray8;
  g.resize(static_cast<size_t>(f.pixels()));
  for (size_t i = 0; i < g.size(); ++i) {
    float v = f.data()[i];
    v = std::isnan(v) ? 0.f : std::clamp(v, 0.f, 1.f);
    g[i] = static_cast<std::uint8_t>(std::lround(v * 255.f));
  }
  impl_->put(AV_PIX_FMT_GRAY8, g.data(), f.width());
}

void VideoWriter::finish() {
  Impl& m = *impl_;
  if (m.finished) return;
  if (m.count == 0) throw Error(m.name + ": no frames were written");
  m.encode(nullptr);  // drain the encoder
  int r = av_write_trailer(m.oc);
  if (r < 0) m.fail("cannot complete the file", r);
  r = avio_closep(&m.oc->pb);
  if (r < 0) m.fail("cannot close " + m.file.tmp().string(), r);
  m.finished = true;
  m.file.commit();
}

int VideoWriter::framesWritten() const { return static_cast<int>(impl_->count); }
VideoCodec VideoWriter::codec() const { return impl_->codec; }

bool videoCodecAvailable(VideoCodec codec) {
  if (codec == VideoCodec::kAuto) return true;
  return findEncoder(codec) != nullptr;
}

#else  // no FFmpeg in this build

struct VideoWriter::Impl {};

VideoWriter::VideoWriter(const fs::path& path, int, int, const VideoWriterOptions& options) {
  options.check();
  throw Error(path.string() +
              ": this build has no video support (vidmap was built without FFmpeg)");
}
VideoWriter::~VideoWriter() = default;
void VideoWriter::write(const RgbImage&) {}
void VideoWriter::write(const GrayImage&) {}
void VideoWriter::finish() {}
int VideoWriter::framesWritten() const { return 0; }
VideoCodec VideoWriter::codec() const { return VideoCodec::kAuto; }
bool videoCodecAvailable(VideoCodec) { return false; }

#endif

}  // namespace vidmap::io
