// The format decoders behind decode_image() (image.h), one per decode_*.cc, and what they share.
// Each takes the whole encoded stream, whose signature decode_image() has checked.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "executor/cpu/image/image.h"

namespace xopt::exec::image::detail {

using Bytes = std::span<const uint8_t>;

Result<Image> decode_bmp(Bytes bytes);
Result<Image> decode_jpeg(Bytes bytes);
Result<Image> decode_jpeg2000(Bytes bytes);
Result<Image> decode_png(Bytes bytes);
Result<Image> decode_pnm(Bytes bytes);
Result<Image> decode_tiff(Bytes bytes);
Result<Image> decode_webp(Bytes bytes);

// Whether the library of each format was found at build time (false: the decoder is a stub that
// returns not_built()).
extern const bool kJpegBuiltIn;
extern const bool kJpeg2000BuiltIn;
extern const bool kPngBuiltIn;
extern const bool kTiffBuiltIn;
extern const bool kWebpBuiltIn;

// "corrupt PNG stream: <what>" (kInvalidArgument).
Status corrupt(const char* format, const std::string& what);
// "truncated PNG stream: <what>" (kInvalidArgument).
Status truncated(const char* format, const std::string& what);
// "<format> images with <what> are not supported" (kUnsupported).
Status variant_unsupported(const char* format, const std::string& what);
// "decoding JPEG needs libjpeg, which this build of xopt was made without" (kUnsupported).
Status not_built(const char* format, const char* library);

// An image of width x height x channels, its pixels allocated (zero), once the size is checked:
// both dims positive and width * height at most kMaxPixels; an error naming the format otherwise.
Result<Image> make_image(const char* format, int64_t width, int64_t height, int channels);

}  // namespace xopt::exec::image::detail
