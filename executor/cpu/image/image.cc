#include "executor/cpu/image/image.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "executor/cpu/image/codecs.h"

namespace xopt::exec::image {
namespace {

bool starts_with(std::span<const uint8_t> bytes, const char* magic, size_t n) {
  return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0;
}

// "ff d8 ff e0 00 10 4a 46" (at most 8 bytes) for messages.
std::string first_bytes(std::span<const uint8_t> bytes) {
  std::string s;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 8); ++i) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%s%02x", i == 0 ? "" : " ", bytes[i]);
    s += hex;
  }
  return s;
}

}  // namespace

Format sniff_format(std::span<const uint8_t> bytes) {
  if (starts_with(bytes, "\xff\xd8\xff", 3)) return Format::kJpeg;
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n", 8)) return Format::kPng;
  if (starts_with(bytes, "BM", 2)) return Format::kBmp;
  if (starts_with(bytes, "II*\0", 4) || starts_with(bytes, "MM\0*", 4)) return Format::kTiff;
  if (bytes.size() >= 12 && starts_with(bytes, "RIFF", 4) &&
      std::memcmp(bytes.data() + 8, "WEBP", 4) == 0)
    return Format::kWebp;
  // A JP2 file's signature box, or a bare J2K codestream (SOC then SIZ).
  if (starts_with(bytes, "\0\0\0\x0cjP  \r\n\x87\n", 12) ||
      starts_with(bytes, "\xff\x4f\xff\x51", 4))
    return Format::kJpeg2000;
  // PNM: "P" and the digit of a graymap or pixmap, binary or plain (P1/P4 bitmaps are left out).
  if (bytes.size() >= 2 && bytes[0] == 'P' &&
      (bytes[1] == '2' || bytes[1] == '3' || bytes[1] == '5' || bytes[1] == '6'))
    return Format::kPnm;
  return Format::kUnknown;
}

const char* format_name(Format format) {
  switch (format) {
    case Format::kBmp:
      return "BMP";
    case Format::kJpeg:
      return "JPEG";
    case Format::kJpeg2000:
      return "JPEG 2000";
    case Format::kPng:
      return "PNG";
    case Format::kPnm:
      return "PNM";
    case Format::kTiff:
      return "TIFF";
    case Format::kWebp:
      return "WebP";
    case Format::kUnknown:
      break;
  }
  return "unknown";
}

bool format_built_in(Format format) {
  switch (format) {
    case Format::kBmp:
    case Format::kPnm:
      return true;
    case Format::kJpeg:
      return detail::kJpegBuiltIn;
    case Format::kJpeg2000:
      return detail::kJpeg2000BuiltIn;
    case Format::kPng:
      return detail::kPngBuiltIn;
    case Format::kTiff:
      return detail::kTiffBuiltIn;
    case Format::kWebp:
      return detail::kWebpBuiltIn;
    case Format::kUnknown:
      break;
  }
  return false;
}

Result<Image> decode_image(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return invalid_argument("the encoded stream is empty");
  switch (sniff_format(bytes)) {
    case Format::kBmp:
      return detail::decode_bmp(bytes);
    case Format::kJpeg:
      return detail::decode_jpeg(bytes);
    case Format::kJpeg2000:
      return detail::decode_jpeg2000(bytes);
    case Format::kPng:
      return detail::decode_png(bytes);
    case Format::kPnm:
      return detail::decode_pnm(bytes);
    case Format::kTiff:
      return detail::decode_tiff(bytes);
    case Format::kWebp:
      return detail::decode_webp(bytes);
    case Format::kUnknown:
      break;
  }
  return unsupported("unknown image format (the stream starts " + first_bytes(bytes) +
                     "); ImageDecoder reads BMP, JPEG, JPEG 2000, PNG, PNM, TIFF and WebP");
}

namespace detail {

Status corrupt(const char* format, const std::string& what) {
  return invalid_argument(std::string("corrupt ") + format + " stream: " + what);
}

Status truncated(const char* format, const std::string& what) {
  return invalid_argument(std::string("truncated ") + format + " stream: " + what);
}

Status variant_unsupported(const char* format, const std::string& what) {
  return unsupported(std::string(format) + " images with " + what + " are not supported");
}

Status not_built(const char* format, const char* library) {
  return unsupported(std::string("decoding ") + format + " needs " + library +
                     ", which this build of xopt was made without");
}

Result<Image> make_image(const char* format, int64_t width, int64_t height, int channels) {
  if (width <= 0 || height <= 0)
    return corrupt(
        format, "the image is " + std::to_string(width) + "x" + std::to_string(height) + " pixels");
  // Each dim checked alone first, so that the product cannot overflow.
  if (width > kMaxPixels || height > kMaxPixels || width * height > kMaxPixels)
    return invalid_argument(std::string(format) + " image of " + std::to_string(width) + "x" +
                            std::to_string(height) + " pixels is over the limit of " +
                            std::to_string(kMaxPixels) + " pixels");
  Image img;
  img.width = width;
  img.height = height;
  img.channels = channels;
  img.pixels.resize(static_cast<size_t>(width * height * channels));
  return img;
}

}  // namespace detail
}  // namespace xopt::exec::image
