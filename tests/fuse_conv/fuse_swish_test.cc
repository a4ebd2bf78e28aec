// fuse-swish: x * Sigmoid(x) (Swish / SiLU) and x * Sigmoid(a * x) -> com.microsoft.QuickGelu.
#include "tests/fusion_xfmr/xfmr_test_util.h"
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// EfficientNet's activation after a Conv, both operand orders.
constexpr const char* kSwish = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[1,2,4,4] x) => (float[1,3,4,4] y, float[1,3,4,4] z) <float[3,2,1,1] w = {1, -2, 3, -4, 5, -6}> {
    c = Conv(x, w)
    s = Sigmoid(c)
    y = Mul(c, s)
    s2 = Sigmoid(y)
    z = Mul(s2, y)
  })";

TEST(FuseSwish, SwishBecomesQuickGeluWithAlphaOne) {
  EXPECT_REWRITES("fuse-swish", kSwish, R"(
    <ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
    g (float[1,2,4,4] x) => (float[1,3,4,4] y, float[1,3,4,4] z) <float[3,2,1,1] w = {1, -2, 3, -4, 5, -6}> {
      c = Conv(x, w)
      y = com.microsoft.QuickGelu <alpha: float = 1> (c)
      z = com.microsoft.QuickGelu <alpha: float = 1> (y)
    })");
  EXPECT_EQ(
      test::ops_after("fuse-swish", kSwish),
      (std::vector<std::string>{"Conv", "com.microsoft.QuickGelu", "com.microsoft.QuickGelu"}));
}

// CLIP's x * sigmoid(1.702 x): the scale becomes alpha.
TEST(FuseSwish, ScaledSigmoidKeepsItsAlpha) {
  EXPECT_REWRITES("fuse-swish", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y) <float a = {1.702}> {
      t = Mul(a, x)
      s = Sigmoid(t)
      y = Mul(x, s)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,8] x) => (float[2,8] y) {
      y = com.microsoft.QuickGelu <alpha: float = 1.702> (x)
    })");
}

// Left alone: the Sigmoid also read elsewhere, a sigmoid of another value (a squeeze-excitation
// gate), a non-constant scale, a scale read elsewhere, double (onnxruntime's kernel is float only).
TEST(FuseSwish, DoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-swish", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x, float[2,8] v, float k, double[4] d)
      => (float[2,8] y, float[2,8] s, float[2,8] e, float[2,8] f, float[2,8] h, double[4] dd)
      <float a = {1.702}> {
      s = Sigmoid(x)
      y = Mul(x, s)
      sv = Sigmoid(v)
      e = Mul(x, sv)
      ta = Mul(x, a)
      sa = Sigmoid(ta)
      ma = Mul(x, sa)
      f = Add(ma, ta)
      t = Mul(x, k)
      st = Sigmoid(t)
      h = Mul(x, st)
      ds = Sigmoid(d)
      dd = Mul(d, ds)
    })");
}

TEST(FuseSwish, NumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,5,5] x) => (float[2,4,5,5] y, float[2,4,5,5] z) <)" +
                     test::random_initializer("w", {4, 3, 3, 3}, 3) + R"(, float a = {1.702}> {
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      s = Sigmoid(c)
      y = Mul(s, c)
      t = Mul(c, a)
      st = Sigmoid(t)
      z = Mul(c, st)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-swish");
  EXPECT_EQ(test::counter(stats, "fuse-swish", "Swish"), 1);
  EXPECT_EQ(test::counter(stats, "fuse-swish", "QuickGelu"), 1);
  test::expect_numerically_equal("fuse-swish", text);
}

}  // namespace
}  // namespace xopt
