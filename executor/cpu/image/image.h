// Decoding an encoded image for the ImageDecoder kernel: decode_image() sniffs the format from
// the stream's first bytes and hands it to that format's decoder (decode_*.cc, each a thin layer
// over a codec library: libjpeg, libpng, libtiff, libwebp, libopenjp2; BMP and PNM are read by
// bounds-checked parsers of their own, decode_bmp.cc and decode_pnm.cc say why). A library that
// was missing when xopt was built leaves its format out: decode_image() then says which library
// it needs. Pixels are what Pillow gives (the ONNX reference decodes with it): rows top to bottom
// as stored, colour as RGB, alpha dropped.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace xopt::exec::image {

// Rows top to bottom, pixels left to right, samples interleaved: R, G, B (channels 3) or a gray
// level (channels 1).
struct Image {
  int64_t height = 0;
  int64_t width = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
};

enum class Format { kUnknown, kBmp, kJpeg, kJpeg2000, kPng, kPnm, kTiff, kWebp };

// The format whose signature starts `bytes`; kUnknown when none does.
Format sniff_format(std::span<const uint8_t> bytes);
// "BMP", "JPEG", "JPEG 2000", "PNG", "PNM", "TIFF", "WebP" ("unknown").
const char* format_name(Format format);
// Whether this build decodes `format` (its library was found when xopt was built).
bool format_built_in(Format format);

// The most pixels a decoded image may have: Pillow's decompression-bomb limit (twice its
// MAX_IMAGE_PIXELS of 89478485). Larger images are refused before anything is allocated.
inline constexpr int64_t kMaxPixels = 2 * 89478485LL;

// Decodes the first image of `bytes`. Errors: kUnsupported for an unknown format, one this build
// lacks (naming the library), or a variant the decoder does not read (16-bit samples in PNM,
// CMYK JPEG, ...); kInvalidArgument for a corrupt or truncated stream and for an image over
// kMaxPixels. Never prints.
Result<Image> decode_image(std::span<const uint8_t> bytes);

}  // namespace xopt::exec::image
