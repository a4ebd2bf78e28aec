// Local error: the node alone in float16 / bfloat16 on its fp32 inputs, against answers computed
// by hand.
#include "precision/local_error.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/precision/precision_test_util.h"

namespace xopt {
namespace {

float r16(float v) {
  return ir::half_to_float(ir::float_to_half(v));
}
float rbf(float v) {
  return ir::bfloat16_to_float(ir::float_to_bfloat16(v));
}

constexpr const char* kMatMul = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2] x) => (float[1,1] y) <float[2,1] w = {1, 1}> {
  y = MatMul(x, w)
}
)";

// y = x0 + x1 with x = [1, 1/3]: in float16 1/3 is 0.333251953125 (1365 * 2^-12) and the sum
// 1.333251953125 rounds to 1.3330078125 (1365 * 2^-10): error 2.44e-4 of |y| = 1.3333334.
// bfloat16: 1/3 -> 0.333984375, the sum -> 1.3359375, error 1.95e-3.
TEST(LocalError, MatMulMatchesTheHandComputation) {
  ir::Model m = test::parse(kMatMul);
  const float third = 1.0f / 3.0f;
  auto cal = precision::calibrate(m, {{{"x", ir::Tensor::of<float>({1, 2}, {1.0f, third})}}});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  auto errs = precision::local_errors(*m.graph, *cal);
  ASSERT_EQ(errs.count("@y"), 1u);
  const precision::LocalError& e = errs.at("@y");
  ASSERT_TRUE(e.measured()) << e.problem;
  const double y = 1.0f + third;
  EXPECT_NEAR(e.fp16, std::fabs(r16(1.0f + r16(third)) - y) / y, 1e-9);
  EXPECT_NEAR(e.fp16, 2.44e-4, 1e-6);
  EXPECT_NEAR(e.bf16, std::fabs(rbf(1.0f + rbf(third)) - y) / y, 1e-9);
  EXPECT_NEAR(e.bf16, 1.953e-3, 1e-6);
  EXPECT_FALSE(e.method.empty());
}

// The error is relative RMS, ||y_t - y|| / ||y||, not the worst element: y = x * 1 with x = [1/3,
// 1, 1, 1] loses 1/3 - 1365/4096 = 8.14e-5 in float16 on one element only, and
// ||y|| = sqrt(1/9 + 3), so the error is 8.14e-5 / 1.764 = 4.61e-5 (the worst element's error
// against max|y| would be 8.14e-5).
TEST(LocalError, IsTheRelativeRmsError) {
  constexpr const char* kMul = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) <float[1] one = {1}> {
  y = Mul(x, one)
}
)";
  ir::Model m = test::parse(kMul);
  const float third = 1.0f / 3.0f;
  auto cal =
      precision::calibrate(m, {{{"x", ir::Tensor::of<float>({4}, {third, 1.0f, 1.0f, 1.0f})}}});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  const precision::LocalError e = precision::local_errors(*m.graph, *cal).at("@y");
  ASSERT_TRUE(e.measured()) << e.problem;
  const double norm = std::sqrt(static_cast<double>(third) * third + 3.0);
  EXPECT_NEAR(e.fp16, std::fabs(r16(third) - third) / norm, 1e-9);
  EXPECT_NEAR(e.fp16, 4.61e-5, 1e-7);
  EXPECT_NEAR(e.bf16, std::fabs(rbf(third) - third) / norm, 1e-9);
}

TEST(LocalError, ExactValuesHaveNoError) {
  ir::Model m = test::parse(kMatMul);
  auto cal = precision::calibrate(m, {{{"x", ir::Tensor::of<float>({1, 2}, {0.5f, 0.25f})}}});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  const precision::LocalError e = precision::local_errors(*m.graph, *cal).at("@y");
  EXPECT_EQ(e.fp16, 0.0);
  EXPECT_EQ(e.bf16, 0.0);
}

TEST(LocalError, OverflowIsInfiniteInFloat16Only) {
  constexpr const char* kAdd = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[2] c = {40000, 1}> {
  y = Add(x, c)
}
)";
  ir::Model m = test::parse(kAdd);
  auto cal = precision::calibrate(m, {{{"x", ir::Tensor::of<float>({2}, {30000.0f, 1.0f})}}});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  const precision::LocalError e = precision::local_errors(*m.graph, *cal).at("@y");
  EXPECT_TRUE(std::isinf(e.fp16));  // 70000 is inf in float16
  // bfloat16: 30000 -> 29952, 40000 -> 39936, their sum 69888 -> 69632 (ties to even on 512):
  // 368 / 70000.
  EXPECT_NEAR(e.bf16, 368.0 / 70000.0, 1e-9);
}

// Scores plus a -1e9 mask: relative to its scale (1e9) the Add loses only the mask's own rounding
// in bfloat16 (2^-9), but the softmax after it sees the scores rounded to 8 bits. The error carried
// downstream says so.
TEST(LocalError, MaskedScoresAreJudgedAtTheSoftmax) {
  constexpr const char* kMasked = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] s) => (float[2,4] p) <float[2,4] mask = {0, 0, -1e9, -1e9, 0, 0, 0, -1e9}> {
  m = Add(s, mask)
  p = Softmax <axis = -1> (m)
}
)";
  ir::Model m = test::parse(kMasked);
  // Row 0: 59.1 and 58.4 round to 59.0 and 58.5 on bfloat16's 0.25 steps: their difference
  // goes from 0.7 to 0.5, and the softmax moves by about 5%.
  const auto scores =
      ir::Tensor::of<float>({2, 4}, {59.1f, 58.4f, 1.0f, 2.0f, 30.3f, 29.6f, 30.0f, 3.0f});
  auto cal = precision::calibrate(m, {{{"s", scores}}});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  const precision::LocalError e = precision::local_errors(*m.graph, *cal).at("@m");
  ASSERT_TRUE(e.measured()) << e.problem;
  EXPECT_LE(e.own_bf16, 1.0 / 512);  // the mask's rounding, against a scale of 1e9
  EXPECT_GT(e.bf16, 5e-3);           // seen at the softmax
  precision::LocalErrorOptions alone;
  alone.hops = 0;
  const ir::Node& add = *m.graph->find_node_output("m")->producer();
  EXPECT_EQ(precision::node_local_error(add, cal->values, alone).bf16, e.own_bf16);
}

TEST(LocalError, IntegerNodesAreNotMeasured) {
  constexpr const char* kShape = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (int64[2] s) {
  s = Shape(x)
}
)";
  ir::Model m = test::parse(kShape);
  auto cal = precision::calibrate(m, {{{"x", test::ramp({2, 3}, 1.0f)}}});
  ASSERT_TRUE(cal.is_ok()) << cal.status().message();
  const precision::LocalError e = precision::local_errors(*m.graph, *cal).at("@s");
  EXPECT_FALSE(e.measured());
  EXPECT_EQ(e.problem, "no fp32 output");
}

}  // namespace
}  // namespace xopt
