// plan-memory and reorder on small graphs: the plan written into the model (golden text), the
// refusal on unknown shapes, the batch recorded, reorder only where it shrinks the arena.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/text.h"
#include "passes/pass_manager.h"
#include "planner/annotate.h"
#include "planner/plan_text.h"

namespace xopt::passes {
namespace {

constexpr const char* kChain = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,64] x) => (float[1,64] y) {
  a = Relu(x)
  b = Sigmoid(a)
  c = Add(a, b)
  y = Relu(c)
}
)";

Result<planner::MemoryPlan> run_plan(ir::Model& model, const std::string& pipeline,
                                     PassOptions options = {}) {
  PassManagerOptions pmo;
  pmo.verify_each = true;
  PassManager pm(pmo);
  XOPT_RETURN_IF_ERROR(pm.add_pipeline(pipeline));
  PassContext ctx(std::move(options));
  XOPT_RETURN_IF_ERROR(pm.run(model, ctx));
  if (!ctx.plan_outcome()) return internal_error("no plan made");
  return ctx.plan_outcome()->plan;
}

TEST(PlanMemory, GoldenPlanOfAChain) {
  auto model = ir::parse_model_text(kChain);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  auto plan = run_plan(*model, "plan");
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  // a and b are live together (Add reads both); c overwrites a in place (both inputs die there);
  // x and y are graph input/output, outside the arena.
  // (Hand-derived; checked against the plan xopt --passes=plan writes for this graph.)
  EXPECT_EQ(plan->arena_bytes, 512u);
  EXPECT_EQ(plan->lower_bound, 512u);
  EXPECT_EQ(plan->naive_bytes, 768u);
  EXPECT_EQ(plan->node_order, (std::vector<std::string>{"@a", "@b", "@c", "@y"}));
  ASSERT_EQ(plan->values.size(), 3u);
  const planner::PlannedValue* a = plan->find("a");
  const planner::PlannedValue* b = plan->find("b");
  const planner::PlannedValue* c = plan->find("c");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->offset, 0u);
  EXPECT_EQ(a->first_step, 0);
  EXPECT_EQ(a->last_step, 3);
  EXPECT_EQ(b->offset, 256u);
  EXPECT_EQ(b->first_step, 1);
  EXPECT_EQ(b->last_step, 2);
  EXPECT_EQ(c->offset, 0u);
  EXPECT_EQ(c->alias_of, "a");
  EXPECT_EQ(c->alias_kind, "in-place");
  EXPECT_EQ(plan->find("x"), nullptr);
  EXPECT_EQ(plan->find("y"), nullptr);
  EXPECT_NE(planner::plan_to_text(*plan).find("in-place a"), std::string::npos)
      << planner::plan_to_text(*plan);
  // The annotation in the model is the same plan.
  auto stored = planner::read_plan(*model);
  ASSERT_TRUE(stored.is_ok()) << stored.status().message();
  EXPECT_EQ(planner::plan_to_text(*stored), planner::plan_to_text(*plan));
}

TEST(PlanMemory, AlignmentAndIoInArenaComeFromPassOptions) {
  auto model = ir::parse_model_text(kChain);
  ASSERT_TRUE(model.is_ok());
  PassOptions o;
  o.plan_alignment = 1024;
  o.plan_io_in_arena = true;
  auto plan = run_plan(*model, "plan-memory", o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->alignment, 1024u);
  EXPECT_TRUE(plan->io_in_arena);
  ASSERT_NE(plan->find("x"), nullptr);
  ASSERT_NE(plan->find("y"), nullptr);
  for (const auto& v : plan->values) EXPECT_EQ(v.offset % 1024, 0u) << v.name;
}

constexpr const char* kSymbolic = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N,64] x) => (float[N,64] y) {
  a = Relu(x)
  y = Sigmoid(a)
}
)";

TEST(PlanMemory, RefusesUnknownShapesNamingTheValue) {
  auto model = ir::parse_model_text(kSymbolic);
  ASSERT_TRUE(model.is_ok());
  auto plan = run_plan(*model, "plan");
  ASSERT_FALSE(plan.is_ok());
  const std::string& m = plan.status().message();
  EXPECT_NE(m.find("'x'"), std::string::npos) << m;
  EXPECT_NE(m.find("--batch"), std::string::npos) << m;
  EXPECT_NE(m.find("--input-shape"), std::string::npos) << m;
  EXPECT_FALSE(planner::read_plan(*model).is_ok()) << "a refused plan left an annotation";
}

TEST(PlanMemory, RecordsTheBoundBatch) {
  auto model = ir::parse_model_text(kSymbolic);
  ASSERT_TRUE(model.is_ok());
  PassOptions o;
  o.shape_bindings.batch = 4;
  auto plan = run_plan(*model, "plan", o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->batch, 4);
  ASSERT_NE(plan->find("a"), nullptr);
  EXPECT_EQ(plan->find("a")->bytes, 4u * 64 * 4);
}

TEST(PlanMemory, MaxBatchPlansAtTheLargestBatchThatFits) {
  auto model = ir::parse_model_text(kSymbolic);
  ASSERT_TRUE(model.is_ok());
  PassOptions o;
  // No parameters, no workspace: the budget holds the CUDA context estimate plus the arena.
  // Activations per sample: a is 256 bytes (y is a graph output, outside the arena).
  o.max_batch_bytes = planner::kCudaContextEstimate + 100 * 256;
  PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("plan").is_ok());
  PassContext ctx(o);
  Status st = pm.run(*model, ctx);
  ASSERT_TRUE(st.is_ok()) << st.message();
  const auto& out = ctx.plan_outcome();
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->batch_searched);
  EXPECT_EQ(out->fit.batch, 100);
  EXPECT_EQ(out->plan.batch, 100);
  EXPECT_EQ(out->plan.arena_bytes, 100u * 256);
  ASSERT_TRUE(out->has_next);
  EXPECT_EQ(out->next_plan.batch, 101);
  EXPECT_GT(out->next_total_bytes, o.max_batch_bytes);
  // The model itself is bound to the batch found.
  EXPECT_EQ(model->graph->find_value("a")->shape().to_string(), "[100,64]");
}

// Two branches from x: one keeps a big tensor alive, the other makes a small result. Running the
// small branch first lowers the peak.
constexpr const char* kBranches = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1024] x) => (float[1,1] y) {
  big = Relu(x)
  big2 = Sigmoid(big)
  s1 = ReduceSum<keepdims=1>(x)
  s2 = Relu(s1)
  bs = ReduceSum<keepdims=1>(big2)
  y = Add(bs, s2)
}
)";

TEST(Reorder, KeptOnlyWhenItShrinksTheArena) {
  for (const char* text : {kChain, kBranches}) {
    auto plain = ir::parse_model_text(text);
    auto reordered = ir::parse_model_text(text);
    ASSERT_TRUE(plain.is_ok() && reordered.is_ok());
    auto a = run_plan(*plain, "plan-memory");
    auto b = run_plan(*reordered, "plan");
    ASSERT_TRUE(a.is_ok() && b.is_ok());
    EXPECT_LE(b->arena_bytes, a->arena_bytes);
    if (b->node_order == a->node_order) {
      EXPECT_EQ(b->arena_bytes, a->arena_bytes);
    }
  }
}

}  // namespace
}  // namespace xopt::passes
