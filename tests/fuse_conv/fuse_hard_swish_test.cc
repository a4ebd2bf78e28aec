// fuse-hard-swish: x * Clip(x + 3, 0, 6) / 6 -> HardSwish, Clip(x + 3, 0, 6) / 6 -> HardSigmoid,
// x * HardSigmoid(x) -> HardSwish.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// Paddle2ONNX's hard_swish: x * Clip(x + 3, 0, 6) / 6; MobileNetV3's hard-sigmoid gate written as
// Clip(x + 3, 0, 6) * (1/6); x * (Clip(.) / 6).
constexpr const char* kWrittenOut = R"(
  <ir_version: 8, opset_import: ["" : 14]>
  g (float[2,3,4] x) => (float[2,3,4] y, float[2,3,4] z, float[2,3,4] u)
    <float three = {3}, float zero = {0}, float six = {6}, float sixth = {0.16666667}> {
    a = Add(x, three)
    c = Clip(a, zero, six)
    m = Mul(x, c)
    y = Div(m, six)
    a2 = Add(three, y)
    c2 = Clip(a2, zero, six)
    z = Mul(c2, sixth)
    a3 = Add(z, three)
    c3 = Clip(a3, zero, six)
    d3 = Div(c3, six)
    u = Mul(d3, z)
  })";

TEST(FuseHardSwish, WrittenOutFormsBecomeOneNode) {
  EXPECT_REWRITES("fuse-hard-swish", kWrittenOut, R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3,4] x) => (float[2,3,4] y, float[2,3,4] z, float[2,3,4] u) {
      y = HardSwish(x)
      z = HardSigmoid <alpha: float = 0.16666667, beta: float = 0.5> (y)
      u = HardSwish(z)
    })");
}

// Below opset 11 the model is not raised to 14 (fuse/opset_upgrade.h): x * HardSigmoid(x), two
// nodes for four; Clip's bounds are attributes before opset 11.
TEST(FuseHardSwish, BeforeOpset14KeepsTheMul) {
  EXPECT_REWRITES("fuse-hard-swish", R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[2,3,4] x) => (float[2,3,4] y) <float three = {3}, float six = {6}> {
      a = Add(x, three)
      c = Clip <min: float = 0.0, max: float = 6.0> (a)
      m = Mul(c, x)
      y = Div(m, six)
    })",
                  R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[2,3,4] x) => (float[2,3,4] y) {
      c_hsig = HardSigmoid <alpha: float = 0.16666667, beta: float = 0.5> (x)
      y = Mul(x, c_hsig)
    })");
}

// At opset 12 the model is raised to 14 (every node keeps its meaning) for HardSwish; the
// Squeeze's axes attribute becomes an input on the way (opset 13).
TEST(FuseHardSwish, Opset12IsRaisedTo14) {
  const char* text = R"(
    <ir_version: 7, opset_import: ["" : 12]>
    g (float[2,1,4] x) => (float[2,4] y) <float three = {3}, float zero = {0}, float six = {6}> {
      a = Add(x, three)
      c = Clip(a, zero, six)
      m = Mul(c, x)
      h = Div(m, six)
      y = Squeeze <axes = [1]> (h)
    })";
  EXPECT_REWRITES("fuse-hard-swish", text, R"(
    <ir_version: 7, opset_import: ["" : 14]>
    g (float[2,1,4] x) => (float[2,4] y) <int64[1] y_axes = {1}> {
      h = HardSwish(x)
      y = Squeeze(h, y_axes)
    })");
  ir::Model m = test::parse_text(text);
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fuse-hard-swish").is_ok());
  passes::PassContext ctx;
  ASSERT_TRUE(pm.run(m, ctx).is_ok());
  EXPECT_EQ(m.graph->opset(""), 14);
}

// PyTorch's hardswish exported below opset 14 and upgraded: x * HardSigmoid(x) <1/6, 0.5>.
TEST(FuseHardSwish, MulByHardSigmoid) {
  EXPECT_REWRITES("fuse-hard-swish", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,5] x) => (float[2,5] y) {
      h = HardSigmoid <alpha: float = 0.16666667> (x)
      y = Mul(h, x)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,5] x) => (float[2,5] y) {
      y = HardSwish(x)
    })");
}

// Left alone: another offset, another upper bound, the Clip result read twice, a Mul by another
// value, HardSigmoid with other parameters, the product read before the division, double.
TEST(FuseHardSwish, DoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-hard-swish", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x, float[4] v, double[4] d)
      => (float[4] y1, float[4] y2, float[4] y3, float[4] c3, float[4] y4, float[4] y5,
          float[4] m6, float[4] y6, double[4] y7)
      <float two = {2}, float three = {3}, float zero = {0}, float six = {6}, float one = {1},
       double d3 = {3}, double d0 = {0}, double d6 = {6}> {
      a1 = Add(x, two)
      c1 = Clip(a1, zero, six)
      y1 = Div(c1, six)
      a2 = Add(x, three)
      c2 = Clip(a2, zero, one)
      y2 = Div(c2, six)
      a3 = Add(x, three)
      c3 = Clip(a3, zero, six)
      y3 = Div(c3, six)
      a4 = Add(x, three)
      c4 = Clip(a4, zero, six)
      m4 = Mul(v, c4)
      y4 = Div(m4, three)
      h5 = HardSigmoid(x)
      y5 = Mul(x, h5)
      a6 = Add(x, three)
      c6 = Clip(a6, zero, six)
      m6 = Mul(x, c6)
      y6 = Div(m6, six)
      a7 = Add(d, d3)
      c7 = Clip(a7, d0, d6)
      y7 = Div(c7, d6)
    })");
}

// x * HardSigmoid(x) stays where HardSwish is missing and the opset cannot be raised (below 11).
TEST(FuseHardSwish, NoHardSwishBelowOpset11) {
  EXPECT_NOT_APPLIED("fuse-hard-swish", R"(
    <ir_version: 5, opset_import: ["" : 10]>
    g (float[2,5] x) => (float[2,5] y) {
      h = HardSigmoid <alpha: float = 0.16666667> (x)
      y = Mul(h, x)
    })");
}

TEST(FuseHardSwish, NumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 14]>
    g (float[2,3,5,5] x) => (float[2,4,5,5] y, float[2,4,1,1] z) <)" +
                     test::random_initializer("w", {4, 3, 3, 3}, 5, -2.0f, 2.0f) + R"(,
      float three = {3}, float zero = {0}, float six = {6}, float sixth = {0.16666667}> {
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      a = Add(c, three)
      r = Clip(a, zero, six)
      m = Mul(c, r)
      y = Mul(m, sixth)
      p = GlobalAveragePool(y)
      a2 = Add(p, three)
      r2 = Clip(a2, zero, six)
      z = Div(r2, six)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-hard-swish");
  EXPECT_EQ(test::counter(stats, "fuse-hard-swish", "HardSwish"), 1);
  EXPECT_EQ(test::counter(stats, "fuse-hard-swish", "HardSigmoid"), 1);
}

}  // namespace
}  // namespace xopt
