// run_model: input checks, kernel resolution, simple and arena modes.
#include <gtest/gtest.h>

#include "executor/cpu/session.h"
#include "ir/text.h"
#include "planner/memory_plan.h"

namespace xopt::exec {
namespace {

ir::Model parse(const char* text) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return std::move(m).value();
}

// y = Relu(x + b) * 2, with an intermediate chain long enough for plans to be interesting.
const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[N,3] x) => (float[N,3] y) <float[3] b = {1.0, -2.0, 0.5}, float two = {2.0}> {
    s = Add(x, b)
    r = Relu(s)
    y = Mul(r, two)
  }
)";

std::map<std::string, ir::Tensor> chain_inputs() {
  return {{"x", ir::Tensor::of<float>({2, 3}, {1, 1, 1, -5, 3, 0})}};
}

TEST(Session, RunsAGraph) {
  ir::Model m = parse(kChain);
  auto out = run_model(m, chain_inputs());
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->size(), 1u);
  const ir::Tensor& y = (*out)[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  std::vector<float> want = {4, 0, 3, 0, 2, 1};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], want[static_cast<size_t>(i)]);
}

TEST(Session, MissingInputIsNamed) {
  ir::Model m = parse(kChain);
  auto out = run_model(m, {});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("input 'x' is not given"), std::string::npos)
      << out.status().message();
}

TEST(Session, WrongDtypeIsNamed) {
  ir::Model m = parse(kChain);
  auto out = run_model(m, {{"x", ir::Tensor::of<double>({2, 3}, {1, 1, 1, 1, 1, 1})}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("input 'x' is double but the graph declares float"),
            std::string::npos)
      << out.status().message();
}

TEST(Session, WrongShapeIsNamed) {
  ir::Model m = parse(kChain);
  auto rank = run_model(m, {{"x", ir::Tensor::of<float>({6}, {1, 1, 1, 1, 1, 1})}});
  ASSERT_FALSE(rank.is_ok());
  EXPECT_NE(rank.status().message().find("input 'x' has shape [6]"), std::string::npos)
      << rank.status().message();
  auto dim = run_model(m, {{"x", ir::Tensor::of<float>({3, 2}, {1, 1, 1, 1, 1, 1})}});
  ASSERT_FALSE(dim.is_ok());
  EXPECT_NE(dim.status().message().find("dim 1 is 2, not 3"), std::string::npos)
      << dim.status().message();
}

TEST(Session, SymbolicDimsBindConsistently) {
  ir::Model m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N] a, float[N] b) => (float[N] c) { c = Add(a, b) }
  )");
  auto bad = run_model(
      m, {{"a", ir::Tensor::of<float>({2}, {1, 2})}, {"b", ir::Tensor::of<float>({3}, {1, 2, 3})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'N'"), std::string::npos) << bad.status().message();
}

TEST(Session, UnknownInputNameIsRefused) {
  ir::Model m = parse(kChain);
  auto in = chain_inputs();
  in["z"] = ir::Tensor::scalar<float>(1);
  auto out = run_model(m, in);
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("'z' is not an input of the graph"), std::string::npos);
}

TEST(Session, OpWithoutKernelIsNamed) {
  ir::Model m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17, "ai.xopt.test" : 1]>
    g (float[2] x) => (float[2] y) { t = Relu(x)  y = ai.xopt.test.Frobnicate(t) }
  )");
  auto out = run_model(m, {{"x", ir::Tensor::of<float>({2}, {1, 2})}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(out.status().message().find("no CPU kernel for ai.xopt.test.Frobnicate at opset 1"),
            std::string::npos)
      << out.status().message();
}

TEST(Session, KernelErrorsNameTheNode) {
  ir::Model m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] a, float[3] b) => (float[3] c) { c = Add(a, b) }
  )");
  auto out = run_model(
      m, {{"a", ir::Tensor::of<float>({2}, {1, 2})}, {"b", ir::Tensor::of<float>({3}, {1, 2, 3})}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("(Add)"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("cannot be broadcast"), std::string::npos);
}

TEST(Session, FreesValuesAfterLastUse) {
  ir::Model m = parse(kChain);
  RunStats stats;
  RunOptions ro;
  ro.stats = &stats;
  ASSERT_TRUE(run_model(m, chain_inputs(), ro).is_ok());
  EXPECT_EQ(stats.nodes_run, 3u);
  // s dies when r is made, r when y is made: never more than two 24-byte values alive.
  EXPECT_EQ(stats.peak_activation_bytes, 48u);
}

// ---- arena mode ----

TEST(SessionArena, SequentialPlanGivesIdenticalOutputs) {
  ir::Model m = parse(kChain);
  auto simple = run_model(m, chain_inputs());
  ASSERT_TRUE(simple.is_ok());
  for (bool io : {false, true}) {
    auto plan = sequential_plan(m, chain_inputs(), io);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    EXPECT_EQ(plan->values.size(), io ? 4u : 2u);  // s, r (+ x, y)
    RunOptions ro;
    RunStats stats;
    ro.plan = &*plan;
    ro.stats = &stats;
    auto arena = run_model(m, chain_inputs(), ro);
    ASSERT_TRUE(arena.is_ok()) << arena.status().message();
    EXPECT_TRUE((*arena)[0].same_contents((*simple)[0]));
    EXPECT_EQ(stats.arena_bytes, plan->arena_bytes);
  }
}

// s and r may share bytes (s dies where r is born only if the plan says r is in place of s).
TEST(SessionArena, InPlacePlanIsHonoured) {
  ir::Model m = parse(kChain);
  auto plan = sequential_plan(m, chain_inputs(), false);
  ASSERT_TRUE(plan.is_ok());
  planner::PlannedValue* s = nullptr;
  planner::PlannedValue* r = nullptr;
  for (auto& v : plan->values) (v.name == "s" ? s : r) = &v;
  ASSERT_TRUE(s && r);
  r->offset = s->offset;
  r->alias_of = "s";
  ASSERT_TRUE(planner::check_plan(*plan).is_ok());
  RunOptions ro;
  ro.plan = &*plan;
  auto arena = run_model(m, chain_inputs(), ro);
  ASSERT_TRUE(arena.is_ok()) << arena.status().message();
  auto simple = run_model(m, chain_inputs());
  EXPECT_TRUE((*arena)[0].same_contents((*simple)[0]));
}

// Every step in place: s over x (Add with a broadcast operand), r over s (Relu), y over r (Mul by a
// scalar), all at one offset.
TEST(SessionArena, ChainOfInPlaceBroadcastOpsIsHonoured) {
  ir::Model m = parse(kChain);
  auto plan = sequential_plan(m, chain_inputs(), /*io_in_arena=*/true);
  ASSERT_TRUE(plan.is_ok());
  const std::map<std::string, std::string> alias = {{"s", "x"}, {"r", "s"}, {"y", "r"}};
  const size_t base = plan->find("x")->offset;
  for (auto& v : plan->values) {
    auto it = alias.find(v.name);
    if (it == alias.end()) continue;
    v.offset = base;
    v.alias_of = it->second;
  }
  ASSERT_TRUE(planner::check_plan(*plan).is_ok()) << planner::check_plan(*plan).message();
  RunOptions ro;
  ro.plan = &*plan;
  auto arena = run_model(m, chain_inputs(), ro);
  ASSERT_TRUE(arena.is_ok()) << arena.status().message();
  auto simple = run_model(m, chain_inputs());
  EXPECT_TRUE((*arena)[0].same_contents((*simple)[0]));
}

TEST(SessionArena, OverlappingLiveValuesAreRefusedByName) {
  ir::Model m = parse(kChain);
  auto plan = sequential_plan(m, chain_inputs(), true);
  ASSERT_TRUE(plan.is_ok());
  // x is live over steps -1..0 and s over 0..1: put s on top of x without an alias.
  const planner::PlannedValue* x = plan->find("x");
  for (auto& v : plan->values)
    if (v.name == "s") v.offset = x->offset;
  RunOptions ro;
  ro.plan = &*plan;
  auto out = run_model(m, chain_inputs(), ro);
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("'x'"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("'s'"), std::string::npos) << out.status().message();
}

TEST(SessionArena, SizeMismatchIsAnError) {
  ir::Model m = parse(kChain);
  auto plan = sequential_plan(m, chain_inputs(), false);
  ASSERT_TRUE(plan.is_ok());
  for (auto& v : plan->values)
    if (v.name == "r") v.bytes = 12;
  RunOptions ro;
  ro.plan = &*plan;
  auto out = run_model(m, chain_inputs(), ro);
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("value 'r' is 24 bytes"), std::string::npos)
      << out.status().message();
}

