// FlexAttention's modifiers beyond what a reference can check (the ONNX reference evaluator cannot
// resolve a modifier's outer-scope reads), and its errors. Expected values: the same model with
// the outer value inlined as a constant, whose results the generated cases (`flex_attention_*_ref`,
// checked against the reference evaluator) cover.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "executor/cpu/session.h"
#include "ir/shape_inference.h"
#include "tests/util/pass_golden.h"

namespace xopt::test {
namespace {

ir::Tensor filled(std::vector<int64_t> dims, float start, float step) {
  ir::Tensor t(ir::DType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.mutable_data<float>()[i] = start + step * static_cast<float>((i * 7) % 11);
  return t;
}

const char* kOuterBias = R"(
<ir_version: 10, opset_import: ["" : 23, "ai.onnx.preview" : 1]>
g (float[1,4,3,8] Q, float[1,2,5,8] K, float[1,2,5,4] V, float[3,5] bias) => (float[1,4,3,4] Y) {
  Y = ai.onnx.preview.FlexAttention <score_mod = m (float[1,4,3,5] s) => (float[1,4,3,5] o) {
    o = Add (s, bias)
  }> (Q, K, V)
}
)";

const char* kInlineBias = R"(
<ir_version: 10, opset_import: ["" : 23, "ai.onnx.preview" : 1]>
g (float[1,4,3,8] Q, float[1,2,5,8] K, float[1,2,5,4] V, float[3,5] bias) => (float[1,4,3,4] Y) {
  Y = ai.onnx.preview.FlexAttention <score_mod = m (float[1,4,3,5] s) => (float[1,4,3,5] o) {
    b = Constant <value = float[3,5] {BIAS}> ()
    o = Add (s, b)
  }> (Q, K, V)
}
)";

std::map<std::string, ir::Tensor> feeds() {
  return {{"Q", filled({1, 4, 3, 8}, -0.5F, 0.1F)},
          {"K", filled({1, 2, 5, 8}, 0.4F, -0.07F)},
          {"V", filled({1, 2, 5, 4}, -1.0F, 0.2F)},
          {"bias", filled({3, 5}, -2.0F, 0.25F)}};  // printed exactly
}

TEST(FlexAttention, ScoreModReadsAnOuterScopeValue) {
  const auto in = feeds();
  std::string values;
  for (int64_t i = 0; i < 15; ++i)
    values += (i ? ", " : "") + std::to_string(in.at("bias").data<float>()[i]);
  std::string inline_text = kInlineBias;
  inline_text.replace(inline_text.find("BIAS"), 4, values);
  ir::Model outer = parse_text(kOuterBias), inlined = parse_text(inline_text);
  ASSERT_TRUE(ir::infer_shapes(*outer.graph).is_ok());
  auto a = exec::run_model(outer, in);
  auto b = exec::run_model(inlined, in);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  EXPECT_TRUE((*a)[0].same_contents((*b)[0]));
  // The bias matters: a zero bias gives another result.
  auto zero = in;
  zero["bias"] = filled({3, 5}, 0.0F, 0.0F);
  auto c = exec::run_model(outer, zero);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_FALSE((*a)[0].same_contents((*c)[0]));
}

// A modifier that changes the scores' shape, and heads that do not group, are refused by shape
// inference and by the kernel, naming the node and what is wrong.
TEST(FlexAttention, BadModifiersAndHeadsAreRefused) {
  ir::Model reduces = parse_text(R"(
<ir_version: 10, opset_import: ["" : 23, "ai.onnx.preview" : 1]>
g (float[1,2,3,4] Q, float[1,2,5,4] K, float[1,2,5,4] V) => (float[1,2,3,4] Y) {
  Y = ai.onnx.preview.FlexAttention <prob_mod = m (float[1,2,3,5] p) => (float[1,2,3,1] o) {
    axes = Constant <value = int64[1] {3}> ()
    o = ReduceSum <keepdims = 1> (p, axes)
  }> (Q, K, V)
}
)");
  Status s = ir::infer_shapes(*reduces.graph);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("prob_mod"), std::string::npos) << s.message();
  std::map<std::string, ir::Tensor> in = {{"Q", filled({1, 2, 3, 4}, 0.1F, 0.1F)},
                                          {"K", filled({1, 2, 5, 4}, 0.2F, 0.1F)},
                                          {"V", filled({1, 2, 5, 4}, 0.3F, 0.1F)}};
  auto r = exec::run_model(reduces, in);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("prob_mod gave float"), std::string::npos)
      << r.status().message();

  ir::Model heads = parse_text(R"(
<ir_version: 10, opset_import: ["" : 23, "ai.onnx.preview" : 1]>
g (float[1,3,3,4] Q, float[1,2,5,4] K, float[1,2,5,4] V) => (float[1,3,3,4] Y) {
  Y = ai.onnx.preview.FlexAttention (Q, K, V)
}
)");
  s = ir::infer_shapes(*heads.graph);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("q heads 3 are not a multiple of kv heads 2"), std::string::npos)
      << s.message();
  in["Q"] = filled({1, 3, 3, 4}, 0.1F, 0.1F);
  r = exec::run_model(heads, in);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("FlexAttention"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace xopt::test
