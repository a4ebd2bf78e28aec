// The small images in fuzz/seeds/image (made with Pillow: 24-bit and palette BMP; RGB, palette,
// gray, RGBA and interlaced PNG; baseline, gray and progressive JPEG; raw, LZW and palette TIFF;
// lossy and lossless-with-alpha WebP; JP2 and J2K; binary and plain PNM) decode to exactly what
// Pillow gives for them: the hashes below are FNV-1a of np.array(img.convert("RGB")) and of
// np.array(img.convert("L")), the pixels ImageDecoder's RGB and Grayscale outputs are.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "executor/cpu/image/image.h"

namespace xopt::exec::image {
namespace {

struct Golden {
  const char* file;
  int64_t height, width;
  uint64_t rgb_hash, gray_hash;
};

constexpr Golden kGoldens[] = {
    {"baseline.jpg", 8, 8, 0x0798f54f4bcb6cd3ULL, 0xa3087f3b76502711ULL},
    {"gray.jpg", 8, 8, 0x046a5210d817def9ULL, 0x47ffca12adeda369ULL},
    {"gray.pgm", 8, 8, 0x4853f013fe91d657ULL, 0xce8418cb9f51f4bbULL},
    {"gray.png", 8, 8, 0x4853f013fe91d657ULL, 0xce8418cb9f51f4bbULL},
    {"interlaced.png", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"lossless.webp", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"lossy.webp", 8, 8, 0x2f82af8287be34adULL, 0xe4f5b7ba5ae494a9ULL},
    {"lzw.tif", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"palette.bmp", 8, 8, 0x90c1388f628c77f9ULL, 0x3cdd7e1eac967dbbULL},
    {"palette.png", 8, 8, 0x90c1388f628c77f9ULL, 0x3cdd7e1eac967dbbULL},
    {"palette.tif", 8, 8, 0x90c1388f628c77f9ULL, 0x3cdd7e1eac967dbbULL},
    {"plain.ppm", 2, 2, 0x9abd12ce5f724825ULL, 0x2d4c52b2d6f156b9ULL},
    {"progressive.jpg", 8, 8, 0xc4215dd96938f28dULL, 0x47ffca12adeda369ULL},
    {"rgb.bmp", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"rgb.j2k", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"rgb.jp2", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"rgb.png", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"rgb.ppm", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"rgb.tif", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
    {"rgba.png", 8, 8, 0x782f5e5658c0d165ULL, 0xce8418cb9f51f4bbULL},
};

uint64_t fnv1a(const std::vector<uint8_t>& b) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint8_t x : b) h = (h ^ x) * 0x100000001b3ULL;
  return h;
}

TEST(PillowGoldens, SeedImagesDecodeToPillowsPixels) {
  int checked = 0;
  for (const Golden& g : kGoldens) {
    SCOPED_TRACE(g.file);
    std::ifstream f(std::string(XOPT_SOURCE_DIR) + "/fuzz/seeds/image/" + g.file, std::ios::binary);
    ASSERT_TRUE(f) << "missing seed";
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(f), {}};
    if (!format_built_in(sniff_format(bytes))) continue;
    auto img = decode_image(bytes);
    ASSERT_TRUE(img.is_ok()) << img.status().message();
    EXPECT_EQ(img->height, g.height);
    EXPECT_EQ(img->width, g.width);
    // What the kernel makes of it: gray levels repeated for RGB; luma for Grayscale.
    std::vector<uint8_t> rgb, gray;
    for (size_t i = 0; i < img->pixels.size(); i += static_cast<size_t>(img->channels)) {
      const uint8_t* p = &img->pixels[i];
      const uint8_t r = p[0], gr = img->channels == 3 ? p[1] : p[0],
                    b = img->channels == 3 ? p[2] : p[0];
      rgb.insert(rgb.end(), {r, gr, b});
      gray.push_back(static_cast<uint8_t>((r * 19595 + gr * 38470 + b * 7471 + 0x8000) >> 16));
    }
    EXPECT_EQ(fnv1a(rgb), g.rgb_hash);
    EXPECT_EQ(fnv1a(gray), g.gray_hash);
    ++checked;
  }
  EXPECT_GE(checked, 5);  // BMP and PNM are always built in
}

}  // namespace
}  // namespace xopt::exec::image
