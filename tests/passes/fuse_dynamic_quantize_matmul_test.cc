// fuse-dynamic-quantize-matmul: onnxruntime quantize_dynamic's MatMul chain
// (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by the scales [-> Add bias]) becomes
// com.microsoft.DynamicQuantizeMatMul, computing the same values bit for bit.
#include <gtest/gtest.h>

#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

constexpr const char* kPass = "fuse-dynamic-quantize-matmul";

// As quantize_dynamic writes it: per-tensor int8 weights with a zero point, then the bias.
TEST(FuseDynamicQuantizeMatMul, ChainWithBiasBecomesOneNode) {
  EXPECT_REWRITES_EXACTLY(kPass, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x) => (float[2,3] y)
      <int8[4,3] w = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12}, float ws = {0.05},
       int8 wz = {2}, float[3] b = {0.5, -1, 2}> {
      q, s, z = DynamicQuantizeLinear(x)
      acc = MatMulInteger(q, w, z, wz)
      f = Cast <to = 1> (acc)
      sc = Mul(s, ws)
      m = Mul(f, sc)
      y = Add(m, b)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4] x) => (float[2,3] y)
      <int8[4,3] w = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12}, float ws = {0.05},
       int8 wz = {2}, float[3] b = {0.5, -1, 2}> {
      y = com.microsoft.DynamicQuantizeMatMul (x, w, ws, wz, b)
    })");
}

// uint8 weights, a scale per column, operands in the other order, no zero point and no bias;
// an Add of a [2,3] tensor is not a bias and stays.
TEST(FuseDynamicQuantizeMatMul, PerColumnScalesEitherOperandOrder) {
  EXPECT_REWRITES_EXACTLY(kPass, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x, float[2,3] r) => (float[2,3] y)
      <uint8[4,3] w = {1, 200, 3, 40, 5, 60, 7, 80, 9, 100, 11, 120}, float[3] ws = {0.01, 0.02, 0.03}> {
      q, s, z = DynamicQuantizeLinear(x)
      acc = MatMulInteger(q, w, z)
      f = Cast <to = 1> (acc)
      sc = Mul(ws, s)
      m = Mul(sc, f)
      y = Add(m, r)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4] x, float[2,3] r) => (float[2,3] y)
      <uint8[4,3] w = {1, 200, 3, 40, 5, 60, 7, 80, 9, 100, 11, 120}, float[3] ws = {0.01, 0.02, 0.03}> {
      m = com.microsoft.DynamicQuantizeMatMul (x, w, ws)
      y = Add(m, r)
    })");
}

// Left alone: one quantized x read by two products (each fused one would quantize it again), a
// Cast to double, weights that are not constant, the scale read elsewhere.
TEST(FuseDynamicQuantizeMatMul, DoesNotApply) {
  EXPECT_NOT_APPLIED(kPass, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4] x, int8[4,3] wv) => (float[2,3] y1, float[2,3] y2, double[2,3] d, float[2,3] e, float s4)
      <int8[4,3] w = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12}, float ws = {0.05}> {
      q, s, z = DynamicQuantizeLinear(x)
      a1 = MatMulInteger(q, w, z)
      a2 = MatMulInteger(q, w, z)
      f1 = Cast <to = 1> (a1)
      f2 = Cast <to = 1> (a2)
      sc = Mul(s, ws)
      y1 = Mul(f1, sc)
      y2 = Mul(f2, s)
      q3, s3, z3 = DynamicQuantizeLinear(x)
      a3 = MatMulInteger(q3, w, z3)
      d = Cast <to = 11> (a3)
      q4, s4, z4 = DynamicQuantizeLinear(x)
      a4 = MatMulInteger(q4, wv, z4)
      f4 = Cast <to = 1> (a4)
      sc4 = Mul(s4, ws)
      e = Mul(f4, sc4)
    })");
}

}  // namespace
}  // namespace xopt
