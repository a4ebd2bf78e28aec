// decode_image() on streams made here: the BMP and PNM subsets read exactly (orientation,
// palettes, bit fields, maxval scaling, comments), and hostile input: empty, unknown, truncated and
// corrupt streams are errors that say so, headers that claim huge images are refused before
// anything is allocated, and every truncation and byte flip of the node tests' images is an error
// or an image, never a crash (the sanitizer build checks the memory accesses).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "executor/cpu/image/image.h"
#include "ir/tensor_proto.h"
#include "tests/kernels_image/streams.h"
#include "tests/util/test_util.h"

namespace xopt::exec::image {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes bytes_of(const std::string& s) {
  return Bytes(s.begin(), s.end());
}
// A string literal's bytes, embedded zeros included (not its terminating zero).
template <size_t N>
Bytes bytes_of(const char (&s)[N]) {
  return Bytes(s, s + N - 1);
}

Image decoded(const Bytes& b) {
  auto r = decode_image(b);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? std::move(r).value() : Image();
}

// The error of decoding `b`, checking that it is one.
Status failure(const Bytes& b) {
  auto r = decode_image(b);
  EXPECT_FALSE(r.is_ok()) << "decoded a " << r->width << "x" << r->height << " image";
  return r.status();
}

#define EXPECT_ERROR(bytes, code_, text)                                   \
  do {                                                                     \
    const Status s_ = failure(bytes);                                      \
    EXPECT_EQ(s_.code(), ErrorCode::code_) << s_.message();                \
    EXPECT_NE(s_.message().find(text), std::string::npos) << s_.message(); \
  } while (0)

TEST(ImageStreams, FormatsAreSniffedFromTheirSignatures) {
  EXPECT_EQ(sniff_format(bytes_of("\xff\xd8\xff\xe0")), Format::kJpeg);
  EXPECT_EQ(sniff_format(bytes_of("\x89PNG\r\n\x1a\n")), Format::kPng);
  EXPECT_EQ(sniff_format(bytes_of("BM")), Format::kBmp);
  EXPECT_EQ(sniff_format(bytes_of(std::string("II*\0", 4))), Format::kTiff);
  EXPECT_EQ(sniff_format(bytes_of(std::string("MM\0*", 4))), Format::kTiff);
  EXPECT_EQ(sniff_format(bytes_of("RIFF\x20\x02\0\0WEBP")), Format::kWebp);
  EXPECT_EQ(sniff_format(bytes_of("RIFF\x20\x02\0\0WAVE")), Format::kUnknown);
  EXPECT_EQ(sniff_format(bytes_of(std::string("\0\0\0\x0cjP  \r\n\x87\n", 12))), Format::kJpeg2000);
  EXPECT_EQ(sniff_format(bytes_of("\xff\x4f\xff\x51")), Format::kJpeg2000);
  for (const char* p : {"P2", "P3", "P5", "P6"}) EXPECT_EQ(sniff_format(bytes_of(p)), Format::kPnm);
  EXPECT_EQ(sniff_format(bytes_of("P4")), Format::kUnknown);  // bitmaps are not read
  EXPECT_EQ(sniff_format(bytes_of("GIF89a")), Format::kUnknown);
}

TEST(ImageStreams, EmptyAndUnknownStreams) {
  EXPECT_ERROR(Bytes{}, kInvalidArgument, "the encoded stream is empty");
  EXPECT_ERROR(bytes_of("GIF89a\x01\x00"), kUnsupported,
               "unknown image format (the stream starts 47 49 46 38 39 61 01 00)");
  EXPECT_ERROR(bytes_of("P4\n1 1\n\x80"), kUnsupported, "unknown image format");
}

TEST(ImageStreams, BmpBottomUpTopDownAndPadding) {
  // 3x2, 24-bit: rows of 9 bytes padded to 12.
  const Bytes rgb = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
  Image img = decoded(test::bmp_24bit(3, 2, rgb));
  EXPECT_EQ(img.width, 3);
  EXPECT_EQ(img.height, 2);
  EXPECT_EQ(img.channels, 3);
  EXPECT_EQ(img.pixels, rgb);
  // The same pixels top-down (negative height): the rows are stored in the other order.
  Bytes top_down = test::bmp_headers(3, -2, 24, 0);
  const Bytes bottom_up = test::bmp_24bit(3, 2, rgb);
  top_down.insert(top_down.end(), bottom_up.begin() + 54 + 12, bottom_up.end());  // row 0
  top_down.insert(top_down.end(), bottom_up.begin() + 54, bottom_up.begin() + 54 + 12);
  EXPECT_EQ(decoded(top_down).pixels, rgb);
}

TEST(ImageStreams, Bmp32BitAndBitFields) {
  // 32-bit B, G, R, X: the fourth byte is dropped.
  for (uint32_t compression : {0u, 3u}) {
    Bytes b = test::bmp_headers(2, 1, 32, 0, compression);
    if (compression == 3) {
      for (uint32_t mask : {0xFF0000u, 0xFF00u, 0xFFu}) test::put_u32(b, mask);
      b[10] = 54 + 12;  // the data follows the masks
    }
    b.insert(b.end(), {30, 20, 10, 99, 60, 50, 40, 0});
    EXPECT_EQ(decoded(b).pixels, (Bytes{10, 20, 30, 40, 50, 60})) << compression;
  }
  Bytes rgba_masks = test::bmp_headers(1, 1, 32, 0, 3);
  for (uint32_t mask : {0xFFu, 0xFF00u, 0xFF0000u}) test::put_u32(rgba_masks, mask);
  rgba_masks.insert(rgba_masks.end(), {1, 2, 3, 4});
  EXPECT_ERROR(rgba_masks, kUnsupported, "bit-field masks");
}

TEST(ImageStreams, BmpPaletteAndIndicesPastIt) {
  // 8-bit, 2 colours (B, G, R, X): index 0 red, 1 green; 7 is past the palette: black (Pillow).
  Bytes b = test::bmp_headers(3, 1, 8, 2);
  b.insert(b.end(), {0, 0, 255, 0, 0, 255, 0, 0});
  b.insert(b.end(), {0, 1, 7, 0});  // one row, padded to 4
  EXPECT_EQ(decoded(b).pixels, (Bytes{255, 0, 0, 0, 255, 0, 0, 0, 0}));
}

TEST(ImageStreams, BmpVariantsNotReadAreUnsupported) {
  Bytes rle = test::bmp_headers(1, 1, 8, 1, 1);
  rle.resize(rle.size() + 8);
  EXPECT_ERROR(rle, kUnsupported, "compression 1");
  Bytes four_bit = test::bmp_headers(1, 1, 4, 2);
  four_bit.resize(four_bit.size() + 12);
  EXPECT_ERROR(four_bit, kUnsupported, "4 bits per pixel");
}

TEST(ImageStreams, BmpHostileHeaders) {
  EXPECT_ERROR(bytes_of("BM\x01\x02"), kInvalidArgument, "truncated BMP stream");
  // A huge image claimed by a small stream: refused before the image is allocated.
  Bytes huge = test::bmp_headers(100000, 100000, 24, 0);
  huge.resize(huge.size() + 64);
  EXPECT_ERROR(huge, kInvalidArgument, "100000x100000 pixels of 300000-byte rows need more");
  Bytes huge_top_down = test::bmp_headers(100000, -100000, 24, 0);
  EXPECT_ERROR(huge_top_down, kInvalidArgument, "truncated BMP stream");
  EXPECT_ERROR(test::bmp_headers(0, 5, 24, 0), kInvalidArgument, "the image is 0x5 pixels");
  EXPECT_ERROR(test::bmp_headers(5, INT32_MIN, 24, 0), kInvalidArgument, "truncated BMP stream");
  // One byte short of the pixel data.
  Bytes short_data = test::bmp_24bit(2, 2, Bytes(12, 7));
  short_data.pop_back();
  EXPECT_ERROR(short_data, kInvalidArgument, "truncated BMP stream");
  // A palette that does not fit, a palette of more than 256 colours, a data offset inside the
  // headers, an unknown header size.
  EXPECT_ERROR(test::bmp_headers(1, 1, 8, 200), kInvalidArgument, "the palette is cut short");
  Bytes many = test::bmp_headers(1, 1, 8, 300);
  many.resize(many.size() + 4 * 300 + 4);
  EXPECT_ERROR(many, kInvalidArgument, "300 palette colours");
  Bytes inside = test::bmp_24bit(1, 1, Bytes(3, 1));
  inside[10] = 20;
  EXPECT_ERROR(inside, kInvalidArgument, "inside the headers");
  Bytes odd_header = test::bmp_24bit(1, 1, Bytes(3, 1));
  odd_header[14] = 41;
  EXPECT_ERROR(odd_header, kInvalidArgument, "unknown info header size 41");
}

TEST(ImageStreams, PnmBinaryAndPlain) {
  Image p6 = decoded(bytes_of("P6\n2 1\n255\n\x01\x02\x03\xfd\xfe\xff"));
  EXPECT_EQ(p6.channels, 3);
  EXPECT_EQ(p6.pixels, (Bytes{1, 2, 3, 253, 254, 255}));
  // Comments anywhere in the header; plain samples separated by any whitespace.
  Image p3 =
      decoded(bytes_of("P3 # a comment\n# another\r2 # width\n1\n255\n1 2 3\n\t253 254 255 "));
  EXPECT_EQ(p3.pixels, (Bytes{1, 2, 3, 253, 254, 255}));
  Image p2 = decoded(bytes_of("P2\n3 1\n255\n0 128 255"));
  EXPECT_EQ(p2.channels, 1);
  EXPECT_EQ(p2.pixels, (Bytes{0, 128, 255}));
}

TEST(ImageStreams, PnmMaxvalScalingRoundsHalfToEvenAsPillow) {
  // round(v / maxval * 255): maxval 2 gives 0, 127.5 -> 128, 255; maxval 10: 25.5 -> 26,
  // 76.5 -> 76, 127.5 -> 128; a binary sample over maxval clips to 255.
  EXPECT_EQ(decoded(bytes_of("P5 3 1 2 \x00\x01\x02")).pixels, (Bytes{0, 128, 255}));
  EXPECT_EQ(decoded(bytes_of("P2 4 1 10 1 3 5 10")).pixels, (Bytes{26, 76, 128, 255}));
  EXPECT_EQ(decoded(bytes_of("P5 1 1 15 \x20")).pixels, (Bytes{255}));
  EXPECT_ERROR(bytes_of("P2 1 1 15 16"), kInvalidArgument, "sample 16 is over maxval 15");
}

TEST(ImageStreams, PnmHostileHeaders) {
  EXPECT_ERROR(bytes_of("P6"), kInvalidArgument, "corrupt PNM stream");
  EXPECT_ERROR(bytes_of("P6x1 1 255\n"), kInvalidArgument, "corrupt PNM stream");
  EXPECT_ERROR(bytes_of("P6\n2"), kInvalidArgument, "truncated PNM stream: the height is missing");
  EXPECT_ERROR(bytes_of("P6\n2 -1 255\n"), kInvalidArgument, "not a digit (0x2d)");
  EXPECT_ERROR(bytes_of("P6\n12345678901 1 255\n"), kInvalidArgument, "the width is too long");
  EXPECT_ERROR(bytes_of("P6\n0 1 255\n"), kInvalidArgument, "the image is 0x1 pixels");
  EXPECT_ERROR(bytes_of("P6\n1 1 0\n"), kInvalidArgument, "maxval 0 is not in 1..65535");
  EXPECT_ERROR(bytes_of("P6\n1 1 65535\n\0\0\0\0\0\0"), kUnsupported, "16-bit samples");
  // Huge images claimed by small streams: refused before the image is allocated.
  EXPECT_ERROR(bytes_of("P6\n100000 100000\n255\n\x01\x02\x03"), kInvalidArgument,
               "100000x100000 pixels need more samples than the 3 bytes left");
  EXPECT_ERROR(bytes_of("P3\n9999999999 9999999999\n255\n1 2 3"), kInvalidArgument,
               "truncated PNM stream");
  // Short data.
  EXPECT_ERROR(bytes_of("P6\n2 1\n255\n\x01\x02\x03\x04\x05"), kInvalidArgument,
               "truncated PNM stream");
  EXPECT_ERROR(bytes_of("P3\n2 1\n255\n1 2 3 4 5 # six?\n      "), kInvalidArgument,
               "truncated PNM stream: it has 5 of 6 samples");
  EXPECT_ERROR(bytes_of("P3\n1 1\n255\n1 2 x"), kInvalidArgument, "not a digit");
}

TEST(ImageStreams, CompressedFormatsClaimingHugeImagesAreRefusedBeforeAllocating) {
  if (format_built_in(Format::kPng)) {
    // 100000x100000 in a 60-byte stream: deflate cannot expand it that far.
    EXPECT_ERROR(test::png_claiming(100000, 100000, 4), kInvalidArgument,
                 "cannot hold 100000x100000 pixels");
  }
  if (format_built_in(Format::kJpeg)) {
    // JPEG's largest dims: over the pixel limit, refused after the header.
    EXPECT_ERROR(test::jpeg_claiming(65000, 65000), kInvalidArgument,
                 "JPEG image of 65000x65000 pixels is over the limit of 178956970 pixels");
  }
}

TEST(ImageStreams, CorruptCompressedStreamsAreErrors) {
  if (format_built_in(Format::kJpeg))
    EXPECT_ERROR(test::jpeg_claiming(0, 8), kInvalidArgument, "corrupt JPEG stream");
  if (format_built_in(Format::kPng)) {
    Bytes bad_crc = test::png_claiming(4, 4, 4);
    bad_crc[29] ^= 1;  // IHDR's CRC
    EXPECT_ERROR(bad_crc, kInvalidArgument, "corrupt PNG stream");
    EXPECT_ERROR(bytes_of("\x89PNG\r\n\x1a\n\0\0"), kInvalidArgument, "truncated PNG stream");
    // An sPLT chunk claiming 1.6 GB after a valid IHDR: libpng may not allocate that much, so it
    // skips the chunk, and the stream ends inside it.
    Bytes huge_chunk = test::png_claiming(8, 8, 0);
    huge_chunk.resize(33);  // signature and IHDR
    test::put_be32(huge_chunk, 0x62000030);
    huge_chunk.insert(huge_chunk.end(), {'s', 'P', 'L', 'T', 'E', 0x83, 0xc3});
    EXPECT_ERROR(huge_chunk, kInvalidArgument,
                 "libpng asked for 1644167217 bytes at once, over the 64 MiB it may take");
  }
  if (format_built_in(Format::kTiff))
    EXPECT_ERROR(bytes_of(std::string("II*\0\xff\xff\xff\x7f", 8)), kInvalidArgument,
                 "corrupt TIFF stream");
  if (format_built_in(Format::kWebp))
    EXPECT_ERROR(bytes_of("RIFF\x20\x02\0\0WEBPVP8 "), kInvalidArgument, "WebP stream");
  if (format_built_in(Format::kJpeg2000))
    EXPECT_ERROR(bytes_of("\xff\x4f\xff\x51\0\0"), kInvalidArgument, "JPEG 2000 stream");
}

// The encoded stream of a node test, or empty when the folder is missing.
Bytes node_test_stream(const std::string& shared, const std::string& name) {
  const std::string path = shared + "/onnx-conformance/node/test_image_decoder_decode_" + name +
                           "/test_data_set_0/input_0.pb";
  onnx::TensorProto proto;
  std::ifstream in(path, std::ios::binary);
  if (!in || !proto.ParseFromIstream(&in)) return {};
  auto t = ir::tensor_from_proto(std::move(proto), "");
  if (!t.is_ok()) return {};
  const uint8_t* p = t->data<uint8_t>();
  return Bytes(p, p + t->numel());
}

TEST(ImageStreams, TruncatedAndFlippedNodeTestImagesNeverCrash) {
  XOPT_REQUIRE_SHARED(shared);
  std::mt19937 rng(20);
  for (const char* name :
       {"bmp_rgb", "jpeg_rgb", "jpeg2k_rgb", "png_rgb", "pnm_rgb", "tiff_rgb", "webp_rgb"}) {
    SCOPED_TRACE(name);
    const Bytes full = node_test_stream(shared, name);
    ASSERT_FALSE(full.empty());
    const Format f = sniff_format(full);
    if (!format_built_in(f)) continue;
    const Image whole = decoded(full);
    EXPECT_EQ(whole.width, 32);
    EXPECT_EQ(whole.height, 32);
    // Every prefix: an error, or (a format whose tail is not needed) the image.
    int errors = 0;
    for (size_t n = 1; n < full.size(); n += std::max<size_t>(1, full.size() / 150)) {
      auto r = decode_image(Bytes(full.begin(), full.begin() + static_cast<long>(n)));
      if (!r.is_ok()) {
        ++errors;
        EXPECT_TRUE(r.status().message().find("stream") != std::string::npos ||
                    r.status().code() == ErrorCode::kUnsupported)
            << r.status().message();
      } else {
        EXPECT_EQ(r->width * r->height * r->channels, static_cast<int64_t>(r->pixels.size()));
      }
    }
    EXPECT_GT(errors, 0);
    // Random byte flips: whatever comes out, it is consistent.
    for (int trial = 0; trial < 100; ++trial) {
      Bytes b = full;
      for (int k = 0; k < 4; ++k) b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      auto r = decode_image(b);
      if (r.is_ok()) {
        EXPECT_EQ(r->width * r->height * r->channels, static_cast<int64_t>(r->pixels.size()));
      }
    }
  }
}

TEST(ImageStreams, TruncatedNodeTestImagesSayTruncated) {
  XOPT_REQUIRE_SHARED(shared);
  for (const char* name : {"jpeg_rgb", "png_rgb", "bmp_rgb", "pnm_rgb"}) {
    SCOPED_TRACE(name);
    const Bytes full = node_test_stream(shared, name);
    ASSERT_FALSE(full.empty());
    if (!format_built_in(sniff_format(full))) continue;
    const Bytes half(full.begin(), full.begin() + static_cast<long>(full.size() / 2));
    EXPECT_ERROR(half, kInvalidArgument, "truncated");
  }
}

}  // namespace
}  // namespace xopt::exec::image
