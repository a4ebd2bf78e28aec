// Plans for 2,000-node synthetic graphs: every plan (the chosen one, each strategy's, the one for
// the memory-aware order) passes check_plan and the independent replay of planner_test_util.h,
// which recomputes what each arena chunk holds from the graph rather than trusting the planner's
// lifetimes. The planning times are printed benchmark-style, never asserted.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "planner/planner.h"
#include "planner/reorder.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::GraphBuilder;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// 400 residual blocks of 5 nodes: Conv, Relu, Conv, Add (skip), Relu; the channel count changes now
// and then through a projection so sizes vary.
void build_resnet_like(GraphBuilder& b, int blocks) {
  int64_t ch = 16, hw = 32;
  ir::Value* x = b.input("x", {1, ch, hw, hw});
  for (int i = 0; i < blocks; ++i) {
    const std::string s = std::to_string(i);
    ir::Value* w1 = b.weight("w1_" + s, {ch, ch, 3, 3});
    ir::Value* c1 = b.op("Conv", {x, w1}, "c1_" + s, {1, ch, hw, hw});
    b.last()->set_attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    ir::Value* r1 = b.op("Relu", {c1}, "r1_" + s, {1, ch, hw, hw});
    ir::Value* w2 = b.weight("w2_" + s, {ch, ch, 3, 3});
    ir::Value* c2 = b.op("Conv", {r1, w2}, "c2_" + s, {1, ch, hw, hw});
    b.last()->set_attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    ir::Value* a = b.op("Add", {c2, x}, "a_" + s, {1, ch, hw, hw});
    x = b.op("Relu", {a}, "r2_" + s, {1, ch, hw, hw});
    if (i % 100 == 99 && hw > 4) {  // downsample: more channels, smaller maps
      hw /= 2;
      ch *= 2;
      ir::Value* wp = b.weight("wp_" + s, {ch, ch / 2, 1, 1});
      x = b.op("Conv", {x, wp}, "p_" + s, {1, ch, hw, hw});
      b.last()->set_attr("strides", std::vector<int64_t>{2, 2});
    }
  }
  b.output(x);
}

void time_graph(const char* what, const ir::Graph& g) {
  const auto t0 = Clock::now();
  auto p = plan(g);
  const double all_ms = ms_since(t0);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_TRUE(check_plan(*p).is_ok());
  EXPECT_EQ(test::replay(g, graph_order(g), *p), "");
  EXPECT_GE(p->arena_bytes, p->lower_bound);
  std::printf(
      "[ bench    ] %s: %zu nodes, %zu planned values: plan (all strategies) %.1f ms, "
      "arena %zu, lower bound %zu (ratio %.4f), naive %zu (%.1fx), winner %s\n",
      what, g.num_nodes(), p->values.size(), all_ms, p->arena_bytes, p->lower_bound,
      p->ratio_to_lower_bound(), p->naive_bytes,
      static_cast<double>(p->naive_bytes) / static_cast<double>(p->arena_bytes),
      p->strategy.c_str());
  for (const std::string& name : strategy_names()) {
    PlanOptions one;
    one.strategies = {name};
    const auto t = Clock::now();
    auto q = plan(g, one);
    const double ms = ms_since(t);
    if (!q.is_ok()) {
      std::printf("[ bench    ]   %-20s skipped (%s)\n", name.c_str(),
                  q.status().message().c_str());
      continue;
    }
    std::printf("[ bench    ]   %-20s %8.1f ms  arena %zu\n", name.c_str(), ms, q->arena_bytes);
    EXPECT_TRUE(check_plan(*q).is_ok()) << name;
    EXPECT_EQ(test::replay(g, graph_order(g), *q), "") << name;
    EXPECT_GE(q->arena_bytes, p->arena_bytes) << name << ": the plan keeps the smallest arena";
  }
  const auto t1 = Clock::now();
  auto r = memory_aware_order(g);
  const double order_ms = ms_since(t1);
  ASSERT_TRUE(r.is_ok());
  const auto t2 = Clock::now();
  auto best = plan_with_reorder(g);
  const double reorder_ms = ms_since(t2);
  ASSERT_TRUE(best.is_ok());
  ASSERT_TRUE(check_plan(*best).is_ok());
  auto best_order = resolve_node_order(g, *best);
  ASSERT_TRUE(best_order.is_ok()) << best_order.status().message();
  EXPECT_EQ(test::replay(g, *best_order, *best), "");
  EXPECT_LE(best->arena_bytes, p->arena_bytes);
  std::printf(
      "[ bench    ]   memory-aware order %.1f ms (%s, peak %zu -> %zu); plan_with_reorder "
      "%.1f ms, arena %zu\n",
      order_ms, r->method.c_str(), r->original_peak_bytes, r->peak_bytes, reorder_ms,
      best->arena_bytes);
}

TEST(LargeGraphs, PlanA2000NodeResidualNetwork) {
  GraphBuilder b;
  build_resnet_like(b, 400);
  ASSERT_GE(b.graph().num_nodes(), 2000u);
  time_graph("resnet-like", b.graph());
}

TEST(LargeGraphs, PlanA2000NodeRandomDag) {
  GraphBuilder b;
  std::mt19937 rng(2000);
  test::build_random_dag(b, rng, 1700);
  ASSERT_GE(b.graph().num_nodes(), 2000u);
  time_graph("random DAG", b.graph());
}

}  // namespace
}  // namespace xopt::planner
