// FFmpeg loaded on first use (core/lazy_library.h). Linked normally, libavcodec and
// libavformat bring about 130 shared libraries (every codec Debian builds in), which the
// dynamic loader mapped at every start of the tool: 28 MB and tens of milliseconds before
// `vidmap --help` printed a line (docs/benchmarks.md, "Start-up cost"). Each FFmpeg function
// vidmap calls is defined here with its header's signature and forwards to the real one; a run
// that reads no video never loads FFmpeg.
#if defined(VIDMAP_HAVE_FFMPEG)

#include "vidmap/core/lazy_library.h"
#include "vidmap/io/ffmpeg_util.h"

namespace {

vidmap::LazyLibrary avutil{VIDMAP_AVUTIL_SONAME, VIDMAP_AVUTIL_PATH, "video input and output"};
vidmap::LazyLibrary avcodec{VIDMAP_AVCODEC_SONAME, VIDMAP_AVCODEC_PATH, "video input and output"};
vidmap::LazyLibrary avformat{VIDMAP_AVFORMAT_SONAME, VIDMAP_AVFORMAT_PATH,
                             "video input and output"};
vidmap::LazyLibrary swscale{VIDMAP_SWSCALE_SONAME, VIDMAP_SWSCALE_PATH, "video input and output"};

}  // namespace

#define VIDMAP_FORWARD VIDMAP_LAZY_FORWARD

