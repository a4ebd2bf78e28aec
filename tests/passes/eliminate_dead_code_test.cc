// eliminate-dead-code: golden before/after in ONNX text, and graphs it must leave alone.
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

TEST(EliminateDeadCode, RemovesDeadChainsAndUnusedInitializers) {
  EXPECT_REWRITES_EXACTLY("eliminate-dead-code", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y)
       <float[3] unused_w = {1, 2, 3}, float[3] bias = {1, 1, 1}> {
      y = Add(x, bias)
      dead1 = Relu(x)
      dead2 = Neg(dead1)
      dead3 = Mul(dead2, unused_w)
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) <float[3] bias = {1, 1, 1}> {
      y = Add(x, bias)
    })");
}

TEST(EliminateDeadCode, CountsRemovedNodesAndInitializers) {
  auto r = test::run_pipeline("eliminate-dead-code", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] w = {1, 2}> {
      y = Sigmoid(x)
      a = Mul(x, w)
      b = Neg(a)
    })");
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  const auto* s = r.stats.find("eliminate-dead-code");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->nodes_removed, 2);
  EXPECT_EQ(s->nodes_added, 0);
  EXPECT_EQ(s->counters.at("initializers"), 1);
}

// In IR 3 an initializer listed as a graph input is an overridable default: part of the interface.
TEST(EliminateDeadCode, KeepsInitializersThatAreGraphInputs) {
  EXPECT_NOT_APPLIED("eliminate-dead-code", R"(
    <ir_version: 3, opset_import: ["" : 9]>
    g (float[2] x, float[2] w) => (float[2] y) <float[2] w = {1, 2}> {
      y = Relu(x)
    })");
}

// A value read only from inside an If branch is used: its producer must stay.
TEST(EliminateDeadCode, SubgraphImplicitInputsCountAsUses) {
  EXPECT_NOT_APPLIED("eliminate-dead-code", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      outer = Relu(x)
      y = If(c) <
        then_branch = then_g () => (float[2] t) { t = Neg(outer) },
        else_branch = else_g () => (float[2] e) { e = Abs(outer) }
      >
    })");
}

// ...but when the If itself is dead, so is what only its branches read.
TEST(EliminateDeadCode, DeadIfTakesItsOuterInputsWithIt) {
  EXPECT_REWRITES_EXACTLY("eliminate-dead-code", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      y = Sigmoid(x)
      outer = Relu(x)
      z = If(c) <
        then_branch = then_g () => (float[2] t) { t = Neg(outer) },
        else_branch = else_g () => (float[2] e) { e = Abs(outer) }
      >
    })",
                          R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      y = Sigmoid(x)
    })");
}

TEST(EliminateDeadCode, KeepsGraphOutputsEvenWhenUnread) {
  EXPECT_NOT_APPLIED("eliminate-dead-code", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[2] z) {
      y = Relu(x)
      z = Neg(y)
    })");
}

TEST(EliminateDeadCode, RemovesStaleValueInfo) {
  ir::Model model = test::parse_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) <float[2] gone, float[2] kept> {
      kept = Relu(x)
      y = Neg(kept)
    })");
  ASSERT_EQ(model.graph->value_info().size(), 2u);
  passes::PassManager pm(passes::PassManagerOptions{true, {}, {}, 16, {}});
  ASSERT_TRUE(pm.add_pipeline("eliminate-dead-code").is_ok());
  passes::PassContext ctx;
  passes::PipelineStats stats;
  ASSERT_TRUE(pm.run(model, ctx, &stats).is_ok());
  EXPECT_TRUE(stats.changed);
  ASSERT_EQ(model.graph->value_info().size(), 1u);
  EXPECT_EQ(model.graph->value_info()[0]->name(), "kept");
  EXPECT_EQ(stats.find("eliminate-dead-code")->counters.at("value-info"), 1);
}

}  // namespace
}  // namespace xopt
