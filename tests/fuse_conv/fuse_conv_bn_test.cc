// fuse-conv-bn: inference BatchNormalization folded into the weights beside it.
#include "tests/util/equivalence.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

// With epsilon 0 and var 4 / 0.25 the BN is y = x * [1, 2] + [-0.5, -4] exactly.
constexpr const char* kBnParams =
    R"(float[2] s = {2, 1}, float[2] t = {0.5, 0}, float[2] m = {1, 2}, float[2] v = {4, 0.25})";

std::string model(const std::string& sig, const std::string& inits, const std::string& body) {
  return R"(<ir_version: 8, opset_import: ["" : 17]>
    g )" +
         sig + " <" + inits + "> {\n" + body + "\n}";
}

TEST(FuseConvBn, IntoPrecedingConv) {
  EXPECT_REWRITES(
      "fuse-conv-bn",
      model("(float[1,2,3,3] x) => (float[1,2,3,3] y)",
            std::string("float[2,2,1,1] w = {1, 2, 3, 4}, float[2] b = {1, -1}, ") + kBnParams,
            R"(c = Conv(x, w, b)
               y = BatchNormalization <epsilon = 0.0> (c, s, t, m, v))"),
      model("(float[1,2,3,3] x) => (float[1,2,3,3] y)",
            "float[2,2,1,1] w_fused = {1, 2, 6, 8}, float[2] b_fused = {0.5, -6}",
            "y = Conv(x, w_fused, b_fused)"));
}

// Without a bias the conv gets one: the BN's shift.
TEST(FuseConvBn, IntoConvWithoutBias) {
  EXPECT_REWRITES(
      "fuse-conv-bn",
      model("(float[1,2,3,3] x) => (float[1,2,2,2] y)",
            std::string("float[2,2,2,2] w = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}, ") +
                kBnParams,
            R"(c = Conv <kernel_shape = [2, 2]> (x, w)
               y = BatchNormalization <epsilon = 0.0> (c, s, t, m, v))"),
      model("(float[1,2,3,3] x) => (float[1,2,2,2] y)",
            "float[2,2,2,2] w_fused = {1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4, 4}, "
            "float[2] c_bias_fused = {-0.5, -4}",
            "y = Conv <kernel_shape = [2, 2]> (x, w_fused, c_bias_fused)"));
}

TEST(FuseConvBn, IntoFollowingConvWithoutPadding) {
  EXPECT_REWRITES("fuse-conv-bn",
                  model("(float[1,2,3,3] x) => (float[1,1,3,3] y)",
                        std::string(kBnParams) + ", float[1,2,1,1] w = {1, 2}",
                        R"(n = BatchNormalization <epsilon = 0.0> (x, s, t, m, v)
               y = Conv(n, w))"),
                  model("(float[1,2,3,3] x) => (float[1,1,3,3] y)",
                        "float[1,2,1,1] w_fused = {1, 4}, float[1] y_bias_fused = {-8.5}",
                        "y = Conv(x, w_fused, y_bias_fused)"));
}

TEST(FuseConvBn, IntoGemm) {
  EXPECT_REWRITES(
      "fuse-conv-bn",
      model("(float[3,4] a) => (float[3,2] y)",
            std::string("float[2,4] w = {1, 1, 1, 1, 2, 2, 2, 2}, float c = {1}, ") + kBnParams,
            R"(g1 = Gemm <transB = 1, beta = 2.0> (a, w, c)
               y = BatchNormalization <epsilon = 0.0> (g1, s, t, m, v))"),
      model("(float[3,4] a) => (float[3,2] y)",
            "float[2,4] w_fused = {1, 1, 1, 1, 4, 4, 4, 4}, float[2] c_fused = {1.5, 0}",
            "y = Gemm <transB = 1> (a, w_fused, c_fused)"));
}

TEST(FuseConvBn, IntoMatMulWithConstantWeights) {
  EXPECT_REWRITES("fuse-conv-bn",
                  model("(float[3,2] a) => (float[3,2] y)",
                        std::string("float[2,2] w = {1, 2, 3, 4}, ") + kBnParams,
                        R"(p = MatMul(a, w)
               y = BatchNormalization <epsilon = 0.0> (p, s, t, m, v))"),
                  model("(float[3,2] a) => (float[3,2] y)",
                        "float[2,2] w_fused = {1, 4, 3, 8}, float[2] p_bias_fused = {-0.5, -4}",
                        "y = Gemm(a, w_fused, p_bias_fused)"));
}