extern "C" {

AVRational av_d2q(double d, int max) { VIDMAP_FORWARD(avutil, av_d2q, d, max); }
void av_dict_free(AVDictionary** m) { VIDMAP_FORWARD(avutil, av_dict_free, m); }
int av_dict_set(AVDictionary** pm, const char* key, const char* value, int flags) {
  VIDMAP_FORWARD(avutil, av_dict_set, pm, key, value, flags);
}
int av_find_best_stream(AVFormatContext* ic, enum AVMediaType type, int wanted_stream_nb,
                        int related_stream, const AVCodec** decoder_ret, int flags) {
  VIDMAP_FORWARD(avformat, av_find_best_stream, ic, type, wanted_stream_nb, related_stream,
                 decoder_ret, flags);
}
AVFrame* av_frame_alloc(void) { VIDMAP_FORWARD(avutil, av_frame_alloc); }
void av_frame_free(AVFrame** frame) { VIDMAP_FORWARD(avutil, av_frame_free, frame); }
int av_frame_get_buffer(AVFrame* frame, int align) {
  VIDMAP_FORWARD(avutil, av_frame_get_buffer, frame, align);
}
int av_frame_make_writable(AVFrame* frame) {
  VIDMAP_FORWARD(avutil, av_frame_make_writable, frame);
}
const char* av_get_pix_fmt_name(enum AVPixelFormat pix_fmt) {
  VIDMAP_FORWARD(avutil, av_get_pix_fmt_name, pix_fmt);
}
const AVOutputFormat* av_guess_format(const char* short_name, const char* filename,
                                      const char* mime_type) {
  VIDMAP_FORWARD(avformat, av_guess_format, short_name, filename, mime_type);
}
AVRational av_guess_frame_rate(AVFormatContext* ctx, AVStream* stream, AVFrame* frame) {
  VIDMAP_FORWARD(avformat, av_guess_frame_rate, ctx, stream, frame);
}
int av_interleaved_write_frame(AVFormatContext* s, AVPacket* pkt) {
  VIDMAP_FORWARD(avformat, av_interleaved_write_frame, s, pkt);
}
void av_log_set_level(int level) { VIDMAP_FORWARD(avutil, av_log_set_level, level); }
int av_opt_set(void* obj, const char* name, const char* val, int search_flags) {
  VIDMAP_FORWARD(avutil, av_opt_set, obj, name, val, search_flags);
}
AVPacket* av_packet_alloc(void) { VIDMAP_FORWARD(avcodec, av_packet_alloc); }
void av_packet_free(AVPacket** pkt) { VIDMAP_FORWARD(avcodec, av_packet_free, pkt); }
void av_packet_rescale_ts(AVPacket* pkt, AVRational tb_src, AVRational tb_dst) {
  VIDMAP_FORWARD(avcodec, av_packet_rescale_ts, pkt, tb_src, tb_dst);
}
void av_packet_unref(AVPacket* pkt) { VIDMAP_FORWARD(avcodec, av_packet_unref, pkt); }
const AVPixFmtDescriptor* av_pix_fmt_desc_get(enum AVPixelFormat pix_fmt) {
  VIDMAP_FORWARD(avutil, av_pix_fmt_desc_get, pix_fmt);
}
int av_read_frame(AVFormatContext* s, AVPacket* pkt) {
  VIDMAP_FORWARD(avformat, av_read_frame, s, pkt);
}
int av_strerror(int errnum, char* errbuf, size_t errbuf_size) {
  VIDMAP_FORWARD(avutil, av_strerror, errnum, errbuf, errbuf_size);
}
int av_write_trailer(AVFormatContext* s) { VIDMAP_FORWARD(avformat, av_write_trailer, s); }
AVCodecContext* avcodec_alloc_context3(const AVCodec* codec) {
  VIDMAP_FORWARD(avcodec, avcodec_alloc_context3, codec);
}
const AVCodec* avcodec_find_encoder_by_name(const char* name) {
  VIDMAP_FORWARD(avcodec, avcodec_find_encoder_by_name, name);
}
void avcodec_free_context(AVCodecContext** avctx) {
  VIDMAP_FORWARD(avcodec, avcodec_free_context, avctx);
}
int avcodec_open2(AVCodecContext* avctx, const AVCodec* codec, AVDictionary** options) {
  VIDMAP_FORWARD(avcodec, avcodec_open2, avctx, codec, options);
}
int avcodec_parameters_from_context(AVCodecParameters* par, const AVCodecContext* codec) {
  VIDMAP_FORWARD(avcodec, avcodec_parameters_from_context, par, codec);
}
int avcodec_parameters_to_context(AVCodecContext* codec, const AVCodecParameters* par) {
  VIDMAP_FORWARD(avcodec, avcodec_parameters_to_context, codec, par);
}
int avcodec_receive_frame(AVCodecContext* avctx, AVFrame* frame) {
  VIDMAP_FORWARD(avcodec, avcodec_receive_frame, avctx, frame);
}
int avcodec_receive_packet(AVCodecContext* avctx, AVPacket* avpkt) {
  VIDMAP_FORWARD(avcodec, avcodec_receive_packet, avctx, avpkt);
}
int avcodec_send_frame(AVCodecContext* avctx, const AVFrame* frame) {
  VIDMAP_FORWARD(avcodec, avcodec_send_frame, avctx, frame);
}
int avcodec_send_packet(AVCodecContext* avctx, const AVPacket* avpkt) {
  VIDMAP_FORWARD(avcodec, avcodec_send_packet, avctx, avpkt);
}
int avformat_alloc_output_context2(AVFormatContext** ctx, const AVOutputFormat* oformat,
                                   const char* format_name, const char* filename) {
  VIDMAP_FORWARD(avformat, avformat_alloc_output_context2, ctx, oformat, format_name, filename);
}
void avformat_close_input(AVFormatContext** s) {
  VIDMAP_FORWARD(avformat, avformat_close_input, s);
}
int avformat_find_stream_info(AVFormatContext* ic, AVDictionary** options) {
  VIDMAP_FORWARD(avformat, avformat_find_stream_info, ic, options);
}
void avformat_free_context(AVFormatContext* s) {
  VIDMAP_FORWARD(avformat, avformat_free_context, s);
}
AVStream* avformat_new_stream(AVFormatContext* s, const AVCodec* c) {
  VIDMAP_FORWARD(avformat, avformat_new_stream, s, c);
}
int avformat_open_input(AVFormatContext** ps, const char* url, const AVInputFormat* fmt,
                        AVDictionary** options) {
  VIDMAP_FORWARD(avformat, avformat_open_input, ps, url, fmt, options);
}
int avformat_query_codec(const AVOutputFormat* ofmt, enum AVCodecID codec_id, int std_compliance) {
  VIDMAP_FORWARD(avformat, avformat_query_codec, ofmt, codec_id, std_compliance);
}
int avformat_write_header(AVFormatContext* s, AVDictionary** options) {
  VIDMAP_FORWARD(avformat, avformat_write_header, s, options);
}
int avio_closep(AVIOContext** s) { VIDMAP_FORWARD(avformat, avio_closep, s); }
int avio_open(AVIOContext** s, const char* url, int flags) {
  VIDMAP_FORWARD(avformat, avio_open, s, url, flags);
}
void sws_freeContext(struct SwsContext* swsContext) {
  VIDMAP_FORWARD(swscale, sws_freeContext, swsContext);
}
struct SwsContext* sws_getCachedContext(struct SwsContext* context, int srcW, int srcH,
                                        enum AVPixelFormat srcFormat, int dstW, int dstH,
                                        enum AVPixelFormat dstFormat, int flags,
                                        SwsFilter* srcFilter, SwsFilter* dstFilter,
                                        const double* param) {
  VIDMAP_FORWARD(swscale, sws_getCachedContext, context, srcW, srcH, srcFormat, dstW, dstH,
                 dstFormat, flags, srcFilter, dstFilter, param);
}
const int* sws_getCoefficients(int colorspace) {
  VIDMAP_FORWARD(swscale, sws_getCoefficients, colorspace);
}
int sws_getColorspaceDetails(struct SwsContext* c, int** inv_table, int* srcRange, int** table,
                             int* dstRange, int* brightness, int* contrast, int* saturation) {
  VIDMAP_FORWARD(swscale, sws_getColorspaceDetails, c, inv_table, srcRange, table, dstRange,
                 brightness, contrast, saturation);
}
int sws_scale(struct SwsContext* c, const uint8_t* const srcSlice[], const int srcStride[],
              int srcSliceY, int srcSliceH, uint8_t* const dst[], const int dstStride[]) {
  VIDMAP_FORWARD(swscale, sws_scale, c, srcSlice, srcStride, srcSliceY, srcSliceH, dst, dstStride);
}
int sws_setColorspaceDetails(struct SwsContext* c, const int inv_table[4], int srcRange,
                             const int table[4], int dstRange, int brightness, int contrast,
                             int saturation) {
  VIDMAP_FORWARD(swscale, sws_setColorspaceDetails, c, inv_table, srcRange, table, dstRange,
                 brightness, contrast, saturation);
}

}  // extern "C"

#endif  // VIDMAP_HAVE_FFMPEG
