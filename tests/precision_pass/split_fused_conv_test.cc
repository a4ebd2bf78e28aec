// split_fused_convs (passes/precision/split_fused_conv.h): each com.microsoft.FusedConv becomes
// Conv [-> Add z] [-> activation] computing the same on the CPU executor; the Conv keeps the fused
// node's name.
#include <gtest/gtest.h>

#include "ir/text.h"
#include "passes/pass_manager.h"
#include "passes/precision/split_fused_conv.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

void expect_split(const char* before, const char* after, int64_t count) {
  ir::Model m = test::parse_text(before);
  EXPECT_EQ(passes::split_fused_convs(*m.graph), count);
  EXPECT_EQ(ir::print_graph_text(m), test::canonical(after));
  bool checked = false;
  std::string why;
  EXPECT_EQ(
      test::numeric_difference(test::parse_text(before), m, test::kWithinRounding, &checked, &why),
      "");
  EXPECT_TRUE(checked) << why;
}

TEST(SplitFusedConv, ResidualAndEachActivation) {
  expect_split(R"(
    <ir_version: 8, opset_import: ["" : 22, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] z) => (float[1,2,3,3] a, float[1,2,3,3] c,
                                               float[1,2,3,3] h, float[1,2,3,3] r)
      <float[2,2,1,1] w = {1, -0.5, 0.25, 2}, float[2] b = {0.5, -1}> {
      a = com.microsoft.FusedConv <activation = "LeakyRelu", activation_params = [0.2]> (x, w, b, z)
      c = com.microsoft.FusedConv <activation = "Clip", activation_params = [-0.5, 1.5]> (a, w)
      h = com.microsoft.FusedConv <activation = "HardSigmoid", activation_params = [0.3, 0.4]> (c, w, b)
      r = com.microsoft.FusedConv (h, w, b, z)
    })",
               R"(
    <ir_version: 8, opset_import: ["" : 22, "com.microsoft" : 1]>
    g (float[1,2,3,3] x, float[1,2,3,3] z) => (float[1,2,3,3] a, float[1,2,3,3] c,
                                               float[1,2,3,3] h, float[1,2,3,3] r)
      <float[2,2,1,1] w = {1, -0.5, 0.25, 2}, float[2] b = {0.5, -1}, float c_min = {-0.5},
       float c_max = {1.5}> {
      a_conv = Conv (x, w, b)
      a_add = Add (a_conv, z)
      a = LeakyRelu <alpha = 0.2> (a_add)
      c_conv = Conv (a, w)
      c = Clip (c_conv, c_min, c_max)
      h_conv = Conv (c, w, b)
      h = HardSigmoid <alpha = 0.3, beta = 0.4> (h_conv)
      r_conv = Conv (h, w, b)
      r = Add (r_conv, z)
    })",
               4);
}

// What each step stands for in the user's graph (xviz's "fused: replaces N nodes" cards and its
// diff read this): the Conv the Conv and the BatchNormalization folded into it, the Add and the
// Relu themselves.
TEST(SplitFusedConv, EachStepStandsForItsOwnOriginals) {
  ir::Model m = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2,3,3] x, float[1,2,3,3] z) => (float[1,2,3,3] y)
      <float[2,2,1,1] w = {1, -0.5, 0.25, 2}, float[2] s = {1, 2}, float[2] b = {0.5, -1},
       float[2] mean = {0, 1}, float[2] var = {1, 4}> {
      c = Conv (x, w)
      n = BatchNormalization (c, s, b, mean, var)
      a = Add (n, z)
      y = Relu (a)
    })");
  for (const auto& [value, node] :
       {std::pair{"c", "conv"}, {"n", "bn"}, {"a", "add"}, {"y", "relu"}})
    m.graph->find_node_output(value)->producer()->set_name(node);
  passes::PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fuse").is_ok());
  passes::PassContext ctx;
  ASSERT_TRUE(pm.run(m, ctx).is_ok());
  ASSERT_EQ(m.graph->num_nodes(), 1u);
  ASSERT_EQ(m.graph->find_node_output("y")->producer()->op_type(), "FusedConv");
  EXPECT_EQ(passes::split_fused_convs(*m.graph), 1);
  std::map<std::string, std::vector<std::string>> stands_for;
  for (const ir::Node* n : m.graph->nodes()) stands_for[n->op_type()] = n->provenance();
  using V = std::vector<std::string>;
  EXPECT_EQ(stands_for["Conv"], (V{"conv", "bn"}));
  EXPECT_EQ(stands_for["Add"], (V{"add"}));
  EXPECT_EQ(stands_for["Relu"], (V{"relu"}));
}

TEST(SplitFusedConv, NothingToSplit) {
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 22]>
    g (float[1,2,3,3] x) => (float[1,2,3,3] y) <float[2,2,1,1] w = {1, -0.5, 0.25, 2}> {
      c = Conv (x, w)
      y = Relu (c)
    })";
  ir::Model m = test::parse_text(text);
  EXPECT_EQ(passes::split_fused_convs(*m.graph), 0);
  EXPECT_EQ(ir::print_graph_text(m), test::canonical(text));
}

}  // namespace
}  // namespace xopt