TEST(FuseConvBn, CountsAndProvenance) {
  auto m = test::parse_text(model("(float[1,2,3,3] x) => (float[1,2,3,3] y)",
                                  std::string("float[2,2,1,1] w = {1, 2, 3, 4}, ") + kBnParams,
                                  R"(c = Conv(x, w)
               y = BatchNormalization <epsilon = 0.0> (c, s, t, m, v))"));
  m.graph->find_node_output("c")->producer()->set_name("conv1");
  m.graph->find_node_output("y")->producer()->set_name("bn1");
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fuse-conv-bn").is_ok());
  passes::PassContext ctx;
  passes::PipelineStats stats;
  ASSERT_TRUE(pm.run(m, ctx, &stats).is_ok());
  EXPECT_EQ(stats.find("fuse-conv-bn")->counters.at("fuse-conv-bn"), 1);
  ASSERT_EQ(m.graph->num_nodes(), 1u);
  const ir::Node* conv = *m.graph->nodes().begin();
  EXPECT_EQ(conv->name(), "conv1");
  EXPECT_EQ(conv->provenance(), (std::vector<std::string>{"conv1", "bn1"}));
}

TEST(FuseConvBn, DoesNotApply) {
  const std::string params = std::string("float[2,2,1,1] w = {1, 2, 3, 4}, ") + kBnParams;
  // The conv result is read elsewhere too.
  EXPECT_NOT_APPLIED(
      "fuse-conv-bn",
      model("(float[1,2,3,3] x) => (float[1,2,3,3] y, float[1,2,3,3] c)", params, R"(c = Conv(x, w)
               y = BatchNormalization (c, s, t, m, v))"));
  // The BN's scale is a graph input, not a constant.
  EXPECT_NOT_APPLIED(
      "fuse-conv-bn",
      model("(float[1,2,3,3] x, float[2] s) => (float[1,2,3,3] y)",
            "float[2,2,1,1] w = {1, 2, 3, 4}, float[2] t = {0.5, 0}, float[2] m = {1, 2}, "
            "float[2] v = {4, 0.25}",
            R"(c = Conv(x, w)
               y = BatchNormalization (c, s, t, m, v))"));
  // Non-constant conv weights.
  EXPECT_NOT_APPLIED("fuse-conv-bn",
                     model("(float[1,2,3,3] x, float[2,2,1,1] w) => (float[1,2,3,3] y)", kBnParams,
                           R"(c = Conv(x, w)
               y = BatchNormalization (c, s, t, m, v))"));
  // Training mode.
  EXPECT_NOT_APPLIED("fuse-conv-bn", model("(float[1,2,3,3] x) => (float[1,2,3,3] y)", params,
                                           R"(c = Conv(x, w)
               y = BatchNormalization <training_mode = 1> (c, s, t, m, v))"));
  // The following conv pads: zeros in the padding would not see the BN's shift.
  EXPECT_NOT_APPLIED("fuse-conv-bn", model("(float[1,2,3,3] x) => (float[1,2,5,5] y)", params,
                                           R"(n = BatchNormalization (x, s, t, m, v)
               y = Conv <pads = [1, 1, 1, 1], kernel_shape = [1, 1]> (n, w))"));
  // The BN result has two readers; with nothing to fold into, the BN stays one node.
  EXPECT_NOT_APPLIED("fuse-conv-bn",
                     model("(float[1,2,3,3] x) => (float[1,2,3,3] y, float[1,2,3,3] z)", params,
                           R"(n = BatchNormalization (x, s, t, m, v)
               y = Conv(n, w)
               z = Conv(n, w))"));
}

// Random weights and statistics; ConvTranspose with groups, strides and padding, Conv with groups.
TEST(FuseConvBn, NumericallyEquivalent) {
  auto bn = [](const std::string& p, int64_t c, uint32_t seed) {
    return test::random_initializer(p + "s", {c}, seed, 0.5f, 2.0f) + ", " +
           test::random_initializer(p + "t", {c}, seed + 1) + ", " +
           test::random_initializer(p + "m", {c}, seed + 2) + ", " +
           test::random_initializer(p + "v", {c}, seed + 3, 0.1f, 2.0f);
  };
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,4,6,6] x, float[3,5] a) => (float[2,6,5,5] y, float[3,4] z) <)" +
                     test::random_initializer("w1", {6, 2, 3, 3}, 1) + ", " +
                     test::random_initializer("b1", {6}, 2) + ", " + bn("n1", 6, 3) + ", " +
                     test::random_initializer("w2", {6, 3, 2, 2}, 10) + ", " + bn("n2", 6, 11) +
                     ", " + bn("n3", 6, 20) + ", " +
                     test::random_initializer("w3", {6, 3, 1, 1}, 30) + ", " +
                     test::random_initializer("w4", {5, 4}, 40) + ", " + bn("n4", 4, 41) +
                     R"(> {
      c1 = Conv <group = 2, pads = [1, 1, 1, 1]> (x, w1, b1)
      y1 = BatchNormalization (c1, n1s, n1t, n1m, n1v)
      c2 = ConvTranspose <group = 2, strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]> (y1, w2)
      y2 = BatchNormalization (c2, n2s, n2t, n2m, n2v)
      p = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (y2)
      y3 = BatchNormalization (p, n3s, n3t, n3m, n3v)
      y = Conv <group = 2> (y3, w3)
      g1 = MatMul(a, w4)
      z = BatchNormalization (g1, n4s, n4t, n4m, n4v)
    })";
  auto stats = test::expect_pipeline_preserves_outputs(text, "fuse-conv-bn");
  ASSERT_NE(stats.find("fuse-conv-bn"), nullptr);
  const auto& counters = stats.find("fuse-conv-bn")->counters;
  EXPECT_EQ(counters.at("fuse-conv-bn"), 4);
  EXPECT_EQ(counters.at("into-conv"), 2);
  EXPECT_EQ(counters.at("into-following-conv"), 1);
  EXPECT_EQ(counters.at("into-gemm"), 1);
}

}  // namespace
}  // namespace xopt
