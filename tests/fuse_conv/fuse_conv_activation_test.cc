// fuse-conv-activation: Conv (+ residual Add) + activation -> com.microsoft.FusedConv.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

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

// A residual Add with no activation after it (mobilenet_v2's linear bottlenecks) becomes a
// FusedConv with Z and no activation attribute, which onnxruntime reads as identity. The Add's
// result is a graph output and keeps its name.
TEST(FuseConvActivation, ResidualAddWithoutActivation) {
  EXPECT_REWRITES("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y)
      <float[2,2,1,1] w = {1, 2, 3, 4}, float[2] b = {1, 2}> {
      c = Conv <strides = [1, 1]> (x, w, b)
      y = Add(c, r)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y)
      <float[2,2,1,1] w = {1, 2, 3, 4}, float[2] b = {1, 2}> {
      y = com.microsoft.FusedConv <strides = [1, 1]> (x, w, b, r)
    })");
}

// Counted as "residual", named after the Conv, with the Conv and the Add as provenance. An Elu
// after it (FusedGemm only) stays.
TEST(FuseConvActivation, ResidualCountsAndProvenance) {
  ir::Model m = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      c = Conv(x, w)
      a = Add(r, c)
      y = Elu(a)
    })");
  m.graph->find_node_output("c")->producer()->set_name("conv1");
  m.graph->find_node_output("a")->producer()->set_name("add1");
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fuse-conv-activation").is_ok());
  passes::PassContext ctx;
  passes::PipelineStats stats;
  ASSERT_TRUE(pm.run(m, ctx, &stats).is_ok());
  EXPECT_EQ(test::counter(stats, "fuse-conv-activation", "fuse-conv-activation"), 1);
  EXPECT_EQ(test::counter(stats, "fuse-conv-activation", "residual"), 1);
  ASSERT_EQ(m.graph->num_nodes(), 2u);
  const ir::Node* fused = m.graph->find_node_output("a")->producer();
  EXPECT_EQ(fused->op_type(), "FusedConv");
  EXPECT_FALSE(fused->has_attr("activation"));
  EXPECT_EQ(fused->name(), "conv1");
  EXPECT_EQ(fused->provenance(), (std::vector<std::string>{"conv1", "add1"}));
}

// Conv + Add + Relu stays one fusion counted as Relu+residual, not residual and then Relu.
TEST(FuseConvActivation, ResidualWithReluIsOneFusion) {
  auto r = test::run_passes("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      c = Conv(x, w)
      a = Add(c, r)
      y = Relu(a)
    })");
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_EQ(r.text, test::canonical(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      y = com.microsoft.FusedConv <activation = "Relu"> (x, w, , r)
    })"));
  EXPECT_EQ(test::counter(r.stats, "fuse-conv-activation", "fuse-conv-activation"), 1);
  EXPECT_EQ(test::counter(r.stats, "fuse-conv-activation", "Relu+residual"), 1);
  EXPECT_EQ(test::counter(r.stats, "fuse-conv-activation", "residual"), 0);
}

// A FusedConv without an activation (a residual fused in an earlier round, before a pass put the
// activation there) takes in an activation that is its only reader; Z and attributes stay.
TEST(FuseConvActivation, IdentityFusedConvAbsorbsActivation) {
  EXPECT_REWRITES("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      a = com.microsoft.FusedConv <pads = [0, 0, 0, 0]> (x, w, , r)
      y = LeakyRelu <alpha = 0.5> (a)
    })",
                  R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      y = com.microsoft.FusedConv <pads = [0, 0, 0, 0], activation = "LeakyRelu", activation_params = [0.5]> (x, w, , r)
    })");
  auto r = test::run_passes("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, 2, 3, 4}> {
      a = com.microsoft.FusedConv (x, w, , r)
      y = Relu(a)
    })");
  EXPECT_EQ(test::counter(r.stats, "fuse-conv-activation", "Relu+residual"), 1);
}

// Not taken in: a FusedConv that already has an activation, or whose result is read twice.
TEST(FuseConvActivation, FusedConvDoesNotAbsorb) {
  EXPECT_NOT_APPLIED("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] r) => (float[1,2,3,3] y, float[1,2,3,3] a2, float[1,2,3,3] z)
      <float[2,2,1,1] w = {1, 2, 3, 4}> {
      a = com.microsoft.FusedConv <activation = "Sigmoid"> (x, w, , r)
      y = Relu(a)
      a2 = com.microsoft.FusedConv (x, w, , r)
      z = Relu(a2)
    })");
}

// The residual is not fused when the Add broadcasts (either side), when the Conv result has a
// second reader or is a graph output, or when both Add inputs are the same Conv result.
TEST(FuseConvActivation, ResidualDoesNotApply) {
  EXPECT_NOT_APPLIED("fuse-conv-activation", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x, float[1,2,1,1] r, float[2,3,3] rr, float[2,2,3,3] big)
      => (float[1,2,3,3] y1, float[1,2,3,3] y2, float[2,2,3,3] y3, float[1,2,3,3] y4,
          float[1,2,3,3] c5, float[1,2,3,3] y5, float[1,2,3,3] y6, float[1,2,3,3] t4)
      <float[2,2,1,1] w = {1, 2, 3, 4}> {
      c1 = Conv(x, w)
      y1 = Add(c1, r)
      c2 = Conv(x, w)
      y2 = Add(rr, c2)
      c3 = Conv(x, w)
      y3 = Add(c3, big)
      c4 = Conv(x, w)
      y4 = Add(c4, x)
      t4 = Neg(c4)
      c5 = Conv(x, w)
      y5 = Add(c5, x)
      c6 = Conv(x, w)
      y6 = Add(c6, c6)
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

// Residuals without an activation, with and without bias, grouped and strided, one Add of two
// Conv results, and one before an Elu, computed by the CPU executor's FusedConv with Z and no
// activation.
TEST(FuseConvActivation, ResidualNumericallyEquivalent) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,6,6] x, float[2,4,3,3] r) => (float[2,4,6,6] y, float[2,4,3,3] z, float[2,4,6,6] u,
                                              float[2,4,6,6] v) <)" +
                     test::random_initializer("w", {4, 4, 3, 3}, 1) + ", " +
                     test::random_initializer("b", {4}, 2) + ", " +
                     test::random_initializer("w2", {4, 2, 3, 3}, 3) + ", " +
                     test::random_initializer("b2", {4}, 4) + ", " +
                     test::random_initializer("w3", {4, 4, 1, 1}, 5) + R"(> {
      a = Conv <pads = [1, 1, 1, 1]> (x, w, b)
      y = Add(x, a)
      d = Conv <group = 2, strides = [2, 2], pads = [1, 1, 1, 1]> (y, w2, b2)
      z = Add(d, r)
      e = Conv(x, w3)
      f = Conv <pads = [1, 1, 1, 1]> (x, w)
      u = Add(e, f)
      k = Conv(u, w3)
      h = Add(k, y)
      v = Elu(h)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-conv-activation");
  EXPECT_EQ(test::counter(stats, "fuse-conv-activation", "fuse-conv-activation"), 4);
  EXPECT_EQ(test::counter(stats, "fuse-conv-activation", "residual"), 4);
}

}  // namespace
}  // namespace xopt
