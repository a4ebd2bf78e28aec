// Property tests on thousands of random DAGs (seeded): every strategy's plan passes check_plan and
// an independent replay, never beats the lower bound, the chosen arena is the smallest, and
// reordering never makes the arena larger.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "planner/planner.h"
#include "planner/reorder.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::GraphBuilder;

TEST(RandomDags, EveryStrategyPlansValidlyOnRandomOrders) {
  std::mt19937 rng(20240601);
  int graphs = 0, aliased = 0, in_place = 0, exact_optimal = 0, with_exact = 0;
  double worst_ratio = 1.0;
  for (int iter = 0; iter < 1500; ++iter) {
    GraphBuilder b;
    test::build_random_dag(b, rng, 2 + static_cast<int>(rng() % 18));
    const ir::Graph& g = b.graph();
    const auto order = rng() % 2 ? graph_order(g) : test::random_topological_order(g, rng);
    PlanOptions opt;
    opt.io_in_arena = rng() % 2 == 0;
    opt.alignment = rng() % 3 == 0 ? 64 : 256;
    auto chosen = plan(g, order, opt);
    ASSERT_TRUE(chosen.is_ok()) << chosen.status().message();
    ++graphs;
    ASSERT_TRUE(check_plan(*chosen).is_ok()) << check_plan(*chosen).message();
    ASSERT_EQ(test::replay(g, order, *chosen), "") << "iteration " << iter;
    EXPECT_GE(chosen->arena_bytes, chosen->lower_bound);
    EXPECT_LE(chosen->arena_bytes, chosen->naive_bytes);
    worst_ratio = std::max(worst_ratio, chosen->ratio_to_lower_bound());
    for (const auto& v : chosen->values) {
      aliased += !v.alias_of.empty();
      in_place += v.alias_kind == "in-place";
    }
    for (const auto& s : chosen->strategies)
      EXPECT_LE(chosen->arena_bytes, s.arena_bytes) << s.name;
    for (const auto& s : chosen->strategies)
      if (s.name == "exact") ++with_exact, exact_optimal += s.optimal;
    // Each strategy on its own: a valid plan, at or above the bound, at or above the chosen arena.
    for (const std::string& name : strategy_names()) {
      PlanOptions one = opt;
      one.strategies = {name};
      auto p = plan(g, order, one);
      if (name == "exact" && !p.is_ok()) {  // too many buffers for the exact search alone
        EXPECT_NE(p.status().message().find("searches at most 12 buffers"), std::string::npos)
            << p.status().message();
        continue;
      }
      ASSERT_TRUE(p.is_ok()) << name << ": " << p.status().message();
      ASSERT_TRUE(check_plan(*p).is_ok()) << name << ": " << check_plan(*p).message();
      ASSERT_EQ(test::replay(g, order, *p), "") << name << ", iteration " << iter;
      EXPECT_GE(p->arena_bytes, p->lower_bound) << name;
      EXPECT_GE(p->arena_bytes, chosen->arena_bytes) << name;
      EXPECT_EQ(p->lower_bound, chosen->lower_bound) << name;
    }
  }
  EXPECT_GT(aliased, 1000);
  EXPECT_GT(in_place, 300);
  std::printf(
      "[ planner  ] %d random DAGs: %d aliases (%d in place), exact search ran on %d and "
      "proved %d optimal, worst arena/lower bound %.3f\n",
      graphs, aliased, in_place, with_exact, exact_optimal, worst_ratio);
}

TEST(RandomDags, WithoutAliasingEveryValueGetsDistinctBytesWhileLive) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    GraphBuilder b;
    test::build_random_dag(b, rng, 2 + static_cast<int>(rng() % 12));
    PlanOptions opt;
    opt.views = false;
    opt.in_place = false;
    auto p = plan(b.graph(), opt);
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    for (const auto& v : p->values) ASSERT_TRUE(v.alias_of.empty());
    ASSERT_TRUE(check_plan(*p).is_ok());
    ASSERT_EQ(test::replay(b.graph(), graph_order(b.graph()), *p), "");
  }
}

TEST(RandomDags, AliasingNeverRaisesTheLowerBound) {
  std::mt19937 rng(8);
  for (int iter = 0; iter < 300; ++iter) {
    GraphBuilder b;
    test::build_random_dag(b, rng, 2 + static_cast<int>(rng() % 16));
    PlanOptions none;
    none.views = none.in_place = false;
    auto with = plan(b.graph(), PlanOptions{});
    auto without = plan(b.graph(), none);
    ASSERT_TRUE(with.is_ok() && without.is_ok());
    EXPECT_LE(with->lower_bound, without->lower_bound) << "iteration " << iter;
  }
}

