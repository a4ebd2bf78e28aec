// PNG output of the charts we draw ourselves (librsvg + cairo): a real PNG of the SVG's size, not
// blank; and xviz timeline/breakdown -o x.png write one.
#include <gtest/gtest.h>

#include <string>

#include "viz/raster.h"

namespace xopt::viz {
namespace {

uint32_t be32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

TEST(Raster, SvgBecomesAPngOfItsSize) {
  if (!can_rasterize()) GTEST_SKIP() << "built without librsvg (apt-get install librsvg2-dev)";
  const std::string svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"80\">"
      "<rect x=\"10\" y=\"10\" width=\"50\" height=\"30\" fill=\"#4477aa\"/></svg>";
  auto png = svg_to_png(svg);
  ASSERT_TRUE(png.is_ok()) << png.status().message();
  ASSERT_GT(png->size(), 24u);
  EXPECT_EQ(png->substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(be32(*png, 16), 120u);  // IHDR width
  EXPECT_EQ(be32(*png, 20), 80u);   // IHDR height
  auto doubled = svg_to_png(svg, 2.0);
  ASSERT_TRUE(doubled.is_ok());
  EXPECT_EQ(be32(*doubled, 16), 240u);
  // Not a PNG path: the SVG comes back as it was.
  auto same = svg_or_png("t.svg", svg);
  ASSERT_TRUE(same.is_ok());
  EXPECT_EQ(*same, svg);
}

TEST(Raster, BrokenSvgIsAnError) {
  if (!can_rasterize()) GTEST_SKIP() << "built without librsvg (apt-get install librsvg2-dev)";
  auto png = svg_to_png("<svg this is not xml");
  EXPECT_FALSE(png.is_ok());
}

}  // namespace
}  // namespace xopt::viz
