// fuse-gelu: erf and tanh GELU formulas in their exporter spellings, and the bias Add before them.
#include "tests/fusion_xfmr/xfmr_test_util.h"

namespace xopt {
namespace {

// torch.nn.functional.gelu as exported (after constant folding): x * (1 + erf(x / sqrt 2)) * 0.5.
constexpr const char* kTorchErf = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4,8] x) => (float[2,4,8] y)
     <float sq2 = {1.4142135381698608}, float one = {1.0}, float half = {0.5}> {
    dv = Div(x, sq2)
    e = Erf(dv)
    a = Add(e, one)
    m = Mul(x, a)
    y = Mul(m, half)
  })";

TEST(FuseGelu, TorchErfForm) {
  EXPECT_FUSES("fuse-gelu", kTorchErf, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,8] x) => (float[2,4,8] y) {
      y = com.microsoft.Gelu (x)
    })");
  EXPECT_EQ(test::ops_after("fuse-gelu", kTorchErf),
            std::vector<std::string>{"com.microsoft.Gelu"});
  test::expect_numerically_equal("fuse-gelu", kTorchErf);
}

// 0.5 * x first, x * (1/sqrt 2) instead of the division, 1 + erf with the constant first.
constexpr const char* kErfVariant = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[3,16] x) => (float[3,16] y)
     <float inv_sq2 = {0.70710678}, float one = {1.0}, float half = {0.5}> {
    h = Mul(x, half)
    k = Mul(inv_sq2, x)
    e = Erf(k)
    a = Add(one, e)
    y = Mul(h, a)
  })";

TEST(FuseGelu, ErfVariantHalfFirst) {
  EXPECT_FUSES("fuse-gelu", kErfVariant, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[3,16] x) => (float[3,16] y) {
      y = com.microsoft.Gelu (x)
    })");
  test::expect_numerically_equal("fuse-gelu", kErfVariant);
}

// x * (0.5 * (1 + erf(.))) with a bias added to x first: BiasGelu.
constexpr const char* kBiasErf = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4,8] x) => (float[2,4,8] y)
     <float[8] b = {0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8},
      float sq2 = {1.4142135381698608}, float one = {1.0}, float half = {0.5}> {
    xb = Add(b, x)
    dv = Div(xb, sq2)
    e = Erf(dv)
    a = Add(e, one)
    h = Mul(half, a)
    y = Mul(xb, h)
  })";

TEST(FuseGelu, BiasAddBecomesBiasGelu) {
  EXPECT_FUSES("fuse-gelu", kBiasErf, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,8] x) => (float[2,4,8] y)
       <float[8] b = {0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8}> {
      y = com.microsoft.BiasGelu (x, b)
    })");
  EXPECT_EQ(test::ops_after("fuse-gelu", kBiasErf),
            std::vector<std::string>{"com.microsoft.BiasGelu"});
  test::expect_numerically_equal("fuse-gelu", kBiasErf);
}

// The bias sum is also read elsewhere: Gelu fuses, the Add stays.
TEST(FuseGelu, BiasSumReadElsewhereKeepsTheAdd) {
  EXPECT_FUSES("fuse-gelu", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y, float[2,8] xb)
       <float[8] b = {1, 2, 3, 4, 5, 6, 7, 8}, float sq2 = {1.4142135381698608}, float one = {1.0},
        float half = {0.5}> {
      xb = Add(x, b)
      dv = Div(xb, sq2)
      e = Erf(dv)
      a = Add(e, one)
      m = Mul(xb, a)
      y = Mul(m, half)
    })",
               R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,8] x) => (float[2,8] y, float[2,8] xb) <float[8] b = {1, 2, 3, 4, 5, 6, 7, 8}> {
      xb = Add(x, b)
      y = com.microsoft.Gelu (xb)
    })");
}

// The tanh approximation, x^3 as Pow: FastGelu.
constexpr const char* kTanh = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,4,8] x) => (float[2,4,8] y)
     <float three = {3.0}, float c = {0.044715}, float k = {0.7978845608}, float one = {1.0},
      float half = {0.5}> {
    p3 = Pow(x, three)
    cp = Mul(p3, c)
    s = Add(x, cp)
    t0 = Mul(s, k)
    t = Tanh(t0)
    a = Add(t, one)
    m = Mul(half, x)
    y = Mul(m, a)
  })";

