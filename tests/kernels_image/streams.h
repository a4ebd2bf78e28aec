// Encoded images made by hand for the tests: small valid streams, and headers that claim more
// than the stream holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xopt::test {

inline void put_u16(std::vector<uint8_t>& b, uint32_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
inline void put_u32(std::vector<uint8_t>& b, uint32_t v) {
  put_u16(b, v & 0xFFFF);
  put_u16(b, v >> 16);
}
inline void put_be32(std::vector<uint8_t>& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}

// A BMP's file header and 40-byte info header; `height` < 0 for top-down rows.
inline std::vector<uint8_t> bmp_headers(int32_t width, int32_t height, int bits,
                                        uint32_t palette_colors, uint32_t compression = 0) {
  std::vector<uint8_t> b = {'B', 'M'};
  const uint32_t offset = 14 + 40 + 4 * palette_colors;
  put_u32(b, 0);  // file size (not read)
  put_u32(b, 0);
  put_u32(b, offset);
  put_u32(b, 40);
  put_u32(b, static_cast<uint32_t>(width));
  put_u32(b, static_cast<uint32_t>(height));
  put_u16(b, 1);
  put_u16(b, static_cast<uint32_t>(bits));
  put_u32(b, compression);
  put_u32(b, 0);  // image size
  put_u32(b, 2835);
  put_u32(b, 2835);
  put_u32(b, palette_colors);
  put_u32(b, 0);
  return b;
}

// A 24-bit bottom-up BMP of `rgb` (rows top to bottom, as the decoder returns them).
inline std::vector<uint8_t> bmp_24bit(int width, int height, const std::vector<uint8_t>& rgb) {
  std::vector<uint8_t> b = bmp_headers(width, height, 24, 0);
  const int stride = (width * 3 + 3) / 4 * 4;
  for (int y = height - 1; y >= 0; --y) {
    for (int x = 0; x < width; ++x) {
      const uint8_t* p = &rgb[static_cast<size_t>((y * width + x) * 3)];
      b.insert(b.end(), {p[2], p[1], p[0]});
    }
    for (int pad = width * 3; pad < stride; ++pad) b.push_back(0);
  }
  return b;
}

inline uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFF;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320 & (0 - (c & 1)));
  }
  return c ^ 0xFFFFFFFF;
}

// A PNG chunk: length, type, data, CRC.
inline void png_chunk(std::vector<uint8_t>& b, const char* type, const std::vector<uint8_t>& data) {
  put_be32(b, static_cast<uint32_t>(data.size()));
  const size_t start = b.size();
  b.insert(b.end(), type, type + 4);
  b.insert(b.end(), data.begin(), data.end());
  put_be32(b, crc32(b.data() + start, b.size() - start));
}

// A PNG signature and IHDR (8-bit RGB) claiming width x height, then an IDAT of `idat` bytes.
inline std::vector<uint8_t> png_claiming(uint32_t width, uint32_t height, size_t idat) {
  std::vector<uint8_t> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
  png_chunk(b, "IHDR", ihdr);
  png_chunk(b, "IDAT", std::vector<uint8_t>(idat, 0));
  return b;
}

// A baseline JPEG's markers up to the scan (SOI, SOF0 of one component, SOS) claiming
// width x height; enough for libjpeg to read the header.
inline std::vector<uint8_t> jpeg_claiming(uint16_t width, uint16_t height) {
  return {0xFF,
          0xD8,  // SOI
          0xFF,
          0xC0,
          0,
          11,
          8,
          static_cast<uint8_t>(height >> 8),  // SOF0
          static_cast<uint8_t>(height),
          static_cast<uint8_t>(width >> 8),
          static_cast<uint8_t>(width),
          1,
          1,
          0x11,
          0,  //
          0xFF,
          0xDA,
          0,
          8,
          1,
          1,
          0x00,
          0,
          63,
          0,  // SOS
          0x00,
          0x00,
          0x00,
          0x00};
}

}  // namespace xopt::test
