// The planner on the six real models of ../shared/models (skipped when absent): every plan is
// valid, replays, and its arena stays within 5% of the lower bound (DESIGN.md's ceiling); the
// figures are printed benchmark-style.
#include <gtest/gtest.h>

#include <chrono>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "planner/batch.h"
#include "planner/planner.h"
#include "planner/reorder.h"
#include "planner/report.h"
#include "planner_test_util.h"
#include "tests/util/test_util.h"

namespace xopt::planner {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

class SharedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedModels, PlansWithinFivePercentOfTheLowerBound) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string path = shared + "/models/" + GetParam() + "/model.onnx";
  auto model = ir::load_model(path);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  ir::Graph& g = *model->graph;
  ASSERT_TRUE(ir::infer_shapes(g).is_ok());
  for (const ir::Value* v : ir::values_with_unknown_shape(g)) ADD_FAILURE() << v->name();

  const auto t0 = Clock::now();
  auto p = plan(g);
  const double plan_ms = ms_since(t0);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_TRUE(check_plan(*p).is_ok()) << check_plan(*p).message();
  EXPECT_EQ(test::replay(g, graph_order(g), *p), "");
  EXPECT_LE(p->ratio_to_lower_bound(), 1.05);

  const auto t1 = Clock::now();
  auto best = plan_with_reorder(g);
  const double reorder_ms = ms_since(t1);
  ASSERT_TRUE(best.is_ok()) << best.status().message();
  EXPECT_LE(best->arena_bytes, p->arena_bytes);
  EXPECT_LE(best->ratio_to_lower_bound(), 1.05);
  auto order = resolve_node_order(g, *best);
  ASSERT_TRUE(order.is_ok()) << order.status().message();
  EXPECT_EQ(test::replay(g, *order, *best), "");

  PlanOptions io;
  io.io_in_arena = true;
  auto with_io = plan(g, io);
  ASSERT_TRUE(with_io.is_ok());
  EXPECT_TRUE(check_plan(*with_io).is_ok());
  EXPECT_EQ(test::replay(g, graph_order(g), *with_io), "");

  PlanOptions bare;
  bare.views = bare.in_place = false;
  auto no_alias = plan(g, bare);
  ASSERT_TRUE(no_alias.is_ok());

  std::string arenas;
  for (const auto& s : p->strategies)
    arenas += " " + s.name + "=" + std::to_string(s.arena_bytes) + (s.optimal ? "*" : "");
  std::printf(
      "[ model    ] %-20s %4zu nodes: arena %s, lower bound %s (ratio %.4f), naive %s "
      "(%.1fx), no aliasing %s; reordered %s (ratio %.4f); workspace %s; params %s; "
      "plan %.0f ms, +reorder %.0f ms; %s\n",
      GetParam().c_str(), g.num_nodes(), human_bytes(p->arena_bytes).c_str(),
      human_bytes(p->lower_bound).c_str(), p->ratio_to_lower_bound(),
      human_bytes(p->naive_bytes).c_str(),
      static_cast<double>(p->naive_bytes) / static_cast<double>(p->arena_bytes),
      human_bytes(no_alias->arena_bytes).c_str(), human_bytes(best->arena_bytes).c_str(),
      best->ratio_to_lower_bound(), human_bytes(p->workspace_bytes).c_str(),
      human_bytes(p->breakdown.parameters).c_str(), plan_ms, reorder_ms, arenas.c_str());
}

INSTANTIATE_TEST_SUITE_P(Planner, SharedModels,
                         ::testing::ValuesIn(xopt::test::shared_model_names()));

TEST(SharedModelBatch, LargestBatchOfSqueezenetInTwoGiB) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string path = shared + "/models/squeezenet1_1/model.onnx";
  auto model = ir::load_model(path);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  // Unaligned, activations scale with the batch, up to the few values of fixed size (shape tensors,
  // constants); views and in-place do not depend on the batch.
  PlanOptions exact_bytes;
  exact_bytes.alignment = 1;
  auto one = plan_at_batch(*model, 1, exact_bytes, true);
  ASSERT_TRUE(one.is_ok()) << one.status().message();
  auto four = plan_at_batch(*model, 4, exact_bytes, true);
  ASSERT_TRUE(four.is_ok()) << four.status().message();
  EXPECT_EQ(four->batch, 4);
  auto ratio = [](size_t a, size_t b) { return static_cast<double>(a) / static_cast<double>(b); };
  EXPECT_NEAR(ratio(four->lower_bound, one->lower_bound), 4.0, 0.01);
  EXPECT_NEAR(ratio(four->naive_bytes, one->naive_bytes), 4.0, 0.01);
  EXPECT_LE(four->lower_bound, 4 * one->lower_bound);
  // Without override the fixed batch of 1 stays.
  auto fixed = plan_at_batch(*model, 4, exact_bytes, false);
  ASSERT_TRUE(fixed.is_ok());
  EXPECT_EQ(fixed->arena_bytes, one->arena_bytes);

  const size_t params = parameter_bytes(*model->graph);
  BatchBudget budget{size_t{2} << 30, params, kCudaContextEstimate};
  const auto t0 = Clock::now();
  auto fit = max_batch(budget, batch_planner(*model, {}, true));
  const double ms = ms_since(t0);
  ASSERT_TRUE(fit.is_ok()) << fit.status().message();
  ASSERT_GT(fit->batch, 1);
  EXPECT_LE(fit->total_bytes, budget.budget_bytes);
  auto next = plan_at_batch(*model, fit->batch + 1, {}, true);
  ASSERT_TRUE(next.is_ok());
  EXPECT_GT(footprint(*next, params, kCudaContextEstimate), budget.budget_bytes);
  std::printf(
      "[ model    ] squeezenet1_1 in 2 GiB (500 MiB context estimate, %s params): batch %lld "
      "(arena %s, workspace %s), %zu plans in %.0f ms\n",
      human_bytes(params).c_str(), static_cast<long long>(fit->batch),
      human_bytes(fit->plan.arena_bytes).c_str(), human_bytes(fit->plan.workspace_bytes).c_str(),
      fit->probes.size(), ms);
}

}  // namespace
}  // namespace xopt::planner
