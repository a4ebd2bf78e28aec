// plan-memory and reorder on small graphs: the plan written into the model (golden text), the
// refusal on unknown shapes, the batch recorded; reorder applied where it shrinks the arena (new
// order, smaller arena, the same outputs run inside the plan) and rejected where it does not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "executor/cpu/session.h"
#include "ir/text.h"
#include "passes/pass_manager.h"
#include "planner/annotate.h"
#include "planner/plan_text.h"
#include "planner/reorder.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"

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
  // No parameters, no workspace: the budget holds the CUDA context estimate, the arena and the
  // I/O region (the executor allocates it too). Per sample: a is 256 bytes in the arena, x and y
  // 256 bytes each outside it.
  o.max_batch_bytes = planner::kCudaContextEstimate + 100 * (256 + 2 * 256);
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
  EXPECT_EQ(out->plan.breakdown.io, 100u * 2 * 256);
  EXPECT_EQ(out->fit.total_bytes, out->plan.breakdown.total());
  ASSERT_TRUE(out->has_next);
  EXPECT_EQ(out->next_plan.batch, 101);
  EXPECT_GT(out->next_total_bytes, o.max_batch_bytes);
  // The model itself is bound to the batch found.
  EXPECT_EQ(model->graph->find_value("a")->shape().to_string(), "[100,64]");
}

// Runs `pipeline` on `model`; the plan it made and the pipeline statistics.
struct Planned {
  planner::MemoryPlan plan;
  PipelineStats stats;
};
Result<Planned> run_planned(ir::Model& model, const std::string& pipeline) {
  PassManagerOptions pmo;
  pmo.verify_each = true;
  PassManager pm(pmo);
  XOPT_RETURN_IF_ERROR(pm.add_pipeline(pipeline));
  PassContext ctx;
  Planned out;
  XOPT_RETURN_IF_ERROR(pm.run(model, ctx, &out.stats));
  if (!ctx.plan_outcome()) return internal_error("no plan made");
  out.plan = ctx.plan_outcome()->plan;
  return out;
}

int64_t counter(const PipelineStats& stats, const std::string& name) {
  const PassStats* p = stats.find("reorder");
  if (p == nullptr) return 0;
  auto it = p->counters.find(name);
  return it == p->counters.end() ? 0 : it->second;
}

std::vector<std::string> node_outputs(const ir::Graph& g) {
  std::vector<std::string> out;
  for (const ir::Node* n : g.nodes()) out.push_back(n->output(0)->name());
  return out;
}

// Runs `model` inside the plan stored in it and `original` with one buffer per value, on the same
// random inputs: "" when the outputs are equal bit for bit.
std::string planned_run_difference(const ir::Model& original, const ir::Model& model) {
  auto stored = planner::read_plan(model);
  if (!stored.is_ok()) return stored.status().message();
  const auto inputs = test::random_inputs(original);
  auto want = exec::run_model(original, inputs);
  if (!want.is_ok()) return want.status().message();
  exec::RunOptions ro;
  exec::RunStats stats;
  ro.plan = &*stored;
  ro.stats = &stats;
  auto got = exec::run_model(model, inputs, ro);
  if (!got.is_ok()) return got.status().message();
  if (stats.arena_bytes != stored->arena_bytes) return "the run used another arena size";
  return test::outputs_difference(*got, *want, test::kBitwise);
}

// Two branches from x, each a 4 KiB map reduced to one number, written breadth first: both maps are
// live together (a1, b1 and a2 at the first ReduceSum: 4096 + 4096 + 256 bytes). Finishing one
// branch before starting the other keeps one map live at a time, and b1 takes a1's bytes.
constexpr const char* kBreadthFirst = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1024] x) => (float[1,1] y) {
  a1 = Relu(x)
  b1 = Sigmoid(x)
  a2 = ReduceSum<keepdims=1>(a1)
  b2 = ReduceSum<keepdims=1>(b1)
  y = Add(a2, b2)
}
)";

TEST(Reorder, DepthFirstOrderShrinksTheArenaAndRunsInItsPlan) {
  auto plain = ir::parse_model_text(kBreadthFirst);
  auto model = ir::parse_model_text(kBreadthFirst);
  auto original = ir::parse_model_text(kBreadthFirst);
  ASSERT_TRUE(plain.is_ok() && model.is_ok() && original.is_ok());
  auto a = run_planned(*plain, "plan-memory");
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ(a->plan.arena_bytes, 4096u + 4096u + 256u);
  EXPECT_EQ(node_outputs(*plain->graph), (std::vector<std::string>{"a1", "b1", "a2", "b2", "y"}));

  auto b = run_planned(*model, "plan");
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  EXPECT_TRUE(b->stats.changed);
  EXPECT_EQ(node_outputs(*model->graph), (std::vector<std::string>{"a1", "a2", "b1", "b2", "y"}));
  EXPECT_EQ(b->plan.node_order, (std::vector<std::string>{"@a1", "@a2", "@b1", "@b2", "@y"}));
  EXPECT_EQ(b->plan.arena_bytes, 4096u + 256u + 256u);
  EXPECT_EQ(counter(b->stats, "arena-bytes-saved"), 4096 - 256);
  EXPECT_EQ(counter(b->stats, "kept-original-order"), 0);
  EXPECT_EQ(planned_run_difference(*original, *model), "");
}

// The memory-aware order's cost model leaves in-place reuse out. Here it prefers running the chain
// a -> a2 before k (peak 8192 instead of 256 + 8192 bytes, counting a and a2 apart), but a2
// overwrites a in place, so both orders plan to 4096 + 256 bytes: the pass must keep the graph's
// order.
constexpr const char* kInPlaceChain = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1024] x, float[1,1] s) => (float[1,1024] y) {
  k = Relu(s)
  a = Relu(x)
  a2 = Sigmoid(a)
  y = Add(a2, k)
}
)";

TEST(Reorder, OrderWithALowerPeakButNoSmallerArenaIsRejected) {
  auto model = ir::parse_model_text(kInPlaceChain);
  ASSERT_TRUE(model.is_ok());
  auto b = run_planned(*model, "plan");
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  // The ordering finds another order, lower under its cost model, which reorder planned and
  // rejected.
  auto r = planner::memory_aware_order(*model->graph);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_NE(r->method, "original");
  EXPECT_LT(r->peak_bytes, r->original_peak_bytes);
  EXPECT_EQ(counter(b->stats, "kept-original-order"), 1);
  EXPECT_EQ(counter(b->stats, "arena-bytes-saved"), 0);
  EXPECT_EQ(node_outputs(*model->graph), (std::vector<std::string>{"k", "a", "a2", "y"}));
  EXPECT_EQ(b->plan.node_order, (std::vector<std::string>{"@k", "@a", "@a2", "@y"}));
  EXPECT_EQ(b->plan.arena_bytes, 4096u + 256u);
  const planner::PlannedValue* a2 = b->plan.find("a2");
  ASSERT_NE(a2, nullptr);
  EXPECT_EQ(a2->alias_kind, "in-place");
}

}  // namespace
}  // namespace xopt::passes
