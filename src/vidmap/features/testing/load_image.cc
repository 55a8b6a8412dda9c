#include "vidmap/features/testing/load_image.h"

#include <jpeglib.h>
#include <png.h>

#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <vector>

#include "vidmap/core/error.h"

namespace vidmap::features::testing {
namespace {

GrayImage loadPng(const std::filesystem::path& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path.c_str()))
    throw Error("cannot read PNG " + path.string() + ": " + img.message);
  img.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> buf(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, buf.data(), 0, nullptr))
    throw Error("cannot decode PNG " + path.string() + ": " + img.message);
  GrayImage g(img.width, img.height);
  for (size_t i = 0; i < static_cast<size_t>(g.pixels()); ++i)
    g.data()[i] =
        (0.299f * buf[3 * i] + 0.587f * buf[3 * i + 1] + 0.114f * buf[3 * i + 2]) / 255.0f;
  return g;
}

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
};

GrayImage loadJpeg(const std::filesystem::path& path, int denom) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("cannot open JPEG " + path.string());
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = [](j_common_ptr c) {
    std::longjmp(reinterpret_cast<JpegError*>(c->err)->jump, 1);
  };
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    std::fclose(f);
    throw Error("cannot decode JPEG " + path.string());
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  cinfo.scale_num = 1;
  cinfo.scale_denom = denom;
  jpeg_start_decompress(&cinfo);
  GrayImage g(cinfo.output_width, cinfo.output_height);
  std::vector<unsigned char> row(cinfo.output_width * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW r = row.data();
    const int y = cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &r, 1);
    for (int x = 0; x < g.width(); ++x)
      g(x, y) = (0.299f * row[3 * x] + 0.587f * row[3 * x + 1] + 0.114f * row[3 * x + 2]) / 255.0f;
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  std::fclose(f);
  return g;
}

}  // namespace

GrayImage loadGray(const std::filesystem::path& path, int jpegScaleDenom) {
  auto ext = path.extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(c));
  if (ext == ".png") return loadPng(path);
  if (ext == ".jpg" || ext == ".jpeg") return loadJpeg(path, jpegScaleDenom);
  throw Error("unknown image type: " + path.string());
}

GrayImage halve(const GrayImage& in) {
  GrayImage out(in.width() / 2, in.height() / 2);
  for (int y = 0; y < out.height(); ++y)
    for (int x = 0; x < out.width(); ++x)
      out(x, y) = 0.25f * (in(2 * x, 2 * y) + in(2 * x + 1, 2 * y) + in(2 * x, 2 * y + 1) +
                           in(2 * x + 1, 2 * y + 1));
  return out;
}

std::array<double, 2> applyHomography(const std::array<double, 9>& H, double x, double y) {
  const double w = H[6] * x + H[7] * y + H[8];
  return {(H[0] * x + H[1] * y + H[2]) / w, (H[3] * x + H[4] * y + H[5]) / w};
}

GrayImage warpHomography(const GrayImage& in, const std::array<double, 9>& H, int width, int height,
                         float fill) {
  Eigen::Matrix<double, 3, 3, Eigen::RowMajor> h(H.data());
  const Eigen::Matrix<double, 3, 3, Eigen::RowMajor> inv = h.inverse();
  std::array<double, 9> Hi;
  std::copy(inv.data(), inv.data() + 9, Hi.begin());
  GrayImage out(width, height, fill);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto p = applyHomography(Hi, x, y);
      const double fx = std::floor(p[0]), fy = std::floor(p[1]);
      const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
      if (x0 < 0 || y0 < 0 || x0 + 1 >= in.width() || y0 + 1 >= in.height()) continue;
      const double ax = p[0] - fx, ay = p[1] - fy;
      out(x, y) = static_cast<float>((1 - ay) * ((1 - ax) * in(x0, y0) + ax * in(x0 + 1, y0)) +
                                     ay * ((1 - ax) * in(x0, y0 + 1) + ax * in(x0 + 1, y0 + 1)));
    }
  return out;
}

}  // namespace vidmap::features::testing
