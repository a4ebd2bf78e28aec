// fuse-hard-swish leaves a dynamically quantized model alone: HardSwish rounds differently from
// x * Clip(x + 3, 0, 6) / 6, and DynamicQuantizeLinear after it turns those ulps into quantization
// steps. PP-OCRv4's recognizer after onnxruntime's quantize_dynamic ended 8.7e-2 (of the output's
// scale) away from onnxruntime after `fold,fuse`, with fuse-hard-swish alone responsible.
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

constexpr const char* kHardSwishThenDynamicQuant = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[1,8] x) => (uint8[1,8] q, float s, uint8 z)
    <float three = {3}, float zero = {0}, float six = {6}> {
    a = Add(x, three)
    c = Clip(a, zero, six)
    m = Mul(x, c)
    h = Div(m, six)
    q, s, z = DynamicQuantizeLinear(h)
  })";

TEST(DynamicQuantFusion, HardSwishBeforeDynamicQuantizeLinearStays) {
  EXPECT_NOT_APPLIED("fuse-hard-swish", kHardSwishThenDynamicQuant);
}

// The same chain without dynamic quantization still fuses.
TEST(DynamicQuantFusion, HardSwishWithoutQuantizationFuses) {
  auto out = test::run_passes("fuse-hard-swish", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,8] x) => (float[1,8] h) <float three = {3}, float zero = {0}, float six = {6}> {
      a = Add(x, three)
      c = Clip(a, zero, six)
      m = Mul(x, c)
      h = Div(m, six)
    })");
  ASSERT_TRUE(out.status.is_ok()) << out.status.message();
  EXPECT_NE(out.text.find("HardSwish"), std::string::npos) << out.text;
}

}  // namespace
}  // namespace xopt
