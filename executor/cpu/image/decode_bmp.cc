// BMP, read by a parser of its own: no library xopt links reads BMP from memory (libjpeg-turbo's
// BMP reader lives in its cjpeg tool and in libturbojpeg's file-name-only tjLoadImage, and refuses
// top-down images and the V4/V5 headers; the libraries that read BMP from memory, such as
// gdk-pixbuf, ImageMagick or stb_image, are large, print, or are not meant for untrusted input).
// The subset read is the uncompressed one that writers produce: BITMAPINFOHEADER and its V2-V5
// extensions, 8-bit palette, 24-bit and 32-bit pixels (BI_RGB, or BI_BITFIELDS with the usual
// BGR masks), bottom-up or top-down. Every offset is checked against the stream before it is read,
// and the pixel data must be all there before the image is allocated. As Pillow reads it: the
// fourth byte of 32-bit pixels is dropped, a palette index past the palette is black.
#include <array>
#include <cstring>

#include "executor/cpu/image/codecs.h"

namespace xopt::exec::image::detail {
namespace {

constexpr const char* kFormat = "BMP";

uint32_t u32(Bytes b, size_t at) {
  return static_cast<uint32_t>(b[at]) | (static_cast<uint32_t>(b[at + 1]) << 8) |
         (static_cast<uint32_t>(b[at + 2]) << 16) | (static_cast<uint32_t>(b[at + 3]) << 24);
}
uint16_t u16(Bytes b, size_t at) {
  return static_cast<uint16_t>(b[at] | (b[at + 1] << 8));
}

}  // namespace

Result<Image> decode_bmp(Bytes b) {
  // File header (14 bytes), then the info header, whose first field is its own size.
  if (b.size() < 14 + 40)
    return truncated(kFormat,
                     "the headers need 54 bytes, the stream has " + std::to_string(b.size()));
  const uint32_t data_offset = u32(b, 10);
  const uint32_t header_size = u32(b, 14);
  if (header_size == 12 || header_size == 64)
    return variant_unsupported(kFormat,
                               "the OS/2 header (" + std::to_string(header_size) + " bytes)");
  if (header_size != 40 && header_size != 52 && header_size != 56 && header_size != 108 &&
      header_size != 124)
    return corrupt(kFormat, "unknown info header size " + std::to_string(header_size));
  if (b.size() < 14 + static_cast<size_t>(header_size))
    return truncated(kFormat, "the info header is cut short");
  const auto width = static_cast<int64_t>(static_cast<int32_t>(u32(b, 18)));
  const auto stored_height = static_cast<int64_t>(static_cast<int32_t>(u32(b, 22)));
  const bool top_down = stored_height < 0;
  const int64_t height = top_down ? -stored_height : stored_height;
  const uint16_t bits = u16(b, 28);
  const uint32_t compression = u32(b, 30);
  uint32_t colors = u32(b, 46);
  if (width <= 0 || height <= 0)
    return corrupt(kFormat, "the image is " + std::to_string(width) + "x" +
                                std::to_string(stored_height) + " pixels");
  if (bits != 8 && bits != 24 && bits != 32)
    return variant_unsupported(kFormat, std::to_string(bits) + " bits per pixel");
  if (compression == 3) {
    // BI_BITFIELDS: the red, green and blue masks follow the 40-byte header (inside the longer
    // headers, at the same offset). Only the byte layout B, G, R[, X] is read.
    if (bits == 8) return corrupt(kFormat, "bit fields for 8-bit pixels");
    if (b.size() < 14 + 40 + 12) return truncated(kFormat, "the bit-field masks are cut short");
    if (u32(b, 54) != 0xFF0000 || u32(b, 58) != 0xFF00 || u32(b, 62) != 0xFF)
      return variant_unsupported(kFormat,
                                 "bit-field masks other than R 0xff0000, G 0xff00, "
                                 "B 0xff");
  } else if (compression != 0) {
    return variant_unsupported(
        kFormat, "compression " + std::to_string(compression) + " (RLE, JPEG or PNG inside)");
  }

  // The palette (8-bit pixels): B, G, R, X entries right after the info header.
  std::array<uint8_t, 256 * 3> palette{};  // entries past the given ones are black
  size_t pixel_offset = data_offset;
  if (bits == 8) {
    if (colors == 0) colors = 256;
    if (colors > 256)
      return corrupt(kFormat, std::to_string(colors) + " palette colours for 8-bit pixels");
    const size_t at = 14 + static_cast<size_t>(header_size);
    if (b.size() < at + 4 * static_cast<size_t>(colors))
      return truncated(kFormat, "the palette is cut short");
    for (size_t i = 0; i < colors; ++i) {
      palette[3 * i] = b[at + 4 * i + 2];
      palette[3 * i + 1] = b[at + 4 * i + 1];
      palette[3 * i + 2] = b[at + 4 * i];
    }
    // As Pillow: a data offset that points at the palette means the data follows it.
    if (pixel_offset == at) pixel_offset += 4 * static_cast<size_t>(colors);
  }
  if (pixel_offset < 14 + static_cast<size_t>(header_size))
    return corrupt(
        kFormat, "the pixel data offset " + std::to_string(data_offset) + " is inside the headers");
  // Rows are padded to 4 bytes; stride < 2^34, and the check divides so as not to overflow.
  const auto stride = static_cast<uint64_t>((width * bits + 31) / 32 * 4);
  const uint64_t available = b.size() > pixel_offset ? b.size() - pixel_offset : 0;
  if (static_cast<uint64_t>(height) > available / stride)
    return truncated(kFormat, std::to_string(width) + "x" + std::to_string(height) + " pixels of " +
                                  std::to_string(stride) + "-byte rows need more than the " +
                                  std::to_string(available) + " bytes of pixel data in the stream");

  XOPT_ASSIGN_OR_RETURN(Image img, make_image(kFormat, width, height, 3));
  const size_t bytes_per_pixel = bits / 8;
  for (int64_t y = 0; y < height; ++y) {
    const int64_t stored_row = top_down ? y : height - 1 - y;
    const uint8_t* in = b.data() + pixel_offset + static_cast<size_t>(stored_row) * stride;
    uint8_t* out = img.pixels.data() + static_cast<size_t>(y * width * 3);
    for (int64_t x = 0; x < width; ++x, out += 3, in += bytes_per_pixel) {
      if (bits == 8) {
        std::memcpy(out, &palette[3 * static_cast<size_t>(*in)], 3);
      } else {
        out[0] = in[2];
        out[1] = in[1];
        out[2] = in[0];
      }
    }
  }
  return img;
}

}  // namespace xopt::exec::image::detail
