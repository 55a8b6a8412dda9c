// Image<T>: an owning, row-major image with a stride in elements; ImageView<T>: a
// non-owning view usable on host and device (the same struct is passed to kernels).
// Gray images are float in [0, 1]; colour images are Rgb8.
#pragma once

#include <cstdint>
#include <vector>

#include "vidmap/core/error.h"
#include "vidmap/core/hd.h"

namespace vidmap {

struct Rgb8 {
  std::uint8_t r = 0, g = 0, b = 0;
};

template <class T>
struct ImageView {
  T* data = nullptr;
  int width = 0;
  int height = 0;
  int stride = 0;  // elements between the starts of two rows

  VIDMAP_HD T& operator()(int x, int y) const { return data[static_cast<long>(y) * stride + x]; }
  VIDMAP_HD bool empty() const { return width <= 0 || height <= 0; }
  VIDMAP_HD long pixels() const { return static_cast<long>(width) * height; }
};

template <class T>
class Image {
 public:
  Image() = default;
  Image(int width, int height, T fill = T{}) { resize(width, height, fill); }

  void resize(int width, int height, T fill = T{}) {
    require(width >= 0 && height >= 0, "image size must not be negative");
    width_ = width;
    height_ = height;
    data_.assign(static_cast<size_t>(width) * height, fill);
  }

  int width() const { return width_; }
  int height() const { return height_; }
  bool empty() const { return width_ == 0 || height_ == 0; }
  long pixels() const { return static_cast<long>(width_) * height_; }

  T& operator()(int x, int y) { return data_[static_cast<size_t>(y) * width_ + x]; }
  const T& operator()(int x, int y) const { return data_[static_cast<size_t>(y) * width_ + x]; }
  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  std::vector<T>& vec() { return data_; }
  const std::vector<T>& vec() const { return data_; }

  ImageView<T> view() { return {data_.data(), width_, height_, width_}; }
  ImageView<const T> view() const { return {data_.data(), width_, height_, width_}; }

 private:
  int width_ = 0;
  int height_ = 0;
  std::vector<T> data_;
};

using GrayImage = Image<float>;
using RgbImage = Image<Rgb8>;

}  // namespace vidmap