TEST(RandomDags, ReorderCostModelMatchesThePlannersLowerBound) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 500; ++iter) {
    GraphBuilder b;
    test::build_random_dag(b, rng, 2 + static_cast<int>(rng() % 20));
    const bool io = rng() % 2 == 0;
    const auto order = test::random_topological_order(b.graph(), rng);
    PlanOptions opt;
    opt.in_place = false;  // the ordering model does not know in-place reuse (it depends on order)
    opt.io_in_arena = io;
    auto p = plan(b.graph(), order, opt);
    auto peak = order_peak_bytes(b.graph(), order, {256, io});
    ASSERT_TRUE(p.is_ok() && peak.is_ok());
    EXPECT_EQ(*peak, p->lower_bound) << "iteration " << iter;
  }
}

TEST(RandomDags, ReorderingNeverIncreasesTheArena) {
  std::mt19937 rng(12);
  int lowered = 0, exact = 0;
  for (int iter = 0; iter < 600; ++iter) {
    GraphBuilder b;
    test::build_random_dag(b, rng, 2 + static_cast<int>(rng() % 30));
    const ir::Graph& g = b.graph();
    PlanOptions opt;
    opt.io_in_arena = rng() % 2 == 0;
    auto r = memory_aware_order(g, {opt.alignment, opt.io_in_arena});
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_LE(r->peak_bytes, r->original_peak_bytes);
    exact += r->method == "exact";
    // The order is a valid topological order: the planner accepts it and the replay holds.
    auto reordered = plan(g, r->order, opt);
    ASSERT_TRUE(reordered.is_ok()) << reordered.status().message();
    ASSERT_EQ(test::replay(g, r->order, *reordered), "");
    auto original = plan(g, opt);
    auto kept = plan_with_reorder(g, opt);
    ASSERT_TRUE(original.is_ok() && kept.is_ok());
    EXPECT_LE(kept->arena_bytes, original->arena_bytes);
    EXPECT_EQ(kept->arena_bytes, std::min(original->arena_bytes, reordered->arena_bytes));
    lowered += kept->arena_bytes < original->arena_bytes;
  }
  EXPECT_GT(lowered, 0);
  std::printf(
      "[ planner  ] reordering lowered the arena on %d of 600 random DAGs (%d ordered "
      "exactly)\n",
      lowered, exact);
}

// All topological orders of a tiny graph, for the exact ordering's oracle.
void all_orders(const ir::Graph& g, std::vector<const ir::Node*>& prefix, std::vector<bool>& used,
                const std::vector<const ir::Node*>& nodes,
                const std::function<void(const std::vector<const ir::Node*>&)>& visit) {
  if (prefix.size() == nodes.size()) return visit(prefix);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (used[i]) continue;
    bool ready = true;
    for (const ir::Value* v : nodes[i]->inputs())
      if (v != nullptr && v->producer() != nullptr)
        ready = ready && std::find(prefix.begin(), prefix.end(), v->producer()) != prefix.end();
    if (!ready) continue;
    used[i] = true;
    prefix.push_back(nodes[i]);
    all_orders(g, prefix, used, nodes, visit);
    prefix.pop_back();
    used[i] = false;
  }
}

TEST(RandomDags, ExactOrderingFindsTheLeastPeakOverAllOrders) {
  std::mt19937 rng(13);
  int improved = 0;
  for (int iter = 0; iter < 200; ++iter) {
    GraphBuilder b;
    test::build_random_dag(b, rng, 2 + static_cast<int>(rng() % 5));
    const ir::Graph& g = b.graph();
    if (g.num_nodes() > 8) continue;
    size_t best = SIZE_MAX;
    std::vector<const ir::Node*> prefix;
    const auto nodes = graph_order(g);
    std::vector<bool> used(nodes.size(), false);
    all_orders(g, prefix, used, nodes, [&](const std::vector<const ir::Node*>& order) {
      best = std::min(best, *order_peak_bytes(g, order));
    });
    auto r = memory_aware_order(g);
    ASSERT_TRUE(r.is_ok());
    EXPECT_TRUE(r->optimal);
    EXPECT_EQ(r->peak_bytes, best) << "iteration " << iter;
    improved += r->peak_bytes < r->original_peak_bytes;
  }
  EXPECT_GT(improved, 0);
}

}  // namespace
}  // namespace xopt::planner
