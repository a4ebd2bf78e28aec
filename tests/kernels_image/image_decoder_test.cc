// ImageDecoder: the nine ONNX node tests (one per format, and BGR and Grayscale) pass bit for bit;
// the kernel's channel orders and gray levels on a stream made here; shape inference; errors that
// name the node.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "executor/cpu/conformance.h"
#include "executor/cpu/image/image.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "tests/kernels_image/streams.h"
#include "tests/util/run_one_node.h"
#include "tests/util/test_util.h"

namespace xopt::exec {
namespace {

namespace conf = conformance;
using image::Format;

std::string model(const std::string& pixel_format) {
  return R"(<ir_version: 9, opset_import: ["" : 20]>
    g (uint8[N] x) => (uint8[H, W, C] y) {
      y = ImageDecoder<pixel_format = ")" +
         pixel_format + R"(">(x)
    })";
}

ir::Tensor stream_tensor(const std::vector<uint8_t>& bytes) {
  return ir::Tensor::of<uint8_t>({static_cast<int64_t>(bytes.size())}, bytes);
}

TEST(ImageDecoderConformance, EveryNodeTestPassesBitForBit) {
  XOPT_REQUIRE_SHARED(shared);
  const std::map<std::string, Format> formats = {
      {"bmp", Format::kBmp},  {"jpeg2k", Format::kJpeg2000}, {"jpeg", Format::kJpeg},
      {"png", Format::kPng},  {"pnm", Format::kPnm},         {"tiff", Format::kTiff},
      {"webp", Format::kWebp}};
  conf::Options options;
  options.also_arena = true;
  int cases = 0, passed = 0;
  for (const auto& e : std::filesystem::directory_iterator(shared + "/onnx-conformance/node")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("test_image_decoder_decode_", 0) != 0) continue;
    ++cases;
    // "test_image_decoder_decode_<format>_<pixel format>"
    const std::string rest = name.substr(std::string("test_image_decoder_decode_").size());
    const Format f = formats.at(rest.substr(0, rest.find('_')));
    const conf::CaseResult r = conf::run_case(e.path().string(), options);
    if (image::format_built_in(f)) {
      EXPECT_EQ(r.outcome, conf::Outcome::kPassed) << name << ": " << r.detail;
      passed += r.outcome == conf::Outcome::kPassed;
    } else {
      // A build without the format's library says so, as unsupported.
      EXPECT_EQ(r.outcome, conf::Outcome::kUnsupported) << name << ": " << r.detail;
      EXPECT_NE(r.detail.find("which this build of xopt was made without"), std::string::npos)
          << r.detail;
      std::printf("  %s: unsupported in this build: %s\n", name.c_str(), r.detail.c_str());
    }
  }
  EXPECT_EQ(cases, 9);
  std::printf("ImageDecoder node tests: %d of %d passed\n", passed, cases);
}

// A 2x2 24-bit BMP: red, green / blue, white (stored bottom-up).
TEST(ImageDecoderKernel, RgbBgrAndGrayscale) {
  const std::vector<uint8_t> bmp =
      test::bmp_24bit(2, 2, {255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255});
  auto rgb = test::run_one(model("RGB"), {stream_tensor(bmp)});
  ASSERT_EQ(rgb.size(), 1u);
  EXPECT_EQ(rgb[0].dims(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(test::values<uint8_t>(rgb[0]),
            (std::vector<uint8_t>{255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255}));
  auto bgr = test::run_one(model("BGR"), {stream_tensor(bmp)});
  EXPECT_EQ(test::values<uint8_t>(bgr[0]),
            (std::vector<uint8_t>{0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255}));
  // Pillow's convert("L"): (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16.
  auto gray = test::run_one(model("Grayscale"), {stream_tensor(bmp)});
  EXPECT_EQ(gray[0].dims(), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(test::values<uint8_t>(gray[0]), (std::vector<uint8_t>{76, 150, 29, 255}));
}

// A gray image gives its level three times in RGB, and itself in Grayscale.
TEST(ImageDecoderKernel, GrayImagesInEveryPixelFormat) {
  const std::string pgm("P5\n3 1\n255\n\x00\x80\xff", 14);
  const std::vector<uint8_t> bytes(pgm.begin(), pgm.end());
  auto rgb = test::run_one(model("RGB"), {stream_tensor(bytes)});
  EXPECT_EQ(test::values<uint8_t>(rgb[0]),
            (std::vector<uint8_t>{0, 0, 0, 128, 128, 128, 255, 255, 255}));
  auto gray = test::run_one(model("Grayscale"), {stream_tensor(bytes)});
  EXPECT_EQ(test::values<uint8_t>(gray[0]), (std::vector<uint8_t>{0, 128, 255}));
}

TEST(ImageDecoderKernel, ErrorsNameTheNodeAndWhatIsWrong) {
  const std::string named = model("RGB");
  Status s;
  test::run_one(named, {stream_tensor({'B', 'M', 1, 2, 3})}, &s);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("node '<unnamed>' (ImageDecoder): truncated BMP stream"),
            std::string::npos)
      << s.message();
  test::run_one(named, {stream_tensor({1, 2, 3, 4, 5})}, &s);
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("unknown image format (the stream starts 01 02 03 04 05)"),
            std::string::npos)
      << s.message();
  test::run_one(named, {ir::Tensor::of<uint8_t>({0}, {})}, &s);
  EXPECT_NE(s.message().find("encoded_stream is empty"), std::string::npos) << s.message();
  test::run_one(model("HSV"), {stream_tensor({1})}, &s);
  EXPECT_NE(s.message().find("pixel_format must be RGB, BGR or Grayscale, not 'HSV'"),
            std::string::npos)
      << s.message();
}

std::string inferred(const std::string& text) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  if (!m.is_ok()) return "";
  ir::InferOptions o;
  o.strict = true;
  Status s = ir::infer_shapes(*m->graph, o);
  if (!s.is_ok()) return "error: " + s.message();
  const ir::Value* y = m->graph->find_value("y");
  return std::string(ir::dtype_name(y->dtype())) + y->shape().to_string();
}

TEST(ImageDecoderInference, Uint8RankThreeWithTheChannelsOfThePixelFormat) {
  const char* text = R"(<ir_version: 9, opset_import: ["" : 20]>
    g (uint8[N] x) => (y) { y = ImageDecoder<pixel_format = "%s">(x) })";
  auto with = [&](const char* format) {
    char buf[512];
    std::snprintf(buf, sizeof buf, text, format);
    return inferred(buf);
  };
  EXPECT_EQ(with("RGB"), "uint8[?,?,3]");
  EXPECT_EQ(with("BGR"), "uint8[?,?,3]");
  EXPECT_EQ(with("Grayscale"), "uint8[?,?,1]");
  EXPECT_NE(with("CMYK").find("pixel_format must be RGB, BGR or Grayscale"), std::string::npos);
  EXPECT_NE(inferred(R"(<ir_version: 9, opset_import: ["" : 20]>
    g (float[N] x) => (y) { y = ImageDecoder(x) })")
                .find("encoded_stream must be uint8"),
            std::string::npos);
  EXPECT_NE(inferred(R"(<ir_version: 9, opset_import: ["" : 20]>
    g (uint8[2, N] x) => (y) { y = ImageDecoder(x) })")
                .find("encoded_stream must be 1-D"),
            std::string::npos);
}

}  // namespace
}  // namespace xopt::exec
