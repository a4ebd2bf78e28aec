// fuse-matmul-scale: MatMul with constant scalar scales and last-two-dims Transposes of its inputs
// -> com.microsoft.FusedMatMul <alpha, transA, transB>.
#include "tests/fusion_xfmr/xfmr_test_util.h"
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// Attention scores written out without the Softmax (so fuse-attention leaves them): Q . K^T / 8,
// and the scale on the query instead.
constexpr const char* kScores = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4,3,8] q, float[2,4,5,8] k, float[2,4,3,8] q2, float[2,4,8,5] k2)
    => (float[2,4,3,5] y, float[2,4,3,5] z) <float eight = {8}, float s = {0.125}> {
    kt = Transpose <perm = [0, 1, 3, 2]> (k)
    m = MatMul(q, kt)
    y = Div(m, eight)
    qs = Mul(s, q2)
    z = MatMul(qs, k2)
  })";

TEST(FuseMatMulScale, ScaledAndTransposed) {
  EXPECT_REWRITES("fuse-matmul-scale", kScores, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,3,8] q, float[2,4,5,8] k, float[2,4,3,8] q2, float[2,4,8,5] k2)
      => (float[2,4,3,5] y, float[2,4,3,5] z) {
      y = com.microsoft.FusedMatMul <alpha: float = 0.125, transA: int = 0, transB: int = 1> (q, k)
      z = com.microsoft.FusedMatMul <alpha: float = 0.125, transA: int = 0, transB: int = 0> (q2, k2)
    })");
  EXPECT_EQ(test::ops_after("fuse-matmul-scale", kScores),
            (std::vector<std::string>{"com.microsoft.FusedMatMul", "com.microsoft.FusedMatMul"}));
}

// A transposed A (2-D rank needs no perm: the default reverses), scales on both inputs and two on
// the result, all multiplied into alpha.
TEST(FuseMatMulScale, EveryScaleMultiplies) {
  EXPECT_REWRITES("fuse-matmul-scale", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[3,2,4] a, float[3,2,5] b) => (float[3,4,5] y)
      <float two = {2}, float quarter = {0.25}, float three = {3}> {
      at = Transpose <perm = [0, 2, 1]> (a)
      as = Mul(at, two)
      bs = Div(b, quarter)
      m = MatMul(as, bs)
      m3 = Mul(three, m)
      y = Div(m3, two)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[3,2,4] a, float[3,2,5] b) => (float[3,4,5] y) {
      y = com.microsoft.FusedMatMul <alpha: float = 12, transA: int = 1, transB: int = 0> (a, b)
    })");
}

// Left alone: a scale that is not a scalar, a Transpose that moves other dims, a scaled value read
// elsewhere, a non-constant scale, a divisor on the left (s / m), a broadcasting scale, double.
TEST(FuseMatMulScale, DoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-matmul-scale", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,4] a, float[2,4,5] b, float k, double[3,4] da, double[4,5] db, float[3,4,5] b3)
      => (float[2,3,5] y1, float[3,2,5] y2, float[2,3,5] m3, float[2,3,5] y3, float[2,3,5] y4,
          float[2,3,5] y5, float[2,2,3,5] y6, double[3,5] y7)
      <float[5] v = {1, 2, 3, 4, 5}, float two = {2}, float[2,1,1,1] w = {2, 3}, double dtwo = {2}> {
      m1 = MatMul(a, b)
      y1 = Mul(m1, v)
      at = Transpose <perm = [1, 0, 2]> (a)
      y2 = MatMul(at, b3)
      m3 = MatMul(a, b)
      y3 = Mul(m3, two)
      m4 = MatMul(a, b)
      y4 = Mul(m4, k)
      m5 = MatMul(a, b)
      y5 = Div(two, m5)
      m6 = MatMul(a, b)
      y6 = Mul(m6, w)
      m7 = MatMul(da, db)
      y7 = Mul(m7, dtwo)
    })");
}

TEST(FuseMatMulScale, NumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,6,8] q, float[2,3,7,8] k, float[2,3,7,6] v, float[2,3,7,4] u)
      => (float[2,3,6,7] y, float[2,3,6,4] z) <float sq = {2.8284271}, float s = {0.7}> {
      kt = Transpose <perm = [0, 1, 3, 2]> (k)
      qs = Mul(q, s)
      a = MatMul(qs, kt)
      y = Div(a, sq)
      vt = Transpose <perm = [0, 1, 3, 2]> (v)
      z = MatMul(vt, u)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-matmul-scale");
  EXPECT_EQ(test::counter(stats, "fuse-matmul-scale", "fuse-matmul-scale"), 2);
  test::expect_numerically_equal("fuse-matmul-scale", text);
}

}  // namespace
}  // namespace xopt
