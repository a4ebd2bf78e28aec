// BatchNormalization in float computes as onnxruntime does (inv_std = 1 / sqrt(var + eps),
// a = inv_std * scale, c = B - mean * a, y = x * a + c, all in float), bit for bit: dynamically
// quantized models requantize right after it, where one ulp can move a uint8 step (mobilenet_v2
// after onnxruntime's quantize_dynamic was 3.5e-2 of the logits' scale away; now exact).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "executor/cpu/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

namespace xopt::test {
namespace {

TEST(BatchNormFloat, OnnxruntimesOrderBitForBit) {
  auto m = ir::parse_model_text(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3,4,5] x) => (float[2,3,4,5] y)
       <float[3] s = {0.731, -1.37, 2.9}, float[3] b = {0.1, -0.333, 1.7},
        float[3] mean = {0.41, -2.2, 0.07}, float[3] var = {0.93, 0.0131, 4.4}> {
      y = BatchNormalization <epsilon = 0.001> (x, s, b, mean, var)
    })");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  ASSERT_TRUE(ir::infer_shapes(*m->graph).is_ok());
  ir::Tensor x(ir::DType::kFloat, {2, 3, 4, 5});
  float* xd = x.mutable_data<float>();
  for (int i = 0; i < 120; ++i) xd[i] = std::sin(0.37f * static_cast<float>(i)) * 3.1f;
  auto out = exec::run_model(*m, {{"x", x}});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const float s[] = {0.731f, -1.37f, 2.9f}, b[] = {0.1f, -0.333f, 1.7f},
              mean[] = {0.41f, -2.2f, 0.07f}, var[] = {0.93f, 0.0131f, 4.4f};
  const float* y = (*out)[0].data<float>();
  int differ = 0;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c) {
      const float inv_std = 1.0f / std::sqrt(var[c] + 0.001f);
      const float a = inv_std * s[c];
      const float k = b[c] - mean[c] * a;
      for (int i = 0; i < 20; ++i) {
        const int at = (n * 3 + c) * 20 + i;
        const float want = xd[at] * a + k;
        differ += std::memcmp(&want, &y[at], sizeof(float)) != 0;
      }
    }
  EXPECT_EQ(differ, 0);
}

}  // namespace
}  // namespace xopt::test
