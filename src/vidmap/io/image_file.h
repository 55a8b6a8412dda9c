// Image files in and out. Reads PNG (1-16 bit; gray, gray+alpha, RGB, RGBA, palette), JPEG
// (libjpeg-turbo) and PGM/PPM (P2, P3, P5, P6; 8 or 16 bit) into gray float [0, 1]
// (Rec. 601 luma of the file's full-precision samples) and RGB8. The format is detected from
// the file's first bytes, not its name. Alpha is ignored; gamma chunks are not applied.
// Writes PNG (gray 8/16 bit, RGB8) atomically. Every failure is a vidmap::Error naming the
// file and the problem (missing, unknown format, truncated, corrupt, zero size).
#pragma once

#include <cstdint>
#include <filesystem>

#include "vidmap/core/image.h"

namespace vidmap::io {

enum class ImageFormat { kPng, kJpeg, kPnm };

struct ImageData {
  GrayImage gray;  // luma in [0, 1]
  RgbImage rgb;    // 8-bit colour (gray files give r = g = b; 16-bit samples are rounded)
  ImageFormat format = ImageFormat::kPng;
  int bitDepth = 8;  // bits per sample in the file: 1, 2, 4, 8 or 16 (palette: 8)
  int channels = 3;  // colour channels in the file, alpha not counted: 1 or 3
  int nativeWidth = 0, nativeHeight = 0;  // the file's size (gray and rgb may be smaller)
  // gray is lumaRec601 (color.h) of rgb, pixel for pixel: the file's samples are 8-bit.
  bool grayIsLumaOfRgb = false;
};

// Images above the pixel budget (2^28 pixels in all, 65536 a side) are refused before any
// allocation, and so is a header that claims more pixels than the file's bytes can encode
// (image_codecs.h gives the bound of each format): a damaged or hostile header never makes
// vidmap allocate gigabytes.

struct ImageHeader {
  ImageFormat format = ImageFormat::kPng;
  int width = 0, height = 0;
};

// The format and size of an image file from its header, without decoding the pixels (PNG:
// IHDR; JPEG: the frame header; PNM files are decoded, they are small and rare), with the
// checks above. Throws vidmap::Error for a missing, empty, unreadable or unknown file.
ImageHeader readImageHeader(const std::filesystem::path& path);

// Reads an image file (both gray and colour). With minWidth and minHeight, a JPEG may be
// decoded at 1/2, 1/4 or 1/8 of its size when that still covers them (libjpeg's DCT scaling:
// a fraction of the decoding work for frames that are resized down anyway).
ImageData readImage(const std::filesystem::path& path, int minWidth = 0, int minHeight = 0);
GrayImage readGray(const std::filesystem::path& path);
RgbImage readRgb(const std::filesystem::path& path);

// Reads the raw samples of a one-channel 16-bit PNG or PGM (e.g. depth maps: TUM stores
// metres * 5000). Throws for colour or 8-bit files.
Image<std::uint16_t> readGray16(const std::filesystem::path& path);

// Writes PNG atomically. Gray values are clamped to [0, 1] and rounded to bitDepth 8 or 16.
void writePng(const std::filesystem::path& path, const GrayImage& gray, int bitDepth = 8);
void writePng(const std::filesystem::path& path, const RgbImage& rgb);
void writePng(const std::filesystem::path& path, const Image<std::uint16_t>& gray16);

}  // namespace vidmap::io