TEST(FuseGelu, TanhFormBecomesFastGelu) {
  EXPECT_FUSES("fuse-gelu", kTanh, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[2,4,8] x) => (float[2,4,8] y) {
      y = com.microsoft.FastGelu (x)
    })");
  EXPECT_EQ(test::ops_after("fuse-gelu", kTanh),
            std::vector<std::string>{"com.microsoft.FastGelu"});
  test::expect_numerically_equal("fuse-gelu", kTanh);
}

// Megatron's spelling sqrt(2/pi) * x * (1 + 0.044715 * x * x), with a bias: FastGelu(x, bias).
constexpr const char* kMegatron = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[4,8] x) => (float[4,8] y)
     <float[8] b = {1, -1, 2, -2, 0.5, -0.5, 0.25, 0}, float c = {0.044715},
      float k = {0.79788456}, float one = {1.0}, float half = {0.5}> {
    xb = Add(x, b)
    x2 = Mul(xb, xb)
    cx2 = Mul(c, x2)
    a1 = Add(one, cx2)
    kx = Mul(k, xb)
    t0 = Mul(kx, a1)
    t = Tanh(t0)
    a = Add(one, t)
    hx = Mul(xb, half)
    y = Mul(hx, a)
  })";

TEST(FuseGelu, MegatronTanhWithBias) {
  EXPECT_FUSES("fuse-gelu", kMegatron, R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[4,8] x) => (float[4,8] y) <float[8] b = {1, -1, 2, -2, 0.5, -0.5, 0.25, 0}> {
      y = com.microsoft.FastGelu (x, b)
    })");
  test::expect_numerically_equal("fuse-gelu", kMegatron);
}

// From opset 20 the standard Gelu is used.
TEST(FuseGelu, Opset20UsesOnnxGelu) {
  constexpr const char* kOpset20 = R"(
    <ir_version: 9, opset_import: ["" : 20]>
    g (float[2,8] x, float[2,8] z) => (float[2,8] y, float[2,8] w)
       <float sq2 = {1.4142135381698608}, float one = {1.0}, float half = {0.5}, float three = {3.0},
        float c = {0.044715}, float k = {0.7978845608}> {
      dv = Div(x, sq2)
      e = Erf(dv)
      a = Add(e, one)
      m = Mul(x, a)
      y = Mul(m, half)
      p3 = Pow(z, three)
      cp = Mul(p3, c)
      s = Add(z, cp)
      t0 = Mul(s, k)
      t = Tanh(t0)
      ta = Add(t, one)
      tm = Mul(half, z)
      w = Mul(tm, ta)
    })";
  EXPECT_FUSES("fuse-gelu", kOpset20,
               R"(
    <ir_version: 9, opset_import: ["" : 20]>
    g (float[2,8] x, float[2,8] z) => (float[2,8] y, float[2,8] w) {
      y = Gelu (x)
      w = Gelu <approximate = "tanh"> (z)
    })");
  EXPECT_EQ(test::ops_after("fuse-gelu", kOpset20), (std::vector<std::string>{"Gelu", "Gelu"}));
}

// erf(x / 1.5) is no GELU.
TEST(FuseGelu, WrongConstantDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-gelu", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y) <float d = {1.5}, float one = {1.0}, float half = {0.5}> {
      dv = Div(x, d)
      e = Erf(dv)
      a = Add(e, one)
      m = Mul(x, a)
      y = Mul(m, half)
    })");
}

// 0.5 * (1 + erf) * z with z != x: not a GELU of anything.
TEST(FuseGelu, OtherFactorDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-gelu", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x, float[2,8] z) => (float[2,8] y)
       <float sq2 = {1.4142135381698608}, float one = {1.0}, float half = {0.5}> {
      dv = Div(x, sq2)
      e = Erf(dv)
      a = Add(e, one)
      m = Mul(z, a)
      y = Mul(m, half)
    })");
}

// 1 + erf(...) is also a graph output: the pattern's inside is read elsewhere.
TEST(FuseGelu, IntermediateReadElsewhereDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-gelu", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y, float[2,8] a)
       <float sq2 = {1.4142135381698608}, float one = {1.0}, float half = {0.5}> {
      dv = Div(x, sq2)
      e = Erf(dv)
      a = Add(e, one)
      m = Mul(x, a)
      y = Mul(m, half)
    })");
}

// A bias that broadcasts along another axis ([4,1]) is no BiasGelu bias.
TEST(FuseGelu, BiasOnOtherAxisStaysAdd) {
  EXPECT_NOT_APPLIED("fuse-gelu", R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[4,8] x) => (float[4,8] y) <float[4,1] b = {1, 2, 3, 4}> {
      xb = Add(x, b)
      y = com.microsoft.Gelu (xb)
    })");
}

}  // namespace
}  // namespace xopt
