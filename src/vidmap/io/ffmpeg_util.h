// Internal to io, only with VIDMAP_HAVE_FFMPEG: FFmpeg headers, RAII deleters and messages.
#pragma once

#if defined(VIDMAP_HAVE_FFMPEG)

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <string>

namespace vidmap::io::detail {

inline std::string avErrorText(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(code, buf, sizeof(buf));
  return buf;
}

// FFmpeg prints decoder complaints about damaged input on stderr; vidmap reports problems
// through vidmap::Error instead. Called once before the first use of FFmpeg: lowers FFmpeg's
// log level to fatal errors unless the environment sets VIDMAP_FFMPEG_LOG.
void quietFfmpegLogOnce();

struct PacketDeleter {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct FrameDeleter {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct CodecContextDeleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FormatInputDeleter {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
struct SwsDeleter {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
using PacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;
using AvFramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextDeleter>;
using SwsPtr = std::unique_ptr<SwsContext, SwsDeleter>;
using FormatInputPtr = std::unique_ptr<AVFormatContext, FormatInputDeleter>;

}  // namespace vidmap::io::detail

#endif