TEST(SessionArena, ReadAfterPlannedDeathIsAnError) {
  ir::Model m = parse(kChain);
  auto plan = sequential_plan(m, chain_inputs(), false);
  ASSERT_TRUE(plan.is_ok());
  for (auto& v : plan->values)
    if (v.name == "s") v.last_step = 0;  // but Relu reads it at step 1
  RunOptions ro;
  ro.plan = &*plan;
  auto out = run_model(m, chain_inputs(), ro);
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("value 's' is read at step 1"), std::string::npos)
      << out.status().message();
}

TEST(SessionArena, UnplannedActivationIsAnError) {
  ir::Model m = parse(kChain);
  auto plan = sequential_plan(m, chain_inputs(), false);
  ASSERT_TRUE(plan.is_ok());
  std::erase_if(plan->values, [](const planner::PlannedValue& v) { return v.name == "r"; });
  // The arena shrinks to what the values left need (check_plan refuses an arena larger than its
  // values could take), so the executor itself must notice the value with no place.
  plan->arena_bytes = 0;
  for (const planner::PlannedValue& v : plan->values)
    plan->arena_bytes = std::max(plan->arena_bytes, v.offset + v.size);
  RunOptions ro;
  ro.plan = &*plan;
  auto out = run_model(m, chain_inputs(), ro);
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("'r' has no place in the plan"), std::string::npos)
      << out.status().message();
}

TEST(SessionArena, NodeOrderMustMatchTheGraph) {
  ir::Model m = parse(kChain);
  auto plan = sequential_plan(m, chain_inputs(), false);
  ASSERT_TRUE(plan.is_ok());
  plan->node_order.pop_back();
  RunOptions ro;
  ro.plan = &*plan;
  auto out = run_model(m, chain_inputs(), ro);
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("node_order lists 2 nodes, the graph has 3"),
            std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace xopt::exec
