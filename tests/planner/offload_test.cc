// Parameter offload (planner/offload.h): a golden schedule on a small chain, the "does not apply"
// case, the refusal that says by how much a budget is short, check_offload refusing lying
// schedules, and a property test over random graphs and budgets that replays each schedule with
// random actual node and copy times (the executor's events, not the planner's prediction, decide
// when things run): no node reads a weight before its copy is complete, and no two weights hold
// the same staging bytes at the same time.
#include <gtest/gtest.h>

#include <random>

#include "planner/lifetimes.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "planner_test_util.h"

namespace xopt::planner {
namespace {

using test::chain;
using test::GraphBuilder;
constexpr size_t kMiB = size_t{1} << 20;

TEST(Offload, NothingOffloadedWhenEverythingFits) {
  auto c = chain({256, 256, 256});
  OffloadOptions o;
  o.budget = device_bytes_without_offload(c->b.graph(), c->plan);
  auto p = offload_plan(c->b.graph(), c->order, c->plan, o);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_TRUE(p->weights.empty());
  EXPECT_EQ(p->device_total, o.budget);
  EXPECT_EQ(p->resident_parameters, p->parameters);
  EXPECT_DOUBLE_EQ(p->predicted_ms, p->predicted_ms_resident);
}

// Weights of 1, 16, 8 and 2 MiB (w0 [256, 1024] ... w3 [512, 1024] floats), read at steps 0..3.
// A budget 9 MiB under the total. Largest first, each copied just before its reader: w1 (16 MiB)
// saves nothing (staging 16 MiB); w2 (8 MiB) goes into w1's bytes after w1's reader: 8 MiB saved;
// w3 (2 MiB) too: 10 MiB saved, it fits. Then prefetch: w1's copy moves to step 0 and w3's to step
// 2 (beside w2, still inside the 16 MiB), w2's cannot (w1 and w2 together need 24 MiB).
TEST(Offload, GoldenScheduleOnAChain) {
  auto c = chain({1024, 4096, 512, 1024});
  const ir::Graph& g = c->b.graph();
  std::vector<size_t> sizes;
  for (const ir::Value* v : g.initializers()) sizes.push_back(v->initializer()->nbytes());
  ASSERT_EQ(sizes, (std::vector<size_t>{1 * kMiB, 16 * kMiB, 8 * kMiB, 2 * kMiB}));
  const size_t all = device_bytes_without_offload(g, c->plan);
  OffloadOptions o;
  o.node_ms = {1.0, 1.0, 1.0, 1.0};
  o.device.h2d_bytes_per_ms = 8.0 * kMiB;  // w1: 2 ms, w2: 1 ms, w3: 0.25 ms
  o.budget = all - 9 * kMiB;
  auto p = offload_plan(g, c->order, c->plan, o);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_EQ(p->weights.size(), 3u);
  const std::vector<std::string> names = {p->weights[0].name, p->weights[1].name,
                                          p->weights[2].name};
  EXPECT_EQ(names, (std::vector<std::string>{"w1", "w2", "w3"}));
  const std::vector<int> prefetch = {p->weights[0].prefetch_step, p->weights[1].prefetch_step,
                                     p->weights[2].prefetch_step};
  EXPECT_EQ(prefetch, (std::vector<int>{0, 2, 2}));
  EXPECT_EQ(p->staging_bytes, 16 * kMiB);
  EXPECT_EQ(p->staging_lower_bound, 16 * kMiB);
  EXPECT_EQ(p->offloaded_bytes, 26 * kMiB);
  EXPECT_EQ(p->device_total, all - 10 * kMiB);
  EXPECT_TRUE(check_offload(*p).is_ok()) << check_offload(*p).message();
  // Copy w1 0-2 ms, step 0 0-1, step 1 2-3; w2 3-4, w3 4-4.25; step 2 4-5, step 3 5-6.
  EXPECT_DOUBLE_EQ(p->predicted_ms_resident, 4.0);
  EXPECT_DOUBLE_EQ(p->predicted_ms, 6.0);

  // Round trip through the model's metadata.
  write_offload(c->b.model(), *p);
  auto back = read_offload(c->b.model());
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ(offload_to_json(**back), offload_to_json(*p));
}

TEST(Offload, SaysByHowMuchABudgetIsShort) {
  auto c = chain({1024, 4096, 512, 1024});
  OffloadOptions o;
  o.budget = c->plan.arena_bytes;  // the activations alone, nothing for staging or weights
  auto p = offload_plan(c->b.graph(), c->order, c->plan, o);
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument);
  // Every weight offloaded, staging for the largest (16 MiB) remains, and a few KiB of I/O.
  EXPECT_NE(p.status().message().find("is 16.0 MiB short"), std::string::npos)
      << p.status().message();
}

TEST(Offload, CheckRefusesLyingSchedules) {
  auto c = chain({1024, 4096, 512, 1024});
  OffloadOptions o;
  o.budget = device_bytes_without_offload(c->b.graph(), c->plan) - 9 * kMiB;
  auto good = offload_plan(c->b.graph(), c->order, c->plan, o);
  ASSERT_TRUE(good.is_ok());
  ASSERT_GE(good->weights.size(), 2u);
  {
    OffloadPlan p = *good;  // two weights live together in the same bytes
    p.weights[1].prefetch_step = p.weights[0].prefetch_step;
    p.weights[0].last_use = p.weights[1].first_use;
    p.weights[1].offset = p.weights[0].offset;
    EXPECT_FALSE(check_offload(p).is_ok());
  }
  {
    OffloadPlan p = *good;  // a step past the plan
    p.weights.back().last_use = p.steps;
    EXPECT_NE(check_offload(p).message().find("out of order or range"), std::string::npos);
  }
  {
    OffloadPlan p = *good;  // prefetched after its first use
    p.weights[0].prefetch_step = p.weights[0].first_use + 1;
    EXPECT_FALSE(check_offload(p).is_ok());
  }
  {
    OffloadPlan p = *good;  // past the staging region
    p.weights[0].offset = p.staging_bytes;
    EXPECT_NE(check_offload(p).message().find("past the staging region"), std::string::npos);
  }
  {
    OffloadPlan p = *good;  // figures that do not add up
    p.device_total -= 256;
    EXPECT_FALSE(check_offload(p).is_ok());
  }
  auto lie = offload_from_json(R"({"format":"xopt.offload","version":1})");
  EXPECT_FALSE(lie.is_ok());
}

// A random DAG of MatMuls on [1, k] activations with weights of random widths, some weights read
// by two nodes, some below the offload threshold.
void random_weight_graph(GraphBuilder& b, std::mt19937& rng, int nodes) {
  std::vector<ir::Value*> acts = {b.input("x", {1, 64})};
  std::vector<ir::Value*> weights;
  for (int i = 0; i < nodes; ++i) {
    ir::Value* x = acts[rng() % acts.size()];
    const int64_t k = x->shape().static_dims()[1];
    ir::Value* w = nullptr;
    for (ir::Value* cand : weights)  // reuse a weight of the right height sometimes
      if (cand->initializer()->dims()[0] == k && rng() % 3 == 0) w = cand;
    if (w == nullptr) {
      const int64_t n = int64_t{64} << (rng() % 6);  // 16 KiB .. 512 KiB per 64 rows
      w = b.weight("w" + std::to_string(weights.size()), {k, n});
      weights.push_back(w);
    }
    const int64_t n = w->initializer()->dims()[1];
    acts.push_back(b.op("MatMul", {x, w}, "a" + std::to_string(i), {1, n}));
  }
  b.output(acts.back());
}

TEST(Offload, RandomGraphsAndBudgetsAreSafeUnderAnyTiming) {
  std::mt19937 rng(20261201);
  int scheduled = 0, refused = 0, moved_earlier = 0;
  for (int iter = 0; iter < 250; ++iter) {
    GraphBuilder b;
    random_weight_graph(b, rng, 3 + static_cast<int>(rng() % 25));
    const ir::Graph& g = b.graph();
    const auto order = test::random_topological_order(g, rng);
    auto mp = plan(g, order);
    ASSERT_TRUE(mp.is_ok()) << mp.status().message();
    const size_t all = device_bytes_without_offload(g, *mp);
    OffloadOptions o;
    o.min_weight_bytes = rng() % 2 ? 64 << 10 : 1;
    o.device.h2d_bytes_per_ms = static_cast<double>((1 + rng() % 64) << 20);
    if (rng() % 2)
      for (size_t s = 0; s < order.size(); ++s) o.node_ms.push_back(0.01 * (1 + rng() % 100));
    o.budget =
        static_cast<size_t>(static_cast<double>(all) * (0.2 + 0.8 * (rng() % 1000) / 1000.0));
    auto p = offload_plan(g, order, *mp, o);
    if (!p.is_ok()) {
      ++refused;
      ASSERT_EQ(p.status().code(), ErrorCode::kInvalidArgument) << p.status().message();
      EXPECT_NE(p.status().message().find(" short: "), std::string::npos);
      continue;
    }
    ++scheduled;
    ASSERT_TRUE(check_offload(*p).is_ok()) << check_offload(*p).message();
    ASSERT_LE(p->device_total, o.budget) << "iteration " << iter;
    ASSERT_EQ(p->steps, static_cast<int>(order.size()));
    // Every reader of an offloaded weight, from the graph itself.
    std::map<std::string, std::vector<int>> readers;
    for (size_t s = 0; s < order.size(); ++s)
      for (const ir::Value* v : order[s]->inputs())
        if (v != nullptr && v->is_constant()) readers[v->name()].push_back(static_cast<int>(s));
    for (const auto& w : p->weights) {
      ASSERT_FALSE(readers[w.name].empty());
      EXPECT_EQ(w.first_use, readers[w.name].front());
      EXPECT_EQ(w.last_use, readers[w.name].back());
      moved_earlier += w.prefetch_step < w.first_use;
    }
    // Replays with actual times unlike the prediction, with the executor's ordering rules: copies
    // in schedule order, each after step prefetch-1 completes; a weight's first reader after its
    // copy. Times are random, so only the events keep it safe.
    for (int trial = 0; trial < 3; ++trial) {
      const size_t n = order.size(), m = p->weights.size();
      std::vector<double> actual(n);
      for (double& t : actual) t = 0.001 * (rng() % 1000);
      OffloadPlan jittered = *p;
      for (auto& w : jittered.weights) w.copy_ms = 0.001 * (rng() % 2000);
      const Timeline t = simulate_offload(jittered, actual);
      for (size_t i = 0; i < m; ++i) {
        const auto& w = jittered.weights[i];
        for (int s : readers[w.name])
          ASSERT_GE(t.step_start[static_cast<size_t>(s)], t.copy_end[i])
              << w.name << " read at step " << s << " before its copy completed";
      }
      // Staging bytes: each weight holds its range from its copy's start to its last reader's
      // end; two that share bytes must not overlap in time.
      for (size_t i = 0; i < m; ++i)
        for (size_t j = i + 1; j < m; ++j) {
          const auto &a = jittered.weights[i], &c = jittered.weights[j];
          if (a.offset >= c.offset + c.size || c.offset >= a.offset + a.size) continue;
          const double a_end = t.step_end[static_cast<size_t>(a.last_use)];
          const double c_end = t.step_end[static_cast<size_t>(c.last_use)];
          const bool disjoint = a_end <= t.copy_start[j] || c_end <= t.copy_start[i];
          ASSERT_TRUE(disjoint) << a.name << " and " << c.name << " share staging bytes while "
                                << "both are live (iteration " << iter << ")";
        }
    }
  }
  EXPECT_GT(scheduled, 60);
  EXPECT_GT(refused, 10);
  EXPECT_GT(moved_earlier, 10);
  std::printf("offload property: %d schedules, %d budgets refused, %d copies moved earlier\n",
              scheduled, refused, moved_earlier);
}

}  // namespace
}  // namespace xopt::planner
