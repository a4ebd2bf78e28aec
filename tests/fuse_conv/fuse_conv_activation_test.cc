// fuse-conv-activation: Conv (+ residual Add) + activation -> com.microsoft.FusedConv.
#include "tests/fold/equivalence.h"
#include "tests/fold/golden.h"

namespace xopt {
namespace {

TEST(FuseConvActivation, ConvRelu) {
  EXPECT_REWRITES("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}, float[2] b = {1, 2}> {
      c = Conv <strides = [1, 1]> (x, w, b)
      y = Relu(c)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}, float[2] b = {1, 2}> {
      y = com.microsoft.FusedConv <strides = [1, 1], activation = "Relu"> (x, w, b)
    })");
}

// The residual goes in as Z, the absent bias as "".
TEST(FuseConvActivation, ResidualAddWithoutBias) {
  EXPECT_REWRITES("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      c = Conv(x, w)
      a = Add(r, c)
      y = Relu(a)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      y = com.microsoft.FusedConv <activation = "Relu"> (x, w, , r)
    })");
}

// Clip's constant bounds become activation_params; the Constant nodes go with it.
TEST(FuseConvActivation, ClipWithConstantBounds) {
  EXPECT_REWRITES("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      lo = Constant <value = float {0}> ()
      hi = Constant <value = float {6}> ()
      c = Conv(x, w)
      y = Clip(c, lo, hi)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      y = com.microsoft.FusedConv <activation = "Clip", activation_params = [0.0, 6.0]> (x, w)
    })");
}

TEST(FuseConvActivation, ParametrisedActivations) {
  EXPECT_REWRITES("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y, float[1,2,3,3] z, float[1,2,3,3] u, float[1,2,3,3] v)
      <float[2,2,1,1] w = {1, 2, 3, 4}> {
      c1 = Conv(x, w)
      y = LeakyRelu <alpha = 0.25> (c1)
      c2 = Conv(x, w)
      z = HardSigmoid(c2)
      c3 = Conv(x, w)
      u = Clip(c3)
      c4 = Conv(x, w)
      v = Tanh(c4)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y, float[1,2,3,3] z, float[1,2,3,3] u, float[1,2,3,3] v)
      <float[2,2,1,1] w = {1, 2, 3, 4}> {
      y = com.microsoft.FusedConv <activation = "LeakyRelu", activation_params = [0.25]> (x, w)
      z = com.microsoft.FusedConv <activation = "HardSigmoid", activation_params = [0.2, 0.5]> (x, w)
      u = com.microsoft.FusedConv <activation = "Clip", activation_params = [-3.4028234663852886e+38, 3.4028234663852886e+38]> (x, w)
      v = com.microsoft.FusedConv <activation = "Tanh"> (x, w)
    })");
}

TEST(FuseConvActivation, ImportsTheMicrosoftDomain) {
  auto r = test::run_passes("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      c = Conv(x, w)
      y = Sigmoid(c)
    })");
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  ir::Model m = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      c = Conv(x, w)
      y = Sigmoid(c)
    })");
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fuse-conv-activation").is_ok());
  passes::PassContext ctx;
  ASSERT_TRUE(pm.run(m, ctx).is_ok());
  EXPECT_EQ(m.graph->opset("com.microsoft"), 1);
  EXPECT_EQ((*m.graph->nodes().begin())->domain(), "com.microsoft");
}

TEST(FuseConvActivation, DoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x, float hi, float[1,2,1,1] r, double[1,2,3,3] xd, double[2,2,1,1] wd)
      => (float[1,2,3,3] y, float[1,2,3,3] c, float[1,2,3,3] z, float[1,2,3,3] u, double[1,2,3,3] v,
          float[1,2,3,3] e)
      <float[2,2,1,1] w = {1, 2, 3, 4}> {
      c = Conv(x, w)
      y = Relu(c)
      c2 = Conv(x, w)
      z = Clip(c2, , hi)
      c3 = Conv(x, w)
      a3 = Add(c3, r)
      u = Relu(a3)
      c4 = Conv(xd, wd)
      v = Relu(c4)
      c5 = Conv(x, w)
      e = Elu(c5)
    })");
}

TEST(FuseConvActivation, NumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3,6,6] x) => (float[2,4,6,6] y, float[2,4,3,3] z, float[2,3,6,6] u) <)" +
                     test::random_initializer("w", {4, 3, 3, 3}, 1) + ", " +
                     test::random_initializer("b", {4}, 2) + ", " +
                     test::random_initializer("w2", {4, 4, 3, 3}, 3) + ", " +
                     test::random_initializer("w3", {4, 2, 2, 2}, 4) + ", " +
                     test::random_initializer("w4", {3, 1, 3, 3}, 5) +
                     R"(, float lo = {-0.1}, float hi = {0.3}> {
      a = Conv <pads = [1, 1, 1, 1]> (x, w, b)
      ar = Relu(a)
      c = Conv <pads = [1, 1, 1, 1]> (ar, w2)
      s = Add(c, ar)
      y = LeakyRelu <alpha = 0.1> (s)
      d = Conv <group = 2, strides = [2, 2]> (y, w3)
      z = HardSigmoid <alpha = 0.3, beta = 0.4> (d)
      e = Conv <group = 3, pads = [1, 1, 1, 1]> (x, w4)
      u = Clip(e, lo, hi)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-conv-activation");
  ASSERT_NE(stats.find("fuse-conv-activation"), nullptr);
  EXPECT_EQ(stats.find("fuse-conv-activation")->counters.at("fuse-conv-activation"), 4);
}

}  // namespace
}  // namespace xopt
